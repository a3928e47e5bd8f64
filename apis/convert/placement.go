package convert

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"slices"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/status"
)

// PlacementToModel reads a ClusterResourcePlacement into the hub's view: the placement
// (metadata and spec), its generation, whether it is being deleted, and its status. The
// rest of hub.Placement (snapshots, scheduling results, selected resources) lives in other
// objects: see PolicySnapshotToModel, SchedulingToModel and ResourceSnapshotToModel.
//
// The model's status does not carry the envelope type of a resource, or the times of a failed placement's condition; PlacementFromModel keeps them
// from its base.
func PlacementToModel(crp *v1beta1.ClusterResourcePlacement) *hub.Placement {
	return &hub.Placement{
		CRP: placement.ClusterResourcePlacement{
			TypeMeta:   crp.TypeMeta,
			ObjectMeta: *crp.ObjectMeta.DeepCopy(),
			Spec:       PlacementSpecToModel(crp.Spec),
		},
		Generation: crp.Generation,
		Deleting:   crp.DeletionTimestamp != nil,
		Status:     PlacementStatusToModel(crp.Status),
	}
}

// PlacementFromModel writes the hub's view of a placement as a ClusterResourcePlacement.
// Metadata and spec come from the model's copy of the object (with Generation and Deleting
// applied); the status is merged into base's as PlacementStatusFromModel does.
func PlacementFromModel(p *hub.Placement, base *v1beta1.ClusterResourcePlacement) *v1beta1.ClusterResourcePlacement {
	out := &v1beta1.ClusterResourcePlacement{ObjectMeta: *p.CRP.ObjectMeta.DeepCopy()}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), placement.KindPlacement
	out.Generation = p.Generation
	out.DeletionTimestamp = deletionTimestamp(p.Deleting, out.DeletionTimestamp)
	var baseSpec *v1beta1.ClusterResourcePlacementSpec
	var baseStatus v1beta1.PlacementStatus
	if base != nil {
		baseSpec, baseStatus = &base.Spec, base.Status
	}
	out.Spec = keepOr(baseSpec, p.CRP.Spec, PlacementSpecToModel, PlacementSpecFromModel)
	out.Status = PlacementStatusFromModel(p.Status, baseStatus)
	return out
}

// PlacementSpecToModel converts a placement's spec; nothing is lost.
func PlacementSpecToModel(s v1beta1.ClusterResourcePlacementSpec) placement.PlacementSpec {
	return placement.PlacementSpec{
		ResourceSelectors:    mapSlice(s.ResourceSelectors, resourceSelectorToModel),
		Policy:               PolicyToModel(s.Policy),
		Strategy:             strategyToModel(s.Strategy),
		RevisionHistoryLimit: copyPtr(s.RevisionHistoryLimit),
		StatusReportingScope: s.StatusReportingScope,
	}
}

// PlacementSpecFromModel converts a placement's spec; nothing is lost.
func PlacementSpecFromModel(s placement.PlacementSpec) v1beta1.ClusterResourcePlacementSpec {
	return v1beta1.ClusterResourcePlacementSpec{
		ResourceSelectors:    mapSlice(s.ResourceSelectors, resourceSelectorFromModel),
		Policy:               PolicyFromModel(s.Policy),
		Strategy:             strategyFromModel(s.Strategy),
		RevisionHistoryLimit: copyPtr(s.RevisionHistoryLimit),
		StatusReportingScope: s.StatusReportingScope,
	}
}

func resourceSelectorToModel(s v1beta1.ClusterResourceSelector) placement.ResourceSelector {
	return placement.ResourceSelector{Group: s.Group, Version: s.Version, Kind: s.Kind, Name: s.Name, LabelSelector: s.LabelSelector.DeepCopy(), SelectionScope: s.SelectionScope}
}

func resourceSelectorFromModel(s placement.ResourceSelector) v1beta1.ClusterResourceSelector {
	return v1beta1.ClusterResourceSelector{Group: s.Group, Version: s.Version, Kind: s.Kind, Name: s.Name, LabelSelector: s.LabelSelector.DeepCopy(), SelectionScope: s.SelectionScope}
}

