package rollout_test

import (
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/rollout"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	oldSnap = "crp-1-snapshot"
	newSnap = "crp-2-snapshot"
)

const (
	scheduled   = placement.Scheduled
	bound       = placement.Bound
	unscheduled = placement.Unscheduled
)

// opt tweaks a test binding. Condition options use the binding's generation at the time
// they run, so gen(...) goes first.
type opt func(*placement.Binding)

// bnd builds a binding named crp-<cluster> at generation 1. Bound and Unscheduled bindings
// point at the old snapshot unless told otherwise.
func bnd(cluster string, state placement.BindingState, opts ...opt) *placement.Binding {
	b := &placement.Binding{
		Name: "crp-" + cluster, Placement: "crp", TargetCluster: cluster, State: state, Generation: 1,
	}
	if state != placement.Scheduled {
		b.ResourceSnapshotName = oldSnap
	}
	for _, o := range opts {
		o(b)
	}
	return b
}

func named(name string) opt { return func(b *placement.Binding) { b.Name = name } }
func gen(g int64) opt       { return func(b *placement.Binding) { b.Generation = g } }
func on(snap string) opt    { return func(b *placement.Binding) { b.ResourceSnapshotName = snap } }
func deleting(b *placement.Binding) {
	b.Deleting = true
}

// cond sets a condition at the binding's generation plus genOffset, transitioned at t.
func cond(typ string, status metav1.ConditionStatus, reason string, genOffset int64, t time.Time) opt {
	return func(b *placement.Binding) {
		msg := ""
		switch typ {
		case condition.TypeRolloutStarted:
			if status == metav1.ConditionTrue {
				msg = rollout.MessageRolloutStarted
			} else {
				msg = rollout.MessageRolloutNotStartedYet
			}
		}
		condition.Remove(&b.Conditions, typ)
		b.Conditions = append(b.Conditions, condition.Timed{
			Condition:          condition.Condition{Type: typ, Status: status, Reason: reason, Message: msg},
			ObservedGeneration: b.Generation + genOffset, LastTransitionTime: t,
		})
	}
}

var (
	yes     = metav1.ConditionTrue
	no      = metav1.ConditionFalse
	longAgo = now.Add(-time.Hour)
)

// ready: applied and available (trackable) at the current generation.
func ready(b *placement.Binding) {
	cond(condition.TypeApplied, yes, condition.ReasonAllWorkApplied, 0, longAgo)(b)
	cond(condition.TypeAvailable, yes, condition.ReasonAllWorkAvailable, 0, longAgo)(b)
}

// untrackable: applied, and Available=True/WorkNotTrackable since `ago` before now.
func untrackable(ago time.Duration) opt {
	return func(b *placement.Binding) {
		cond(condition.TypeApplied, yes, condition.ReasonAllWorkApplied, 0, longAgo)(b)
		cond(condition.TypeAvailable, yes, condition.ReasonWorkNotTrackable, 0, now.Add(-ago))(b)
	}
}

// notAvailable: applied but Available=False (a bad image).
func notAvailable(b *placement.Binding) {
	cond(condition.TypeApplied, yes, condition.ReasonAllWorkApplied, 0, longAgo)(b)
	cond(condition.TypeAvailable, no, condition.ReasonNotAllWorkAvailable, 0, longAgo)(b)
}

// applyFailed: Applied=False at the current generation.
func applyFailed(b *placement.Binding) {
	cond(condition.TypeApplied, no, condition.ReasonNotAllWorkApplied, 0, longAgo)(b)
}

// blocked: RolloutStarted=False/RolloutNotStartedYet at the current generation.
func blocked(b *placement.Binding) {
	cond(condition.TypeRolloutStarted, no, condition.ReasonRolloutNotStartedYet, 0, longAgo)(b)
}

// started: RolloutStarted=True at the current generation.
func started(b *placement.Binding) {
	cond(condition.TypeRolloutStarted, yes, condition.ReasonRolloutStarted, 0, longAgo)(b)
}

func cros(names ...string) opt {
	return func(b *placement.Binding) { b.ClusterResourceOverrideSnapshots = names }
}

func applyType(typ placement.ApplyType) opt {
	return func(b *placement.Binding) { b.ApplyStrategy = &placement.ApplyStrategy{Type: typ} }
}

// ios parses "25%" as a percentage, "1" as an absolute number and "" as unset.
func ios(s string) *intstr.IntOrString {
	if s == "" {
		return nil
	}
	if strings.HasSuffix(s, "%") {
		v := intstr.FromString(s)
		return &v
	}
	i, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	v := intstr.FromInt32(int32(i))
	return &v
}

// fleet builds n Bound, ready bindings on the old snapshot, clusters c00, c01, ...
func fleet(n int, state placement.BindingState, opts ...opt) []*placement.Binding {
	var bs []*placement.Binding
	for i := range n {
		bs = append(bs, bnd(clusterName(i), state, append([]opt{ready}, opts...)...))
	}
	return bs
}

func clusterName(i int) string { return "c" + strconv.Itoa(i/10) + strconv.Itoa(i%10) }

// clusters lists fleet cluster names [from, to).
func clusters(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, clusterName(i))
	}
	return out
}

func concat(bss ...[]*placement.Binding) []*placement.Binding { return slices.Concat(bss...) }

// deepCopy copies bindings so a test can check Decide left its input alone.
func deepCopy(bs []*placement.Binding) []placement.Binding {
	out := make([]placement.Binding, 0, len(bs))
	for _, b := range bs {
		c := *b
		c.Conditions = slices.Clone(b.Conditions)
		c.ClusterResourceOverrideSnapshots = slices.Clone(b.ClusterResourceOverrideSnapshots)
		c.ResourceOverrideSnapshots = slices.Clone(b.ResourceOverrideSnapshots)
		if b.ApplyStrategy != nil {
			a := *b.ApplyStrategy
			c.ApplyStrategy = &a
		}
		out = append(out, c)
	}
	return out
}

func deref(bs []*placement.Binding) []placement.Binding {
	out := make([]placement.Binding, 0, len(bs))
	for _, b := range bs {
		out = append(out, *b)
	}
	return out
}
