# fleetsim build entry points. `make test` is what CI runs (see .ci/run and README.md).
GO ?= go
PKGS := ./...
# The slowest test packages (real API servers, systemd), listed first so that go test
# builds and starts them first: the longest jobs first keep both of -p's slots busy to the end.
SLOW_PKGS := ./prod/difftest/ ./prod/hub/ ./prod/difftest/units/ ./cmd/fleet/ ./agentk8s/member/

.PHONY: all build image test test-short difftest-real bench lint fmt vet tidy

all: lint test build

# Every binary prints VERSION, COMMIT and DATE for --version (internal/version); without
# these ldflags a binary falls back to what the Go toolchain recorded.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/fleetsim/fleetsim/internal/version
LDFLAGS := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT) -X $(VERSION_PKG).date=$(DATE)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

# The kubectl plugin alone (copy bin/kubectl-fleet onto $PATH: `kubectl fleet ...`).
.PHONY: kubectl-fleet release charts
kubectl-fleet:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/kubectl-fleet ./cmd/kubectl-fleet

# A release in dist/$(VERSION)/: static binaries of every command for linux/amd64 and
# linux/arm64 (fleet, fleetctl, fleetsim, kubectl-fleet), one tarball per platform, the hub
# image and the fuzz image per architecture as docker-loadable tarballs (built without a
# container engine by hack/image), the Helm charts packaged with the release's version
# (fleet-hub-<v>.tgz, fleet-member-<v>.tgz, by hack/chartpkg), and SHA256SUMS.
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64
RELEASE_DIR = dist/$(VERSION)
release:
	@rm -rf $(RELEASE_DIR) && mkdir -p $(RELEASE_DIR)
	@set -e; for p in $(RELEASE_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; d=$(RELEASE_DIR)/fleetsim-$(VERSION)-$$os-$$arch; \
		mkdir -p $$d; \
		for c in fleet fleetctl fleetsim kubectl-fleet; do \
			echo "release: $$c $$os/$$arch"; \
			CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $$d/$$c ./cmd/$$c; \
		done; \
		$(GO) run ./hack/image --binary $$d/fleet --arch $$arch --tag fleetsim/fleet:$(VERSION)-$$arch \
			--out $(RELEASE_DIR)/fleet-image-$(VERSION)-$$arch.tar >/dev/null; \
		$(GO) run ./hack/image --binary $$d/fleetsim --name fleetsim --cmd "" --dir scenarios --dir-at scenarios --arch $$arch \
			--tag fleetsim/fleetsim:$(VERSION)-$$arch --out $(RELEASE_DIR)/fleetsim-fuzz-image-$(VERSION)-$$arch.tar >/dev/null; \
		cp README.md CHANGELOG.md $$d/; \
		tar -C $(RELEASE_DIR) -czf $$d.tar.gz $$(basename $$d) && rm -rf $$d; \
	done
	$(GO) run ./hack/chartpkg --version $(VERSION) --out $(RELEASE_DIR) charts/fleet-hub charts/fleet-member
	cd $(RELEASE_DIR) && sha256sum *.tar.gz *.tar *.tgz > SHA256SUMS
	@echo "release: $(RELEASE_DIR)"; ls -l $(RELEASE_DIR)

# The Helm charts: their crds/ copied from config/ (charts/charts_test.go fails when they
# differ) and packaged into bin/charts with this tree's version.
charts:
	rm -f charts/fleet-hub/crds/*.yaml charts/fleet-member/crds/*.yaml
	cp config/crd/bases/*.yaml charts/fleet-hub/crds/
	cp config/member/crd/*.yaml charts/fleet-member/crds/
	$(GO) run ./hack/chartpkg --version $(VERSION) --out bin/charts charts/fleet-hub charts/fleet-member

# The hub's container image, built without a container engine: a static fleet binary on an
# empty base, as bin/fleet-image.tar for `docker load` or `kind load image-archive`. IMAGE
# names it; config/default runs fleetsim/fleet:dev (`kustomize edit set image` for others).
IMAGE ?= fleetsim/fleet:dev
image:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/fleet ./cmd/fleet
	$(GO) run ./hack/image --binary bin/fleet --tag $(IMAGE) --out bin/fleet-image.tar

# The image config/fuzz runs: a static fleetsim binary with the scenario library under
# /scenarios, as bin/fleetsim-fuzz-image.tar (FUZZ_IMAGE names it).
FUZZ_IMAGE ?= fleetsim/fleetsim:dev
.PHONY: fuzz-image
fuzz-image:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/fleetsim ./cmd/fleetsim
	$(GO) run ./hack/image --binary bin/fleetsim --name fleetsim --cmd "" --dir scenarios --dir-at scenarios \
		--tag $(FUZZ_IMAGE) --out bin/fleetsim-fuzz-image.tar

# The full test suite: unit, property, scenario and integration tests, with the race detector
# off to fit two cores. Integration tests need a real kube-apiserver and etcd:
# hack/test-assets.sh builds or installs them into a version-keyed cache (~/.cache/fleetsim)
# and prints their directory. FLEETSIM_REQUIRE_SERVERS makes a test without its server fail
# instead of skip.
#
# To fit the CI budget on two cores: the differential test (the long pole; its fleets mostly
# wait on their servers, not on the CPU) plays three fleets at a time (-parallel 3; no other
# package has parallel tests), and the fuzz campaign runs beside the tests, its output printed
# after theirs. The differential test alone takes 35-50 minutes on a loaded two-core machine,
# so the per-package timeout (85m) stays under CI's 90-minute limit rather than the 45-minute goal.
test:
	@assets=$$(hack/test-assets.sh) || { echo "make test: hack/test-assets.sh failed" >&2; exit 1; }; \
	fuzzlog=$$(mktemp) && trap 'rm -f "$$fuzzlog"' EXIT; \
	$(MAKE) --no-print-directory fuzz-ci > "$$fuzzlog" 2>&1 & fuzz=$$!; \
	KUBEBUILDER_ASSETS="$$assets" FLEETSIM_REQUIRE_SERVERS=1 $(GO) test -count=1 -timeout 85m -parallel 3 $(SLOW_PKGS) $(PKGS); rc=$$?; \
	wait $$fuzz; fuzzrc=$$?; \
	echo "== make fuzz-ci (ran beside the tests): exit $$fuzzrc =="; cat "$$fuzzlog"; \
	[ $$rc -eq 0 ] && [ $$fuzzrc -eq 0 ]

test-short:
	$(GO) test -short -count=1 $(PKGS)

# The differential test with real `fleet member` agents on member API servers for every
# library scenario (make test plays four with real agents, prod/difftest's withRealAgents:
# placement types, staged runs, eviction, apply strategies; the rest with stand-ins). Its last result is
# in reports/difftest.md; -v keeps each scenario's time.
difftest-real:
	@assets=$$(hack/test-assets.sh) || { echo "make difftest-real: hack/test-assets.sh failed" >&2; exit 1; }; \
	KUBEBUILDER_ASSETS="$$assets" FLEETSIM_REQUIRE_SERVERS=1 FLEETSIM_DIFFTEST_REAL_ALL=1 \
		$(GO) test -count=1 -timeout 120m -v -run 'TestSimulatorAndRealAgentsAgree' ./prod/difftest/

# Benchmarks run one core (-cpu 1) so the figures in reports/benchmarks.md are comparable.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 $(PKGS)

# lint: gofmt, go vet, the import arrows of docs/architecture.md (hack/layers) and
# staticcheck at a pinned version (fetched from the Go module proxy on first use).
STATICCHECK_VERSION ?= v0.8.2
lint: vet layers staticcheck
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: layers staticcheck
layers:
	$(GO) run ./hack/layers

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w .

tidy:
	$(GO) mod tidy

# Regenerate apis deepcopy code and the CRDs in config/crd/bases with the pinned
# controller-gen (see hack/generate.sh); commit the results.
# CI's fuzz campaign (issues 13, 36): random fault schedules over the library scenarios
# with a fixed seed, every invariant checked after every event; any violation fails, and
# the minimal failing scenario is written to $(FUZZ_OUT) for `fleetsim run`. The budget is
# what fits the time the 10,000-run campaign took before the invariants were checked
# incrementally, raised by the CPU per run each round saved on a loaded machine
# (reports/fuzz.md). FUZZ_RUNS and FUZZ_SEED override the budget and seed;
# `fleetsim fuzz --time` runs longer campaigns by wall time. It also proves the mutation
# machinery: a small campaign kills a handful of planted bugs (fleetsim_mutants build).
FUZZ_RUNS ?= 15000
FUZZ_SEED ?= 1
FUZZ_OUT ?= $${TMPDIR:-/tmp}/fleetsim-fuzz
.PHONY: fuzz-ci fuzz-mutants
fuzz-ci:
	$(GO) test -tags fleetsim_mutants -count=1 -run 'TestMutantsKilledBySmallCampaign|TestCatalogueMatchesSource' ./scenarios/fuzz/ ./model/mutant/
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && $(GO) build -o $$d/fleetsim ./cmd/fleetsim && \
	$$d/fleetsim fuzz scenarios/*.yaml --runs $(FUZZ_RUNS) --seed $(FUZZ_SEED) --out $(FUZZ_OUT)

# Mutation score of the CI campaign (issue 36): the campaign of fuzz-ci (same seed and
# budget) once per planted bug of model/mutant, in a build with the fleetsim_mutants tag
# (production builds cannot reach a mutant). Rewrites the score table in reports/fuzz.md
# and writes each kill's shrunk scenario to reports/fuzz-mutants/. MUTANTS=a,b runs some.
MUTANTS ?=
fuzz-mutants:
	$(GO) run -tags fleetsim_mutants ./hack/fuzzmutants --runs $(FUZZ_RUNS) --seed $(FUZZ_SEED) \
		--mutants '$(MUTANTS)' --report reports/fuzz.md --out reports/fuzz-mutants scenarios/*.yaml

.PHONY: generate
generate:
	hack/generate.sh

# Fail when the committed deepcopy code or CRDs differ from what the API types generate.
.PHONY: verify-generated
verify-generated: generate
	@out=$$(git status --porcelain -- config/crd 'apis/*zz_generated*'); if [ -n "$$out" ]; then \
		echo "generated files are stale; run make generate and commit:"; echo "$$out"; exit 1; fi