// PolicyToModel converts a placement policy; nothing is lost.
func PolicyToModel(p *v1beta1.PlacementPolicy) *placement.PlacementPolicy {
	if p == nil {
		return nil
	}
	return &placement.PlacementPolicy{
		PlacementType:             p.PlacementType,
		ClusterNames:              slices.Clone(p.ClusterNames),
		NumberOfClusters:          copyPtr(p.NumberOfClusters),
		Affinity:                  affinityToModel(p.Affinity),
		TopologySpreadConstraints: mapSlice(p.TopologySpreadConstraints, topologyToModel),
		Tolerations:               mapSlice(p.Tolerations, tolerationToModel),
	}
}

// PolicyFromModel converts a placement policy; nothing is lost.
func PolicyFromModel(p *placement.PlacementPolicy) *v1beta1.PlacementPolicy {
	if p == nil {
		return nil
	}
	return &v1beta1.PlacementPolicy{
		PlacementType:             p.PlacementType,
		ClusterNames:              slices.Clone(p.ClusterNames),
		NumberOfClusters:          copyPtr(p.NumberOfClusters),
		Affinity:                  affinityFromModel(p.Affinity),
		TopologySpreadConstraints: mapSlice(p.TopologySpreadConstraints, topologyFromModel),
		Tolerations:               mapSlice(p.Tolerations, tolerationFromModel),
	}
}

func affinityToModel(a *v1beta1.Affinity) *placement.Affinity {
	if a == nil {
		return nil
	}
	out := &placement.Affinity{}
	if ca := a.ClusterAffinity; ca != nil {
		out.ClusterAffinity = &placement.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: clusterSelectorToModel(ca.RequiredDuringSchedulingIgnoredDuringExecution),
			PreferredDuringSchedulingIgnoredDuringExecution: mapSlice(ca.PreferredDuringSchedulingIgnoredDuringExecution, func(p v1beta1.PreferredClusterSelector) placement.PreferredClusterSelector {
				return placement.PreferredClusterSelector{Weight: p.Weight, Preference: termToModel(p.Preference)}
			}),
		}
	}
	return out
}

func affinityFromModel(a *placement.Affinity) *v1beta1.Affinity {
	if a == nil {
		return nil
	}
	out := &v1beta1.Affinity{}
	if ca := a.ClusterAffinity; ca != nil {
		out.ClusterAffinity = &v1beta1.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: clusterSelectorFromModel(ca.RequiredDuringSchedulingIgnoredDuringExecution),
			PreferredDuringSchedulingIgnoredDuringExecution: mapSlice(ca.PreferredDuringSchedulingIgnoredDuringExecution, func(p placement.PreferredClusterSelector) v1beta1.PreferredClusterSelector {
				return v1beta1.PreferredClusterSelector{Weight: p.Weight, Preference: termFromModel(p.Preference)}
			}),
		}
	}
	return out
}

// clusterSelectorToModel converts a cluster selector; nil (selects nothing, in an override)
// and no terms (selects everything) stay distinct.
func clusterSelectorToModel(s *v1beta1.ClusterSelector) *placement.ClusterSelector {
	if s == nil {
		return nil
	}
	return &placement.ClusterSelector{ClusterSelectorTerms: mapSlice(s.ClusterSelectorTerms, termToModel)}
}

func clusterSelectorFromModel(s *placement.ClusterSelector) *v1beta1.ClusterSelector {
	if s == nil {
		return nil
	}
	return &v1beta1.ClusterSelector{ClusterSelectorTerms: mapSlice(s.ClusterSelectorTerms, termFromModel)}
}

func termToModel(t v1beta1.ClusterSelectorTerm) placement.ClusterSelectorTerm {
	out := placement.ClusterSelectorTerm{LabelSelector: t.LabelSelector.DeepCopy()}
	if ps := t.PropertySelector; ps != nil {
		out.PropertySelector = &placement.PropertySelector{MatchExpressions: mapSlice(ps.MatchExpressions, func(r v1beta1.PropertySelectorRequirement) placement.PropertySelectorRequirement {
			return placement.PropertySelectorRequirement{Name: r.Name, Operator: r.Operator, Values: slices.Clone(r.Values)}
		})}
	}
	if s := t.PropertySorter; s != nil {
		out.PropertySorter = &placement.PropertySorter{Name: s.Name, SortOrder: s.SortOrder}
	}
	return out
}

