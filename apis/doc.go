// Package apis is the root of the production hub's API: the KubeFleet kinds as Go types in
// cluster/v1beta1 (cluster.kubernetes-fleet.io) and placement/v1beta1
// (placement.kubernetes-fleet.io), from which hack/generate.sh (make generate) derives the
// deepcopy code and the CRDs committed under config/crd/bases. This package's tests check
// those CRDs: their names, scopes, short names and printer columns, that kube-apiserver would
// accept them, that it accepts the seed's KubeFleet manifests (testdata/kubefleet) unchanged,
// and that it refuses bad objects with the messages of the CEL rules, in process (apitest)
// and, when KUBEBUILDER_ASSETS provides one, on a real kube-apiserver. Every KubeFleet kind
// is served at each version KubeFleet serves it at (model/fleetapi; hack/crdversions writes
// them), all with the stored v1beta1 schema: TestServedVersionsRoundTrip creates and reads
// an object at each, and TestDocumentationManifests applies every fleet manifest of the
// KubeFleet documentation (../shared/seeds) as `kubectl apply --server-side` would.
package apis
