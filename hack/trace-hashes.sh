#!/usr/bin/env bash
# Print the trace hash of every library scenario under seeds 1 and 7, one line each
# ("FILE SEED HASH"), from a fleetsim built from this tree. A change that must not move the
# simulator (a refactoring) leaves this output identical: run it before and after and diff.
#
#   hack/trace-hashes.sh > /tmp/before.txt; ...; hack/trace-hashes.sh | diff /tmp/before.txt -
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/fleetsim" ./cmd/fleetsim
for seed in 1 7; do
	for f in scenarios/*.yaml; do
		hash=$("$bin/fleetsim" run "$f" --seed "$seed" -o json 2>/dev/null | sed -n 's/^ *"traceHash": "\([0-9a-f]*\)".*/\1/p') || true
		echo "$f $seed ${hash:-none}"
	done
done
