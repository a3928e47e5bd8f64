package convert

import (
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
	"slices"
	"strconv"
)

// BindingToModel reads a ClusterResourceBinding: name, placement (parent-CRP label), previous
// state (previous-binding-state annotation), whether it is being deleted, generation, spec,
// conditions and failed, drifted and diffed placements. The model does not carry the
// envelope type of a failed, drifted or diffed resource, the times of a failed placement's condition, or
// server metadata (finalizers, foreign labels and annotations); BindingFromModel keeps them
// from its base.
func BindingToModel(b *v1beta1.ClusterResourceBinding) *placement.Binding {
	return &placement.Binding{
		Name:                             b.Name,
		Placement:                        b.Labels[v1beta1.CRPTrackingLabel],
		TargetCluster:                    b.Spec.TargetCluster,
		State:                            b.Spec.State,
		PreviousState:                    placement.BindingState(b.Annotations[v1beta1.PreviousBindingStateAnnotation]),
		SchedulingPolicySnapshotName:     b.Spec.SchedulingPolicySnapshotName,
		ResourceSnapshotName:             b.Spec.ResourceSnapshotName,
		ClusterDecision:                  clusterDecisionToModel(b.Spec.ClusterDecision),
		Deleting:                         b.DeletionTimestamp != nil,
		Generation:                       bindingGeneration(b),
		ClusterResourceOverrideSnapshots: slices.Clone(b.Spec.ClusterResourceOverrideSnapshots),
		ResourceOverrideSnapshots:        mapSlice(b.Spec.ResourceOverrideSnapshots, namespacedNameToModel),
		ApplyStrategy:                    ApplyStrategyToModel(b.Spec.ApplyStrategy),
		Conditions:                       ConditionsToModel(b.Status.Conditions),
		FailedPlacements:                 mapSlice(b.Status.FailedPlacements, failedPlacementToModel),
		DriftedPlacements:                mapSlice(b.Status.DriftedPlacements, driftedPlacementToModel),
		DiffedPlacements:                 mapSlice(b.Status.DiffedPlacements, diffedPlacementToModel),
	}
}

// BindingFromModel writes a binding, merged into base (nil for a new binding). The
// parent-CRP label is set, the previous-binding-state annotation set or removed; a new
// binding gets the work-cleanup finalizer, as KubeFleet's scheduler creates it.
func BindingFromModel(b *placement.Binding, base *v1beta1.ClusterResourceBinding) *v1beta1.ClusterResourceBinding {
	out := &v1beta1.ClusterResourceBinding{}
	if base != nil {
		out = base.DeepCopy()
	} else {
		out.Finalizers = []string{v1beta1.WorkCleanupFinalizer}
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), "ClusterResourceBinding"
	out.Name = b.Name
	// The API server numbers its generations itself; the decisions' count goes in an
	// annotation wherever the two can differ (a binding of this hub, or once they do).
	_, annotated := out.Annotations[v1beta1.BindingGenerationAnnotation]
	if base == nil || annotated || b.Generation != base.Generation {
		setIntAnnotation(&out.ObjectMeta, v1beta1.BindingGenerationAnnotation, b.Generation)
	}
	if base == nil {
		out.Generation = b.Generation
	}
	out.DeletionTimestamp = deletionTimestamp(b.Deleting, out.DeletionTimestamp)
	setLabel(&out.ObjectMeta, v1beta1.CRPTrackingLabel, b.Placement)
	if b.PreviousState != "" {
		setAnnotation(&out.ObjectMeta, v1beta1.PreviousBindingStateAnnotation, string(b.PreviousState))
	} else {
		removeAnnotation(&out.ObjectMeta, v1beta1.PreviousBindingStateAnnotation)
	}
	out.Spec = v1beta1.ResourceBindingSpec{
		State:                            b.State,
		ResourceSnapshotName:             b.ResourceSnapshotName,
		ResourceOverrideSnapshots:        mapSlice(b.ResourceOverrideSnapshots, namespacedNameFromModel),
		ClusterResourceOverrideSnapshots: slices.Clone(b.ClusterResourceOverrideSnapshots),
		SchedulingPolicySnapshotName:     b.SchedulingPolicySnapshotName,
		TargetCluster:                    b.TargetCluster,
		ClusterDecision:                  keepOr(&out.Spec.ClusterDecision, b.ClusterDecision, clusterDecisionToModel, clusterDecisionFromModel),
		ApplyStrategy:                    ApplyStrategyFromModel(b.ApplyStrategy),
	}
	out.Status.Conditions = ConditionsFromModel(b.Conditions)
	out.Status.FailedPlacements = failedPlacementsFromModel(b.FailedPlacements, out.Status.Conditions, out.Status.FailedPlacements)
	out.Status.DriftedPlacements = driftedPlacementsFromModel(b.DriftedPlacements, out.Status.DriftedPlacements)
	out.Status.DiffedPlacements = diffedPlacementsFromModel(b.DiffedPlacements, out.Status.DiffedPlacements)
	return out
}

// bindingGeneration is the decisions' count of a binding's generations: the annotation when
// the hub wrote one, else the API server's.
func bindingGeneration(b *v1beta1.ClusterResourceBinding) int64 {
	if g, err := strconv.ParseInt(b.Annotations[v1beta1.BindingGenerationAnnotation], 10, 64); err == nil {
		return g
	}
	return b.Generation
}
