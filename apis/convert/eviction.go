package convert

import (
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/eviction"
)

// EvictionToModel reads a ClusterResourcePlacementEviction; nothing is lost.
func EvictionToModel(e *v1beta1.ClusterResourcePlacementEviction) *eviction.Eviction {
	return &eviction.Eviction{
		TypeMeta: e.TypeMeta, ObjectMeta: *e.ObjectMeta.DeepCopy(),
		Spec:   eviction.EvictionSpec{PlacementName: e.Spec.PlacementName, ClusterName: e.Spec.ClusterName},
		Status: eviction.EvictionStatus{Conditions: ConditionsToModel(e.Status.Conditions)},
	}
}

// EvictionFromModel writes a ClusterResourcePlacementEviction; nothing is lost.
func EvictionFromModel(e *eviction.Eviction) *v1beta1.ClusterResourcePlacementEviction {
	out := &v1beta1.ClusterResourcePlacementEviction{
		TypeMeta: e.TypeMeta, ObjectMeta: *e.ObjectMeta.DeepCopy(),
		Spec:   v1beta1.PlacementEvictionSpec{PlacementName: e.Spec.PlacementName, ClusterName: e.Spec.ClusterName},
		Status: v1beta1.PlacementEvictionStatus{Conditions: ConditionsFromModel(e.Status.Conditions)},
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), eviction.KindEviction
	return out
}

// DisruptionBudgetToModel reads a ClusterResourcePlacementDisruptionBudget; nothing is lost.
func DisruptionBudgetToModel(b *v1beta1.ClusterResourcePlacementDisruptionBudget) *eviction.DisruptionBudget {
	return &eviction.DisruptionBudget{
		TypeMeta: b.TypeMeta, ObjectMeta: *b.ObjectMeta.DeepCopy(),
		Spec: eviction.DisruptionBudgetSpec{MaxUnavailable: copyPtr(b.Spec.MaxUnavailable), MinAvailable: copyPtr(b.Spec.MinAvailable)},
	}
}

// DisruptionBudgetFromModel writes a ClusterResourcePlacementDisruptionBudget; nothing is
// lost.
func DisruptionBudgetFromModel(b *eviction.DisruptionBudget) *v1beta1.ClusterResourcePlacementDisruptionBudget {
	out := &v1beta1.ClusterResourcePlacementDisruptionBudget{
		TypeMeta: b.TypeMeta, ObjectMeta: *b.ObjectMeta.DeepCopy(),
		Spec: v1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: copyPtr(b.Spec.MaxUnavailable), MinAvailable: copyPtr(b.Spec.MinAvailable)},
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), eviction.KindDisruptionBudget
	return out
}