func termFromModel(t placement.ClusterSelectorTerm) v1beta1.ClusterSelectorTerm {
	out := v1beta1.ClusterSelectorTerm{LabelSelector: t.LabelSelector.DeepCopy()}
	if ps := t.PropertySelector; ps != nil {
		out.PropertySelector = &v1beta1.PropertySelector{MatchExpressions: mapSlice(ps.MatchExpressions, func(r placement.PropertySelectorRequirement) v1beta1.PropertySelectorRequirement {
			return v1beta1.PropertySelectorRequirement{Name: r.Name, Operator: r.Operator, Values: slices.Clone(r.Values)}
		})}
	}
	if s := t.PropertySorter; s != nil {
		out.PropertySorter = &v1beta1.PropertySorter{Name: s.Name, SortOrder: s.SortOrder}
	}
	return out
}

func topologyToModel(c v1beta1.TopologySpreadConstraint) placement.TopologySpreadConstraint {
	return placement.TopologySpreadConstraint{MaxSkew: copyPtr(c.MaxSkew), TopologyKey: c.TopologyKey, WhenUnsatisfiable: c.WhenUnsatisfiable}
}

func topologyFromModel(c placement.TopologySpreadConstraint) v1beta1.TopologySpreadConstraint {
	return v1beta1.TopologySpreadConstraint{MaxSkew: copyPtr(c.MaxSkew), TopologyKey: c.TopologyKey, WhenUnsatisfiable: c.WhenUnsatisfiable}
}

func tolerationToModel(t v1beta1.Toleration) placement.Toleration {
	return placement.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
}

func tolerationFromModel(t placement.Toleration) v1beta1.Toleration {
	return v1beta1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
}

func strategyToModel(s v1beta1.RolloutStrategy) placement.RolloutStrategy {
	out := placement.RolloutStrategy{Type: s.Type, ApplyStrategy: ApplyStrategyToModel(s.ApplyStrategy)}
	if d := s.DeleteStrategy; d != nil {
		out.DeleteStrategy = &placement.DeleteStrategy{PropagationPolicy: d.PropagationPolicy}
	}
	out.ReportBackStrategy = ReportBackToModel(s.ReportBackStrategy)
	if r := s.RollingUpdate; r != nil {
		out.RollingUpdate = &placement.RollingUpdateConfig{
			MaxUnavailable:           copyPtr(r.MaxUnavailable),
			MaxSurge:                 copyPtr(r.MaxSurge),
			UnavailablePeriodSeconds: copyPtr(r.UnavailablePeriodSeconds),
		}
	}
	return out
}

func strategyFromModel(s placement.RolloutStrategy) v1beta1.RolloutStrategy {
	out := v1beta1.RolloutStrategy{Type: s.Type, ApplyStrategy: ApplyStrategyFromModel(s.ApplyStrategy)}
	if d := s.DeleteStrategy; d != nil {
		out.DeleteStrategy = &v1beta1.DeleteStrategy{PropagationPolicy: d.PropagationPolicy}
	}
	out.ReportBackStrategy = ReportBackFromModel(s.ReportBackStrategy)
	if r := s.RollingUpdate; r != nil {
		out.RollingUpdate = &v1beta1.RollingUpdateConfig{
			MaxUnavailable:           copyPtr(r.MaxUnavailable),
			MaxSurge:                 copyPtr(r.MaxSurge),
			UnavailablePeriodSeconds: copyPtr(r.UnavailablePeriodSeconds),
		}
	}
	return out
}

// PlacementStatusToModel converts a placement's status. The model does not carry envelope
// types, or the times of failed placements' conditions.
func PlacementStatusToModel(s v1beta1.PlacementStatus) status.Status {
	return status.Status{
		SelectedResources:     mapSlice(s.SelectedResources, resourceIdentifierToModel),
		ObservedResourceIndex: s.ObservedResourceIndex,
		PlacementStatuses:     mapSlice(s.PlacementStatuses, clusterStatusToModel),
		Conditions:            ConditionsToModel(s.Conditions),
	}
}

