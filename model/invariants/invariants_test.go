package invariants

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

func TestChecks(t *testing.T) {
	pickN := func(n int32, tol ...placement.Toleration) *mhub.Placement {
		return &mhub.Placement{PolicySnapshots: []*placement.PolicySnapshot{{
			Policy: &placement.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n, Tolerations: tol}, NumberOfClusters: n}}}
	}
	b := func(name, cluster string, st placement.BindingState) *placement.Binding {
		return &placement.Binding{Name: name, Placement: "p", TargetCluster: cluster, State: st}
	}
	mc := func(leaving bool, taints ...member.Taint) *mhub.MemberCluster {
		return &mhub.MemberCluster{Member: &member.Member{Taints: taints, Leaving: leaving}}
	}
	taint := member.Taint{Key: "k", Effect: member.NoSchedule}
	spread := func(n int32, action placement.UnsatisfiableConstraintAction) *mhub.Placement {
		p := pickN(n)
		p.LatestPolicySnapshot().Policy.TopologySpreadConstraints = []placement.TopologySpreadConstraint{{TopologyKey: "zone", WhenUnsatisfiable: action}}
		return p
	}
	zone := func(z string) *mhub.MemberCluster {
		return &mhub.MemberCluster{Member: &member.Member{Labels: map[string]string{"zone": z}}}
	}
	zones := map[string]*mhub.MemberCluster{"c1": zone("a"), "c2": zone("a"), "c3": zone("a"), "c4": zone("b"), "c5": zone("b")}
	spreadBindings := func(clusters ...string) map[string][]*placement.Binding {
		var bs []*placement.Binding
		for i, c := range clusters {
			bs = append(bs, b(fmt.Sprintf("b%d", i+1), c, placement.Scheduled))
		}
		return map[string][]*placement.Binding{"p": bs}
	}
	tests := []struct {
		name    string
		store   fakeStore
		created []string // names of created bindings
		want    map[string]bool
	}{
		{
			name: "healthy",
			store: fakeStore{placements: map[string]*mhub.Placement{"p": pickN(2)},
				bindings: map[string][]*placement.Binding{"p": {b("b1", "c1", placement.Bound), b("b2", "c2", placement.Scheduled)}},
				members:  map[string]*mhub.MemberCluster{"c1": mc(false), "c2": mc(false)}},
			created: []string{"b2"},
			want:    map[string]bool{},
		},
		{
			name: "two bindings on one cluster, beyond N",
			store: fakeStore{placements: map[string]*mhub.Placement{"p": pickN(1)},
				bindings: map[string][]*placement.Binding{"p": {b("b1", "c1", placement.Bound), b("b2", "c1", placement.Scheduled)}},
				members:  map[string]*mhub.MemberCluster{"c1": mc(false)}},
			created: []string{"b2"},
			want:    map[string]bool{"oneBindingPerCluster": true, "pickNWithinLimit": true},
		},
		{
			name: "new binding on an untolerated taint and a leaving member",
			store: fakeStore{placements: map[string]*mhub.Placement{"p": pickN(3)},
				bindings: map[string][]*placement.Binding{"p": {b("b1", "c1", placement.Scheduled)}},
				members:  map[string]*mhub.MemberCluster{"c1": mc(true, taint)}},
			created: []string{"b1"},
			want:    map[string]bool{"noUntoleratedNewBindings": true, "bindingsOnKnownMembers": true},
		},
		{
			name: "tolerated taint; binding on an unknown member",
			store: fakeStore{placements: map[string]*mhub.Placement{"p": pickN(3, placement.Toleration{Key: "k", Operator: "Exists"})},
				bindings: map[string][]*placement.Binding{"p": {b("b1", "c9", placement.Scheduled)}},
				members:  map[string]*mhub.MemberCluster{}},
			created: []string{"b1"},
			want:    map[string]bool{"bindingsOnKnownMembers": true, "noBindingsOnGoneMembers": true},
		},
		{
			name: "an Unscheduled binding left on a member that is gone",
			store: fakeStore{placements: map[string]*mhub.Placement{"p": pickN(2)},
				bindings: map[string][]*placement.Binding{"p": {b("b1", "c1", placement.Bound), b("b2", "c2", placement.Unscheduled)}},
				members:  map[string]*mhub.MemberCluster{"c1": mc(false)}},
			want: map[string]bool{"noBindingsOnGoneMembers": true},
		},
		{
			name:    "a pick within a DoNotSchedule constraint's maxSkew (zone a 2, zone b 1)",
			store:   fakeStore{placements: map[string]*mhub.Placement{"p": spread(3, placement.DoNotSchedule)}, bindings: spreadBindings("c1", "c2", "c4"), members: zones},
			created: []string{"b2"},
			want:    map[string]bool{},
		},
		{
			name:    "a pick beyond a DoNotSchedule constraint's maxSkew (zone a 3, zone b 1)",
			store:   fakeStore{placements: map[string]*mhub.Placement{"p": spread(4, placement.DoNotSchedule)}, bindings: spreadBindings("c1", "c2", "c3", "c4"), members: zones},
			created: []string{"b3"},
			want:    map[string]bool{"topologySpread": true},
		},
		{
			name:    "the same skew under ScheduleAnyway",
			store:   fakeStore{placements: map[string]*mhub.Placement{"p": spread(4, placement.ScheduleAnyway)}, bindings: spreadBindings("c1", "c2", "c3", "c4"), members: zones},
			created: []string{"b3"},
			want:    map[string]bool{},
		},
		{
			name:  "the same skew after a step that picked nothing (a cluster left zone b)",
			store: fakeStore{placements: map[string]*mhub.Placement{"p": spread(4, placement.DoNotSchedule)}, bindings: spreadBindings("c1", "c2", "c3", "c4"), members: zones},
			want:  map[string]bool{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var created []placement.Binding
			for _, bs := range tc.store.bindings {
				for _, x := range bs {
					for _, n := range tc.created {
						if x.Name == n {
							created = append(created, *x)
						}
					}
				}
			}
			got := map[string]bool{}
			for name, check := range Checks {
				if err := check(tc.store, created); err != nil {
					got[name] = true
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violated invariants (-want +got):\n%s", diff)
			}
		})
	}
}
