// Package apis is the root of the production hub's API: the KubeFleet kinds as Go types in
// cluster/v1beta1 (cluster.kubernetes-fleet.io) and placement/v1beta1
// (placement.kubernetes-fleet.io), from which hack/generate.sh (make generate) derives the
// deepcopy code and the CRDs committed under config/crd/bases. This package's tests check
// those CRDs: their names, scopes, short names and printer columns, that kube-apiserver would
// accept them, that it accepts the KubeFleet documentation's samples (testdata/kubefleet) unchanged,
// and that it refuses bad objects with the messages of the CEL rules, in process (apitest)
// and, when KUBEBUILDER_ASSETS provides one, on a real kube-apiserver. Every KubeFleet kind
// is served at each version KubeFleet serves it at (apis/kinds; hack/crdversions writes
// them), all with the stored v1beta1 schema: TestServedVersionsRoundTrip creates and reads
// an object at each. TestProjectManifests applies every fleet manifest of the scenario
// library and config/ as `kubectl apply --server-side` would, and TestDocumentationManifests
// does the same for every fleet manifest of the KubeFleet documentation when
// $FLEETSIM_KUBEFLEET_DOCS names a directory of it as text (the repository carries no copy).
package apis
