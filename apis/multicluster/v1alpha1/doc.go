// Package v1alpha1 is the multicluster.x-k8s.io/v1alpha1 API group the hub writes for
// other multi-cluster tools: ClusterProfile, the Kubernetes SIG-Multicluster cluster
// inventory kind (KEP 4322). The hub publishes one ClusterProfile per MemberCluster, in the
// fleet-system namespace, as KubeFleet does; what a profile says is decided once, in
// model/clusterprofile. The types are written from the API's documented fields (spec
// displayName and clusterManager, status conditions, version and properties); the CRD in
// config/crd/bases is generated from them (make generate).
//
// +kubebuilder:object:generate=true
// +groupName=multicluster.x-k8s.io
package v1alpha1
