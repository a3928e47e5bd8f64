package convert

import (
	"fmt"
	"k8s.io/utils/ptr"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// semantic compares model values by meaning: quantities by value, times by instant, nil and
// empty collections alike. FromModel uses it to decide whether base already says what the
// model says.
var semantic = conversion.EqualitiesOrDie(
	func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 },
	func(a, b metav1.Time) bool { return a.Equal(&b) },
	func(a, b time.Time) bool { return a.Equal(b) },
)

// keepOr returns base when it converts to want, else build(want): FromModel keeps the API
// object's own spelling of what the model says.
func keepOr[A, M any](base *A, want M, toModel func(A) M, build func(M) A) A {
	if base != nil && semantic.DeepEqual(toModel(*base), want) {
		return *base
	}
	return build(want)
}

// mapSlice converts a slice element by element; nil stays nil and empty stays empty.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i := range in {
		out[i] = f(in[i])
	}
	return out
}

// copyPtr copies what p points to.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// ConditionsToModel converts stored conditions; nothing is lost.
func ConditionsToModel(cs []metav1.Condition) []condition.Timed {
	return mapSlice(cs, conditionToModel)
}

// ConditionsFromModel converts model conditions to stored ones; nothing is lost.
func ConditionsFromModel(cs []condition.Timed) []metav1.Condition {
	return mapSlice(cs, conditionFromModel)
}

func conditionToModel(c metav1.Condition) condition.Timed {
	return condition.Timed{
		Condition:          condition.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message},
		ObservedGeneration: c.ObservedGeneration,
		LastTransitionTime: c.LastTransitionTime.Time,
	}
}

func conditionFromModel(c condition.Timed) metav1.Condition {
	return metav1.Condition{
		Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message,
		ObservedGeneration: c.ObservedGeneration, LastTransitionTime: metav1.Time{Time: c.LastTransitionTime},
	}
}

// untimed drops what the model's undated conditions (condition.Condition) do not carry.
func untimed(c metav1.Condition) condition.Condition {
	return condition.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
}

func namespacedNameToModel(n v1beta1.NamespacedName) placement.NamespacedName {
	return placement.NamespacedName{Namespace: n.Namespace, Name: n.Name}
}

func namespacedNameFromModel(n placement.NamespacedName) v1beta1.NamespacedName {
	return v1beta1.NamespacedName{Namespace: n.Namespace, Name: n.Name}
}

// resourceIdentifierToModel drops the envelope type, which the model does not carry.
func resourceIdentifierToModel(r v1beta1.ResourceIdentifier) placement.ResourceIdentifier {
	out := placement.ResourceIdentifier{Group: r.Group, Version: r.Version, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace}
	if r.Envelope != nil {
		out.Envelope = &placement.NamespacedName{Namespace: r.Envelope.Namespace, Name: r.Envelope.Name}
	}
	return out
}

func resourceIdentifierFromModel(r placement.ResourceIdentifier) v1beta1.ResourceIdentifier {
	out := v1beta1.ResourceIdentifier{Group: r.Group, Version: r.Version, Kind: r.Kind, Name: r.Name, Namespace: r.Namespace}
	if r.Envelope != nil {
		out.Envelope = &v1beta1.EnvelopeIdentifier{Namespace: r.Envelope.Namespace, Name: r.Envelope.Name}
	}
	return out
}

// resourceIdentifiersFromModel converts a list, keeping base's entry (with its envelope
// type) for every resource base lists too.
func resourceIdentifiersFromModel(ids []placement.ResourceIdentifier, base []v1beta1.ResourceIdentifier) []v1beta1.ResourceIdentifier {
	return mapSlice(ids, func(id placement.ResourceIdentifier) v1beta1.ResourceIdentifier {
		return keepOr(findBase(base, id, resourceIdentifierToModel), id, resourceIdentifierToModel, resourceIdentifierFromModel)
	})
}

// findBase returns the first element of base whose model form is want, or nil.
func findBase[A, M any](base []A, want M, toModel func(A) M) *A {
	for i := range base {
		if semantic.DeepEqual(toModel(base[i]), want) {
			return &base[i]
		}
	}
	return nil
}

