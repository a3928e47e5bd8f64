package rollout_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/rollout"
)

// genIntOrString draws an unset, absolute or percentage maxUnavailable/maxSurge.
func genIntOrString(t *rapid.T, label string) *intstr.IntOrString {
	switch rapid.IntRange(0, 2).Draw(t, label+"-kind") {
	case 0:
		return nil
	case 1:
		v := intstr.FromInt32(int32(rapid.IntRange(0, 4).Draw(t, label)))
		return &v
	default:
		v := intstr.FromString(rapid.SampledFrom([]string{"0%", "25%", "50%", "100%"}).Draw(t, label))
		return &v
	}
}

// genCondition maybe sets a condition of type typ at the binding's generation or the one before.
func genCondition(t *rapid.T, b *placement.Binding, typ string, options []condition.Condition) {
	i := rapid.IntRange(-1, len(options)-1).Draw(t, typ)
	if i < 0 {
		return
	}
	g := b.Generation - int64(rapid.IntRange(0, 3).Draw(t, typ+"-stale")/3)
	ago := time.Duration(rapid.IntRange(0, 150).Draw(t, typ+"-ago")) * time.Second
	b.Conditions = append(b.Conditions, condition.Timed{Condition: options[i], ObservedGeneration: g, LastTransitionTime: now.Add(-ago)})
}

var (
	availableOptions = []condition.Condition{
		condition.True(condition.TypeAvailable, condition.ReasonAllWorkAvailable, ""),
		condition.True(condition.TypeAvailable, condition.ReasonWorkNotTrackable, ""),
		condition.False(condition.TypeAvailable, condition.ReasonNotAllWorkAvailable, ""),
	}
	appliedOptions = []condition.Condition{
		condition.True(condition.TypeApplied, condition.ReasonAllWorkApplied, ""),
		condition.False(condition.TypeApplied, condition.ReasonNotAllWorkApplied, ""),
	}
	startedOptions = []condition.Condition{
		condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, rollout.MessageRolloutStarted),
		condition.False(condition.TypeRolloutStarted, condition.ReasonRolloutNotStartedYet, rollout.MessageRolloutNotStartedYet),
	}
)

// genInput draws a placement with random bindings, budgets and availability.
func genInput(t *rapid.T) rollout.Input {
	nClusters := rapid.IntRange(0, 8).Draw(t, "clusters")
	var bs []*placement.Binding
	var names []string
	overrides := map[string]rollout.OverrideSnapshots{}
	for i := range nClusters {
		cl := fmt.Sprintf("c%d", i)
		names = append(names, cl)
		if rapid.Bool().Draw(t, cl+"-override") {
			overrides[cl] = rollout.OverrideSnapshots{ClusterResourceOverrideSnapshots: []string{"cro-1"}}
		}
		k := 1
		if rapid.IntRange(0, 5).Draw(t, cl+"-dup") == 0 {
			k = 2
		}
		for j := range k {
			b := &placement.Binding{
				Name: fmt.Sprintf("crp-%s-%d", cl, j), Placement: "crp", TargetCluster: cl,
				State:      rapid.SampledFrom([]placement.BindingState{placement.Scheduled, placement.Bound, placement.Unscheduled}).Draw(t, "state"),
				Deleting:   rapid.IntRange(0, 5).Draw(t, "deleting") == 0,
				Generation: int64(rapid.IntRange(1, 3).Draw(t, "generation")),
			}
			if b.State != placement.Scheduled {
				b.ResourceSnapshotName = rapid.SampledFrom([]string{"s1", "s2"}).Draw(t, "snapshot")
				if rapid.Bool().Draw(t, "has-override") {
					b.ClusterResourceOverrideSnapshots = []string{"cro-1"}
				}
				if rapid.IntRange(0, 3).Draw(t, "apply") == 0 {
					b.ApplyStrategy = &placement.ApplyStrategy{Type: placement.ServerSideApply}
				}
			}
			genCondition(t, b, condition.TypeRolloutStarted, startedOptions)
			genCondition(t, b, condition.TypeApplied, appliedOptions)
			genCondition(t, b, condition.TypeAvailable, availableOptions)
			bs = append(bs, b)
		}
	}
	in := rollout.Input{
		Placement:              "crp",
		PlacementType:          rapid.SampledFrom([]placement.PlacementType{placement.PickAll, placement.PickN, placement.PickFixed}).Draw(t, "type"),
		NumberOfClusters:       int32(rapid.IntRange(0, 6).Draw(t, "numberOfClusters")),
		ClusterNames:           names[:rapid.IntRange(0, len(names)).Draw(t, "clusterNames")],
		Bindings:               bs,
		LatestResourceSnapshot: rapid.SampledFrom([]string{"", "s1", "s2", "s2"}).Draw(t, "latest"),
		Overrides:              overrides,
		Now:                    now,
	}
	if rapid.Bool().Draw(t, "rolling-update") {
		ru := &placement.RollingUpdateConfig{MaxUnavailable: genIntOrString(t, "maxUnavailable"), MaxSurge: genIntOrString(t, "maxSurge")}
		if rapid.Bool().Draw(t, "has-period") {
			p := rapid.IntRange(0, 120).Draw(t, "period")
			ru.UnavailablePeriodSeconds = &p
		}
		in.Strategy.RollingUpdate = ru
	}
	if rapid.IntRange(0, 3).Draw(t, "desired-apply") == 0 {
		in.Strategy.ApplyStrategy = &placement.ApplyStrategy{Type: placement.ServerSideApply}
	}
	return in
}

