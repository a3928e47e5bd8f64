// Package kinds lists the KubeFleet API this project serves: every kind of the
// cluster.kubernetes-fleet.io and placement.kubernetes-fleet.io groups, and the versions
// KubeFleet serves each kind at. The production hub's CRDs (hack/crdversions writes the
// served versions into config/crd/bases) and the scenario parser read the same list, so a
// manifest is accepted at the same versions by both. Every served version has the schema of
// the stored one, v1beta1, as in KubeFleet, so no conversion is needed.
package kinds