func failedPlacementToModel(f v1beta1.FailedResourcePlacement) placement.FailedPlacement {
	return placement.FailedPlacement{ResourceIdentifier: resourceIdentifierToModel(f.ResourceIdentifier), Condition: untimed(f.Condition)}
}

// failedPlacementsFromModel converts failed placements. The model keeps a failed manifest's
// condition without its times; an entry base already has is kept as is, a new one is dated
// with the owner's condition of the same type (Applied or Available: the failure is as old
// as the verdict it explains), or else its most recent condition.
func failedPlacementsFromModel(fs []placement.FailedPlacement, owner []metav1.Condition, base []v1beta1.FailedResourcePlacement) []v1beta1.FailedResourcePlacement {
	return mapSlice(fs, func(f placement.FailedPlacement) v1beta1.FailedResourcePlacement {
		return keepOr(findBase(base, f, failedPlacementToModel), f, failedPlacementToModel, func(f placement.FailedPlacement) v1beta1.FailedResourcePlacement {
			c := metav1.Condition{Type: f.Condition.Type, Status: f.Condition.Status, Reason: f.Condition.Reason, Message: f.Condition.Message}
			if o := datingCondition(owner, f.Condition.Type); o != nil {
				c.LastTransitionTime, c.ObservedGeneration = o.LastTransitionTime, o.ObservedGeneration
			}
			b := findBaseBy(base, func(b v1beta1.FailedResourcePlacement) bool {
				return semantic.DeepEqual(resourceIdentifierToModel(b.ResourceIdentifier), f.ResourceIdentifier)
			})
			id := resourceIdentifierFromModel(f.ResourceIdentifier)
			if b != nil {
				id = keepOr(&b.ResourceIdentifier, f.ResourceIdentifier, resourceIdentifierToModel, resourceIdentifierFromModel)
			}
			return v1beta1.FailedResourcePlacement{ResourceIdentifier: id, Condition: c}
		})
	})
}

// datingCondition picks the condition that dates a failure of type typ.
func datingCondition(owner []metav1.Condition, typ string) *metav1.Condition {
	var latest *metav1.Condition
	for i := range owner {
		if owner[i].Type == typ {
			return &owner[i]
		}
		if latest == nil || owner[i].LastTransitionTime.After(latest.LastTransitionTime.Time) {
			latest = &owner[i]
		}
	}
	return latest
}

func findBaseBy[A any](base []A, match func(A) bool) *A {
	for i := range base {
		if match(base[i]) {
			return &base[i]
		}
	}
	return nil
}

// applyTypeToModel converts an apply strategy type. The API and the model spell every type
// alike (TestApplyTypesAreTheAPIs checks that placement.ApplyTypes and its default are the
// CRDs' enum and default), so the spelling is kept, an empty type (the default) and one the
// API would refuse included; a new type needs no change here.
func applyTypeToModel(t v1beta1.ApplyStrategyType) placement.ApplyType {
	return placement.ApplyType(t)
}

// applyTypeFromModel converts an apply strategy type back, keeping its spelling as
// applyTypeToModel does.
func applyTypeFromModel(t placement.ApplyType) v1beta1.ApplyStrategyType {
	return v1beta1.ApplyStrategyType(t)
}

// ApplyStrategyToModel converts an apply strategy; nothing is lost.
func ApplyStrategyToModel(a *v1beta1.ApplyStrategy) *placement.ApplyStrategy {
	if a == nil {
		return nil
	}
	out := &placement.ApplyStrategy{
		Type: applyTypeToModel(a.Type), ComparisonOption: string(a.ComparisonOption), WhenToApply: string(a.WhenToApply),
		WhenToTakeOver: string(a.WhenToTakeOver), AllowCoOwnership: a.AllowCoOwnership,
	}
	if a.ServerSideApplyConfig != nil {
		out.ServerSideApplyConfig = &struct {
			ForceConflicts bool `json:"force,omitempty"`
		}{ForceConflicts: a.ServerSideApplyConfig.ForceConflicts}
	}
	return out
}