// model recomputes the budget from the spec's formulas, independently of the package.
type model struct {
	n, maxUnavailable, maxSurge int
	ready, failed               map[string]bool // by binding name
}

func scale(v *intstr.IntOrString, n int) int {
	if v == nil {
		return (25*n + 99) / 100
	}
	if v.Type == intstr.Int {
		return int(v.IntVal)
	}
	var p int
	fmt.Sscanf(v.StrVal, "%d%%", &p)
	return (p*n + 99) / 100
}

func newModel(in rollout.Input) model {
	m := model{ready: map[string]bool{}, failed: map[string]bool{}}
	switch in.PlacementType {
	case placement.PickN:
		m.n = int(in.NumberOfClusters)
	case placement.PickFixed:
		m.n = len(in.ClusterNames)
	default:
		live := map[string]bool{}
		for _, b := range in.Bindings {
			if !b.Deleting && (b.State == placement.Scheduled || b.State == placement.Bound) {
				live[b.TargetCluster] = true
			}
		}
		m.n = len(live)
	}
	period := 60 * time.Second
	var mu, ms *intstr.IntOrString
	if ru := in.Strategy.RollingUpdate; ru != nil {
		mu, ms = ru.MaxUnavailable, ru.MaxSurge
		if ru.UnavailablePeriodSeconds != nil {
			period = time.Duration(*ru.UnavailablePeriodSeconds) * time.Second
		}
	}
	m.maxUnavailable, m.maxSurge = scale(mu, m.n), scale(ms, m.n)
	for _, b := range in.Bindings {
		if b.State == placement.Scheduled {
			continue
		}
		if a, ok := condition.Find(b.Conditions, condition.TypeAvailable); ok && a.Status == metav1.ConditionTrue &&
			a.ObservedGeneration == b.Generation &&
			(a.Reason != condition.ReasonWorkNotTrackable || !a.LastTransitionTime.After(now.Add(-period))) {
			m.ready[b.Name] = true
		}
		if a, ok := condition.Find(b.Conditions, condition.TypeApplied); ok && a.Status == metav1.ConditionFalse && a.ObservedGeneration == b.Generation {
			m.failed[b.Name] = true
		}
	}
	return m
}

func byName(bs []*placement.Binding) map[string]*placement.Binding {
	m := map[string]*placement.Binding{}
	for _, b := range bs {
		m[b.Name] = b
	}
	return m
}

// TestPropertyAvailability: the ready bindings this plan disrupts (deletes, or updates in
// place), failed ones aside, never leave fewer than minAvailable ready, unless the target is 0.
func TestPropertyAvailability(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		p := rollout.Decide(in)
		m := newModel(in)
		if m.n == 0 {
			return
		}
		orig := byName(in.Bindings)
		readyLeft := 0
		for _, b := range in.Bindings {
			if m.ready[b.Name] && !b.Deleting {
				readyLeft++
			}
		}
		disrupted := 0
		for _, c := range p.Delete {
			if m.ready[c.Binding.Name] && !m.failed[c.Binding.Name] {
				disrupted++
			}
		}
		for _, c := range p.Bind {
			if orig[c.Binding.Name].State == placement.Bound && m.ready[c.Binding.Name] && !m.failed[c.Binding.Name] {
				disrupted++
			}
		}
		if minAvailable := m.n - m.maxUnavailable; disrupted > 0 && readyLeft-disrupted < minAvailable {
			t.Fatalf("Decide(%v) disrupts %d ready bindings leaving %d ready, want at least minAvailable %d (plan %v)",
				in.Bindings, disrupted, readyLeft-disrupted, minAvailable, summarize(p))
		}
	})
}

