#!/usr/bin/env bash
# Regenerate the code and manifests derived from the API types in apis/:
#
#   - apis/<group>/v1beta1/zz_generated.deepcopy.go (DeepCopy, DeepCopyInto, DeepCopyObject)
#   - config/crd/bases/<group>_<plural>.yaml             (one CustomResourceDefinition per kind;
#     hack/crdversions adds the versions KubeFleet serves besides the stored v1beta1)
#
# controller-gen is pinned: v0.23.0 is the release that matches k8s.io/* v0.37 and
# controller-runtime v0.25. `go run pkg@version` builds it outside this module, so go.mod is
# untouched; the first run needs the Go module proxy (about a minute), later runs use the
# module and build caches.
#
# Usage: hack/generate.sh   (or: make generate). Commit the results.
set -Eeuo pipefail

CONTROLLER_GEN_VERSION=v0.23.0
CONTROLLER_GEN=(go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}")

cd "$(dirname "${BASH_SOURCE[0]}")/.."

CRD_DIR=config/crd/bases
mkdir -p "$CRD_DIR"
# Start from an empty directory so a removed kind leaves no stale CRD behind.
rm -f "$CRD_DIR"/*.yaml

"${CONTROLLER_GEN[@]}" \
	object \
	crd \
	paths=./apis/... \
	output:crd:artifacts:config="$CRD_DIR"

# Serve every version KubeFleet serves (apis/kinds), each with the stored schema.
go run ./hack/crdversions "$CRD_DIR"

gofmt -w apis
echo "generate: wrote apis/*/v1beta1/zz_generated.deepcopy.go and $(ls "$CRD_DIR" | wc -l) CRDs in $CRD_DIR" >&2
