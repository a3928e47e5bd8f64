package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is placement.kubernetes-fleet.io/v1beta1.
	GroupVersion = schema.GroupVersion{Group: "placement.kubernetes-fleet.io", Version: "v1beta1"}

	// SchemeBuilder registers the kinds of this group version with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers the kinds with the scheme at GroupVersion, with the meta types
// (ListOptions and the like) every group version serves.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &ClusterResourcePlacement{}, &ClusterResourcePlacementList{},
		&ClusterSchedulingPolicySnapshot{}, &ClusterSchedulingPolicySnapshotList{},
		&ClusterResourceSnapshot{}, &ClusterResourceSnapshotList{},
		&ClusterResourceBinding{}, &ClusterResourceBindingList{},
		&Work{}, &WorkList{},
		&ClusterResourceOverride{}, &ClusterResourceOverrideList{},
		&ClusterResourceOverrideSnapshot{}, &ClusterResourceOverrideSnapshotList{},
		&ResourceOverride{}, &ResourceOverrideList{},
		&ResourceOverrideSnapshot{}, &ResourceOverrideSnapshotList{},
		&ClusterStagedUpdateStrategy{}, &ClusterStagedUpdateStrategyList{},
		&ClusterStagedUpdateRun{}, &ClusterStagedUpdateRunList{},
		&ClusterApprovalRequest{}, &ClusterApprovalRequestList{},
		&ClusterResourcePlacementEviction{}, &ClusterResourcePlacementEvictionList{},
		&ClusterResourcePlacementDisruptionBudget{}, &ClusterResourcePlacementDisruptionBudgetList{},
		&ClusterResourceEnvelope{}, &ClusterResourceEnvelopeList{},
		&ResourceEnvelope{}, &ResourceEnvelopeList{},
		&ClusterResourcePlacementStatus{}, &ClusterResourcePlacementStatusList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
