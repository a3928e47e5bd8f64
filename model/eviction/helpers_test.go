package eviction_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/placement"
)

const crpName = "test-crp"

// ev is the how-to's eviction: test-crp from kind-cluster-1.
var ev = eviction.Eviction{
	ObjectMeta: metav1.ObjectMeta{Name: "test-eviction"},
	Spec:       eviction.EvictionSpec{PlacementName: crpName, ClusterName: "kind-cluster-1"},
}

func pickN(n int) *eviction.Placement {
	return &eviction.Placement{Name: crpName, Type: placement.PickN, NumberOfClusters: n}
}

func pickAll() *eviction.Placement {
	return &eviction.Placement{Name: crpName, Type: placement.PickAll}
}

func pickFixed() *eviction.Placement {
	return &eviction.Placement{Name: crpName, Type: placement.PickFixed}
}

type bindingOpt func(*placement.Binding)

// binding builds a binding of test-crp at generation 1 on a cluster, in a state, with no
// conditions.
func binding(cluster string, state placement.BindingState, opts ...bindingOpt) *placement.Binding {
	b := &placement.Binding{
		Name: placement.BindingName(crpName, cluster, 0), Placement: crpName, TargetCluster: cluster,
		State: state, SchedulingPolicySnapshotName: crpName + "-1", Generation: 1,
		ApplyStrategy: &placement.ApplyStrategy{Type: placement.ClientSideApply},
	}
	if state != placement.Scheduled {
		b.ResourceSnapshotName = crpName + "-0-snapshot"
	}
	for _, o := range opts {
		o(b)
	}
	return b
}

// bound is a Bound binding whose resources are applied and available.
func bound(cluster string, opts ...bindingOpt) *placement.Binding {
	return binding(cluster, placement.Bound, append([]bindingOpt{cond(condition.TypeApplied, metav1.ConditionTrue, 1), cond(condition.TypeAvailable, metav1.ConditionTrue, 1)}, opts...)...)
}

// cond sets a condition of the binding, observed at generation gen.
func cond(typ string, status metav1.ConditionStatus, gen int64) bindingOpt {
	return func(b *placement.Binding) {
		condition.Remove(&b.Conditions, typ)
		b.Conditions = append(b.Conditions, condition.Timed{Condition: condition.Condition{Type: typ, Status: status, Reason: "test"}, ObservedGeneration: gen})
	}
}

var (
	// notAvailable: the availability is still unknown.
	notAvailable = cond(condition.TypeAvailable, metav1.ConditionUnknown, 1)
	// stale: Available True was observed at the previous generation.
	stale = func(b *placement.Binding) {
		b.Generation = 2
		cond(condition.TypeApplied, metav1.ConditionTrue, 2)(b)
		cond(condition.TypeAvailable, metav1.ConditionTrue, 1)(b)
	}
	// applyFailed: Applied False; availability is then not reported.
	applyFailed = func(b *placement.Binding) {
		condition.Remove(&b.Conditions, condition.TypeAvailable)
		cond(condition.TypeApplied, metav1.ConditionFalse, 1)(b)
	}
	availableFailed = cond(condition.TypeAvailable, metav1.ConditionFalse, 1)
	deleting        = func(b *placement.Binding) { b.Deleting = true }
	reportDiff      = func(b *placement.Binding) {
		b.ApplyStrategy = &placement.ApplyStrategy{Type: placement.ReportDiff}
		b.Conditions = nil
		cond(condition.TypeDiffReported, metav1.ConditionTrue, 1)(b)
	}
)

func previously(s placement.BindingState) bindingOpt {
	return func(b *placement.Binding) { b.State, b.PreviousState = placement.Unscheduled, s }
}

func attempt(n int) bindingOpt {
	return func(b *placement.Binding) { b.Name = placement.BindingName(crpName, b.TargetCluster, n) }
}

func bindings(bs ...*placement.Binding) []*placement.Binding { return bs }

func minAvailable(v intstr.IntOrString) *eviction.DisruptionBudget {
	return &eviction.DisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: crpName}, Spec: eviction.DisruptionBudgetSpec{MinAvailable: &v}}
}

func maxUnavailable(v intstr.IntOrString) *eviction.DisruptionBudget {
	return &eviction.DisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: crpName}, Spec: eviction.DisruptionBudgetSpec{MaxUnavailable: &v}}
}

var (
	num = intstr.FromInt32
	pct = intstr.FromString
)

// Expected decisions.

func condPtr(c condition.Condition) *condition.Condition { return &c }

var validCond = condPtr(condition.True(eviction.TypeValid, eviction.ReasonValid, eviction.MessageValid))

func invalid(msg string) eviction.Decision {
	return eviction.Decision{Valid: condPtr(condition.False(eviction.TypeValid, eviction.ReasonInvalid, msg))}
}

// counts are the Available, Total and Allowed numbers of a valid decision.
type counts struct{ available, total, allowed int }

// executed: Executed=True with msg, deleting binding del ("" for none).
func executed(msg, del string, n counts) eviction.Decision {
	return eviction.Decision{
		Valid:         validCond,
		Executed:      condPtr(condition.True(eviction.TypeExecuted, eviction.ReasonExecuted, msg)),
		DeleteBinding: del, Available: n.available, Total: n.total, Allowed: n.allowed,
	}
}

func blocked(msg string, n counts) eviction.Decision {
	return eviction.Decision{
		Valid:     validCond,
		Executed:  condPtr(condition.False(eviction.TypeExecuted, eviction.ReasonNotExecuted, msg)),
		Available: n.available, Total: n.total, Allowed: n.allowed,
	}
}

func allowedBy(n counts) eviction.Decision {
	return executed(fmt.Sprintf(eviction.FormatAllowedByBudget, n.available, n.total), name("kind-cluster-1"), n)
}

func blockedBy(n counts) eviction.Decision {
	return blocked(fmt.Sprintf(eviction.FormatBlockedByBudget, n.available, n.total), n)
}

// name is the first binding name of test-crp on a cluster.
func name(cluster string) string { return placement.BindingName(crpName, cluster, 0) }

func condTimed(c condition.Condition) condition.Timed {
	return condition.Timed{Condition: c, ObservedGeneration: 1}
}
