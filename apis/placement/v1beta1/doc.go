// Package v1beta1 owns the production hub's placement.kubernetes-fleet.io/v1beta1 API: the
// KubeFleet placement kinds as Go types, field for field as KubeFleet's, so KubeFleet
// manifests are accepted unchanged. That is ClusterResourcePlacement and what the hub derives
// from it (ClusterSchedulingPolicySnapshot, ClusterResourceSnapshot, ClusterResourceBinding,
// Work), the overrides and their snapshots (ClusterResourceOverride, ResourceOverride and
// their Snapshot kinds), staged updates (ClusterStagedUpdateStrategy, ClusterStagedUpdateRun,
// ClusterApprovalRequest), and evictions (ClusterResourcePlacementEviction,
// ClusterResourcePlacementDisruptionBudget), plus the well-known label, annotation and
// finalizer names these objects carry.
//
// The kubebuilder markers on the types are the API server's validation: enums, ranges,
// defaults and the CEL rules for mutually exclusive and immutable fields, so a bad object is
// rejected with a clear message before any controller sees it. They also give the printer
// columns and short names of `kubectl get`. hack/generate.sh turns them into
// zz_generated.deepcopy.go and the CRDs under config/crd/bases.
//
// Leaf vocabulary (placement types, binding states, operators, ...) is the model's own string
// types, so no value needs translating. The structures are the API's own, because the
// validation markers must sit on the fields; converting them to and from the model lives in
// prod/convert, decisions in model/.
//
// +kubebuilder:object:generate=true
// +groupName=placement.kubernetes-fleet.io
package v1beta1
