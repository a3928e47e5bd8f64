package invariants

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// rolloutStore is placement "p" (PickN n, maxUnavailable mu, maxSurge ms) with k Bound,
// ready bindings b0… on c0… and members c0…c9.
func rolloutStore(n int32, mu, ms intstr.IntOrString, k int) fakeStore {
	crp := placement.ClusterResourcePlacement{}
	crp.Name = "p"
	crp.Spec.Policy = &placement.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n}
	crp.Spec.Strategy = placement.RolloutStrategy{Type: placement.RollingUpdateStrategy,
		RollingUpdate: &placement.RollingUpdateConfig{MaxUnavailable: &mu, MaxSurge: &ms}}
	st := fakeStore{
		placements: map[string]*mhub.Placement{"p": {CRP: crp, PolicySnapshots: []*placement.PolicySnapshot{{Name: "p-0", Policy: crp.Spec.Policy, NumberOfClusters: n}}}},
		bindings:   map[string][]*placement.Binding{},
		members:    map[string]*mhub.MemberCluster{},
		evictions:  map[string]*eviction.Eviction{},
		budgets:    map[string]*eviction.DisruptionBudget{},
	}
	for i := range 10 {
		st.members[fmt.Sprintf("c%d", i)] = &mhub.MemberCluster{Member: &member.Member{Name: fmt.Sprintf("c%d", i)}}
	}
	for i := range k {
		b := &placement.Binding{Name: fmt.Sprintf("b%d", i), Placement: "p", TargetCluster: fmt.Sprintf("c%d", i), State: placement.Bound, Generation: 1}
		ready(b)
		st.bindings["p"] = append(st.bindings["p"], b)
	}
	return st
}

func ready(b *placement.Binding) {
	b.Conditions = nil
	condition.Set(&b.Conditions, condition.True(condition.TypeApplied, "Applied", ""), b.Generation, t0)
	condition.Set(&b.Conditions, condition.True(condition.TypeAvailable, "Available", ""), b.Generation, t0)
}

// update bumps a binding's generation, as the rollout does; it is not ready at the new one.
func update(st fakeStore, name string) *placement.Binding {
	b := st.Binding(name)
	b.Generation++
	b.State = placement.Bound
	return b
}

func TestRolloutChecks(t *testing.T) {
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	tests := []struct {
		name string
		// before builds the store; step changes it and returns the bindings it created.
		before func() fakeStore
		step   func(st fakeStore) []placement.Binding
		want   string // the violated invariant, "" for none
	}{
		{
			name:   "one of four updated in place, maxUnavailable 1",
			before: func() fakeStore { return rolloutStore(4, one, zero, 4) },
			step:   func(st fakeStore) []placement.Binding { update(st, "b0"); return nil },
		},
		{
			name:   "two of four updated in place, maxUnavailable 1",
			before: func() fakeStore { return rolloutStore(4, one, zero, 4) },
			step:   func(st fakeStore) []placement.Binding { update(st, "b0"); update(st, "b1"); return nil },
			want:   "maxUnavailable",
		},
		{
			name: "a new cluster bound at N + maxSurge",
			before: func() fakeStore {
				st := rolloutStore(2, one, one, 1)
				st.bindings["p"] = append(st.bindings["p"], &placement.Binding{Name: "b5", Placement: "p", TargetCluster: "c5", State: placement.Scheduled, Generation: 1})
				return st
			},
			step: func(st fakeStore) []placement.Binding { update(st, "b5"); return nil },
		},
		{
			name: "a new cluster bound beyond N + maxSurge",
			before: func() fakeStore {
				st := rolloutStore(2, one, zero, 2)
				st.bindings["p"] = append(st.bindings["p"], &placement.Binding{Name: "b5", Placement: "p", TargetCluster: "c5", State: placement.Scheduled, Generation: 1})
				return st
			},
			step: func(st fakeStore) []placement.Binding { update(st, "b5"); return nil },
			want: "maxSurge",
		},
		{
			name:   "a binding picked on an untolerated taint",
			before: func() fakeStore { return rolloutStore(4, one, zero, 1) },
			step: func(st fakeStore) []placement.Binding {
				st.members["c7"].Member.Taints = []member.Taint{{Key: "k", Effect: member.NoSchedule}}
				b := &placement.Binding{Name: "b7", Placement: "p", TargetCluster: "c7", State: placement.Scheduled, Generation: 1}
				st.bindings["p"] = append(st.bindings["p"], b)
				return []placement.Binding{*b}
			},
			want: "tolerated",
		},
		{
			name:   "a binding picked on an unknown member",
			before: func() fakeStore { return rolloutStore(4, one, zero, 1) },
			step: func(st fakeStore) []placement.Binding {
				b := &placement.Binding{Name: "bx", Placement: "p", TargetCluster: "nowhere", State: placement.Scheduled, Generation: 1}
				st.bindings["p"] = append(st.bindings["p"], b)
				return []placement.Binding{*b}
			},
			want: "tolerated",
		},
		{
			name:   "an eviction its budget allows",
			before: evictionStore(1),
			step:   evict,
		},
		{
			name:   "an eviction executed against its budget",
			before: evictionStore(2),
			step:   evict,
			want:   "evictionBudget",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.before()
			ro := NewRollout(st)
			created := tc.step(st)
			err := ro.Check(st, created, t0)
			got := ""
			if err != nil {
				got = invariantOf(err.Error())
				t.Logf("%v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violated invariant (-want +got):\n%s", diff)
			}
		})
	}
}

// evictionStore: two ready bindings and a budget of minAvailable min.
func evictionStore(min int) func() fakeStore {
	return func() fakeStore {
		st := rolloutStore(2, intstr.FromInt32(1), intstr.FromInt32(0), 2)
		m := intstr.FromInt32(int32(min))
		st.budgets["p"] = &eviction.DisruptionBudget{Spec: eviction.DisruptionBudgetSpec{MinAvailable: &m}}
		e := &eviction.Eviction{Spec: eviction.EvictionSpec{PlacementName: "p", ClusterName: "c0"}}
		e.Name = "e"
		st.evictions["e"] = e
		return st
	}
}

// evict executes eviction e: b0 is deleted and the eviction says allowed by the budget.
func evict(st fakeStore) []placement.Binding {
	st.bindings["p"] = st.bindings["p"][1:]
	e := st.evictions["e"]
	condition.Set(&e.Status.Conditions, condition.True(eviction.TypeValid, "Valid", eviction.MessageValid), 0, t0)
	condition.Set(&e.Status.Conditions, condition.True(eviction.TypeExecuted, "Executed", fmt.Sprintf(eviction.FormatAllowedByBudget, 2, 2)), 0, t0)
	return nil
}

func invariantOf(msg string) string {
	var name string
	fmt.Sscanf(msg, "invariant %s", &name)
	return name[:len(name)-1] // drop the colon
}