// TestPropertySurge: new clusters are bound only within maxToAdd, so bindings holding
// resources (Bound or Unscheduled, not failed) plus the newly bound never exceed N + maxSurge
// because of this plan. Only Scheduled bindings become Bound, only Unscheduled ones are deleted.
func TestPropertySurge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		p := rollout.Decide(in)
		m := newModel(in)
		orig := byName(in.Bindings)
		holding := 0
		for _, b := range in.Bindings {
			if (b.State == placement.Bound || b.State == placement.Unscheduled) && !m.failed[b.Name] {
				holding++
			}
		}
		added := 0
		for _, c := range p.Bind {
			o := orig[c.Binding.Name]
			switch {
			case o.Deleting || o.State == placement.Unscheduled:
				t.Fatalf("Decide binds %s (state %s, deleting %v), want only live Scheduled or Bound bindings", o.Name, o.State, o.Deleting)
			case o.State == placement.Scheduled:
				added++
			}
			if c.Binding.Generation != o.Generation+1 || c.Binding.State != placement.Bound ||
				c.Binding.ResourceSnapshotName != in.LatestResourceSnapshot ||
				!condition.IsTrue(c.Binding.Conditions, condition.TypeRolloutStarted, c.Binding.Generation) {
				t.Fatalf("Decide binds %+v, want Bound at generation %d on %s with RolloutStarted True", c.Binding, o.Generation+1, in.LatestResourceSnapshot)
			}
		}
		for _, c := range p.Delete {
			if o := orig[c.Binding.Name]; o.State != placement.Unscheduled || o.Deleting {
				t.Fatalf("Decide deletes %s (state %s, deleting %v), want only Unscheduled bindings not being deleted", o.Name, o.State, o.Deleting)
			}
		}
		if added > 0 && holding+added > m.n+m.maxSurge {
			t.Fatalf("Decide binds %d new clusters with %d holding resources, want at most N %d + maxSurge %d (plan %v)",
				added, holding, m.n, m.maxSurge, summarize(p))
		}
		seen := map[string]bool{}
		for _, l := range [][]rollout.Change{p.Bind, p.Delete, p.Wait, p.Refresh} {
			for _, c := range l {
				if seen[c.Binding.Name] {
					t.Fatalf("Decide lists binding %s twice (plan %v)", c.Binding.Name, summarize(p))
				}
				seen[c.Binding.Name] = true
			}
		}
	})
}

// TestPropertyPermutation: the plan does not depend on the order of the bindings, and the
// input is left alone.
func TestPropertyPermutation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		before := deepCopy(in.Bindings)
		want := rollout.Decide(in)
		if diff := cmp.Diff(before, deref(in.Bindings)); diff != "" {
			t.Fatalf("Decide modified its input (-before +after):\n%s", diff)
		}
		in.Bindings = rapid.Permutation(in.Bindings).Draw(t, "permutation")
		got := rollout.Decide(in)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Decide(permuted) = %v, want %v (-want +got):\n%s", summarize(got), summarize(want), diff)
		}
	})
}

// TestPropertyIdempotent: applying the plan's Wait and Refresh changes and deciding again
// gives the same Bind and Delete, and no more condition writes.
func TestPropertyIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		first := rollout.Decide(in)
		next := map[string]*placement.Binding{}
		for _, l := range [][]rollout.Change{first.Wait, first.Refresh} {
			for _, c := range l {
				b := c.Binding
				next[b.Name] = &b
			}
		}
		bs := make([]*placement.Binding, len(in.Bindings))
		for i, b := range in.Bindings {
			bs[i] = b
			if nb, ok := next[b.Name]; ok {
				bs[i] = nb
			}
		}
		in.Bindings = bs
		again := rollout.Decide(in)
		if diff := cmp.Diff(first.Bind, again.Bind); diff != "" {
			t.Fatalf("Decide(after Wait).Bind differs (-first +again):\n%s", diff)
		}
		if diff := cmp.Diff(first.Delete, again.Delete); diff != "" {
			t.Fatalf("Decide(after Wait).Delete differs (-first +again):\n%s", diff)
		}
		if len(again.Wait) != 0 || len(again.Refresh) != 0 {
			t.Fatalf("Decide(after Wait) = %v, want no Wait or Refresh", summarize(again))
		}
		if diff := cmp.Diff(first.Held, again.Held); diff != "" {
			t.Fatalf("Decide(after Wait).Held differs (-first +again):\n%s", diff)
		}
	})
}
