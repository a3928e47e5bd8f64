# fleetsim build entry points. `make test` is what CI runs (see .ci/run and README.md).
GO ?= go
PKGS := ./...

.PHONY: all build test test-short bench lint fmt vet tidy

all: lint test build

build:
	$(GO) build -o bin/ ./cmd/...

# The full test suite: unit, property and scenario tests, with the race detector off to fit
# two cores; determinism tests run their own GOMAXPROCS variants.
test:
	$(GO) test -count=1 $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

# Benchmarks run one core (-cpu 1) so the figures in reports/benchmarks.md are comparable.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 $(PKGS)

lint: vet
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w .

tidy:
	$(GO) mod tidy
