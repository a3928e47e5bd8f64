package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is placement.kubernetes-fleet.io/v1beta1.
	GroupVersion = schema.GroupVersion{Group: "placement.kubernetes-fleet.io", Version: "v1beta1"}

	// SchemeBuilder registers the kinds of this group version with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(
		&ClusterResourcePlacement{}, &ClusterResourcePlacementList{},
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
		&ClusterResourcePlacementStatus{}, &ClusterResourcePlacementStatusList{},
	)
}