// ApplyStrategyFromModel converts an apply strategy; nothing is lost.
func ApplyStrategyFromModel(a *placement.ApplyStrategy) *v1beta1.ApplyStrategy {
	if a == nil {
		return nil
	}
	out := &v1beta1.ApplyStrategy{
		Type: applyTypeFromModel(a.Type), ComparisonOption: v1beta1.ComparisonOptionType(a.ComparisonOption),
		WhenToApply: v1beta1.WhenToApplyType(a.WhenToApply), WhenToTakeOver: v1beta1.WhenToTakeOverType(a.WhenToTakeOver),
		AllowCoOwnership: a.AllowCoOwnership,
	}
	if a.ServerSideApplyConfig != nil {
		out.ServerSideApplyConfig = &v1beta1.ServerSideApplyConfig{ForceConflicts: a.ServerSideApplyConfig.ForceConflicts}
	}
	return out
}

// clusterDecisionToModel reads an unset score as 0, which is what the scheduler means.
func clusterDecisionToModel(d v1beta1.ClusterDecision) placement.ClusterDecision {
	out := placement.ClusterDecision{ClusterName: d.ClusterName, Selected: d.Selected, Reason: d.Reason, Plugin: d.Plugin}
	if s := d.ClusterScore; s != nil {
		out.ClusterScore = &placement.ClusterScore{}
		if s.AffinityScore != nil {
			out.ClusterScore.AffinityScore = *s.AffinityScore
		}
		if s.TopologySpreadScore != nil {
			out.ClusterScore.TopologySpreadScore = *s.TopologySpreadScore
		}
	}
	return out
}

func clusterDecisionFromModel(d placement.ClusterDecision) v1beta1.ClusterDecision {
	out := v1beta1.ClusterDecision{ClusterName: d.ClusterName, Selected: d.Selected, Reason: d.Reason, Plugin: d.Plugin}
	if s := d.ClusterScore; s != nil {
		out.ClusterScore = &v1beta1.ClusterScore{AffinityScore: ptr.To(s.AffinityScore), TopologySpreadScore: ptr.To(s.TopologySpreadScore)}
	}
	return out
}

// clusterDecisionsFromModel converts decisions, keeping base's spelling of equal ones.
// A policy snapshot holds a decision for each of up to thousands of members, so base is
// looked up by cluster name, not searched once per decision.
func clusterDecisionsFromModel(ds []placement.ClusterDecision, base []v1beta1.ClusterDecision) []v1beta1.ClusterDecision {
	byName := make(map[string][]int, len(base))
	for i := range base {
		byName[base[i].ClusterName] = append(byName[base[i].ClusterName], i)
	}
	return mapSlice(ds, func(d placement.ClusterDecision) v1beta1.ClusterDecision {
		var b *v1beta1.ClusterDecision
		for _, i := range byName[d.ClusterName] { // in base's order: the first equal one, as findBase
			if semantic.DeepEqual(clusterDecisionToModel(base[i]), d) {
				b = &base[i]
				break
			}
		}
		return keepOr(b, d, clusterDecisionToModel, clusterDecisionFromModel)
	})
}

func setLabel(m *metav1.ObjectMeta, key, value string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[key] = value
}

func setAnnotation(m *metav1.ObjectMeta, key, value string) {
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[key] = value
}

// removeAnnotation deletes an annotation, leaving no empty map behind.
func removeAnnotation(m *metav1.ObjectMeta, key string) {
	delete(m.Annotations, key)
	if len(m.Annotations) == 0 {
		m.Annotations = nil
	}
}

// setIntAnnotation writes n, keeping base's spelling when it parses to n.
func setIntAnnotation(m *metav1.ObjectMeta, key string, n int64) {
	if v, ok := m.Annotations[key]; ok {
		if old, err := strconv.ParseInt(v, 10, 64); err == nil && old == n {
			return
		}
	}
	setAnnotation(m, key, strconv.FormatInt(n, 10))
}

// intFrom parses a label or annotation; absent is 0.
func intFrom(values map[string]string, key, what, object string) (int64, error) {
	v, ok := values[key]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s %s=%q is not an integer", object, what, key, v)
	}
	return n, nil
}

// deletionTimestamp says "being deleted": base's timestamp when it has one, else the zero
// time (the model knows that deletion was requested, not when).
func deletionTimestamp(deleting bool, base *metav1.Time) *metav1.Time {
	switch {
	case !deleting:
		return nil
	case base != nil:
		return base.DeepCopy()
	}
	return &metav1.Time{}
}