func clusterStatusToModel(s v1beta1.ResourcePlacementStatus) status.ClusterStatus {
	return status.ClusterStatus{
		ClusterName:                        s.ClusterName,
		ObservedResourceIndex:              s.ObservedResourceIndex,
		ApplicableResourceOverrides:        mapSlice(s.ApplicableResourceOverrides, namespacedNameToModel),
		ApplicableClusterResourceOverrides: slices.Clone(s.ApplicableClusterResourceOverrides),
		FailedPlacements:                   mapSlice(s.FailedPlacements, failedPlacementToModel),
		DriftedPlacements:                  mapSlice(s.DriftedPlacements, driftedPlacementToModel),
		DiffedPlacements:                   mapSlice(s.DiffedPlacements, diffedPlacementToModel),
		Conditions:                         ConditionsToModel(s.Conditions),
	}
}

// PlacementStatusFromModel converts a placement's status, merged into base: a cluster's
// entry is matched by cluster name (entries without one by position), and resources and
// failed, drifted and diffed placements base lists keep base's envelope type (and failed
// ones their condition times). New failed placements are dated as failedPlacementsFromModel
// says.
func PlacementStatusFromModel(s status.Status, base v1beta1.PlacementStatus) v1beta1.PlacementStatus {
	out := v1beta1.PlacementStatus{
		SelectedResources:     resourceIdentifiersFromModel(s.SelectedResources, base.SelectedResources),
		ObservedResourceIndex: s.ObservedResourceIndex,
		Conditions:            ConditionsFromModel(s.Conditions),
	}
	unnamed := 0
	out.PlacementStatuses = mapSlice(s.PlacementStatuses, func(cs status.ClusterStatus) v1beta1.ResourcePlacementStatus {
		var b *v1beta1.ResourcePlacementStatus
		if cs.ClusterName != "" {
			b = findBaseBy(base.PlacementStatuses, func(b v1beta1.ResourcePlacementStatus) bool { return b.ClusterName == cs.ClusterName })
		} else {
			n := unnamed
			unnamed++
			b = findBaseBy(base.PlacementStatuses, func(b v1beta1.ResourcePlacementStatus) bool {
				if b.ClusterName != "" {
					return false
				}
				n--
				return n < 0
			})
		}
		return clusterStatusFromModel(cs, b)
	})
	return out
}

func clusterStatusFromModel(s status.ClusterStatus, base *v1beta1.ResourcePlacementStatus) v1beta1.ResourcePlacementStatus {
	out := v1beta1.ResourcePlacementStatus{
		ClusterName:                        s.ClusterName,
		ObservedResourceIndex:              s.ObservedResourceIndex,
		ApplicableResourceOverrides:        mapSlice(s.ApplicableResourceOverrides, namespacedNameFromModel),
		ApplicableClusterResourceOverrides: slices.Clone(s.ApplicableClusterResourceOverrides),
		Conditions:                         ConditionsFromModel(s.Conditions),
	}
	var baseFailed []v1beta1.FailedResourcePlacement
	var baseDrifted []v1beta1.DriftedResourcePlacement
	var baseDiffed []v1beta1.DiffedResourcePlacement
	if base != nil {
		baseFailed, baseDrifted, baseDiffed = base.FailedPlacements, base.DriftedPlacements, base.DiffedPlacements
	}
	out.FailedPlacements = failedPlacementsFromModel(s.FailedPlacements, out.Conditions, baseFailed)
	out.DriftedPlacements = driftedPlacementsFromModel(s.DriftedPlacements, baseDrifted)
	out.DiffedPlacements = diffedPlacementsFromModel(s.DiffedPlacements, baseDiffed)
	return out
}

// metaName is a convenience for error messages.
func metaName(m metav1.Object) string {
	if ns := m.GetNamespace(); ns != "" {
		return ns + "/" + m.GetName()
	}
	return m.GetName()
}
