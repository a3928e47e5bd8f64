// Command crdversions adds the served versions of model/fleetapi to the KubeFleet CRDs that
// controller-gen wrote from prod/apis (which holds the stored version, v1beta1, only). Each
// other version gets a copy of the stored version's schema, printer columns and subresources,
// served but not stored, so the CRD needs no conversion (strategy None), as KubeFleet's own
// CRDs. CRDs of other groups are left as they are; a KubeFleet CRD whose kind the list lacks
// is an error, so the list and the types cannot drift apart.
//
// Usage: go run ./hack/crdversions config/crd/bases   (hack/generate.sh runs it)
package main
