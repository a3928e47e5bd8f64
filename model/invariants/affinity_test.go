package invariants

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// TestPreferredAffinity: the check fires when the scheduler just picked a cluster whose
// preferred terms weigh less than an eligible cluster it left out, and stays silent on a
// correct pick and wherever something else than the preferred label terms decides.
func TestPreferredAffinity(t *testing.T) {
	beat := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // every member's last heartbeat
	term := func(w int32, k, v string) placement.PreferredClusterSelector {
		return placement.PreferredClusterSelector{Weight: w, Preference: placement.ClusterSelectorTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}}}
	}
	policy := func(n int32, terms ...placement.PreferredClusterSelector) *placement.PlacementPolicy {
		return &placement.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n,
			Affinity: &placement.Affinity{ClusterAffinity: &placement.ClusterAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}}
	}
	crp := func(p *placement.PlacementPolicy) map[string]*mhub.Placement {
		return map[string]*mhub.Placement{"p": {PolicySnapshots: []*placement.PolicySnapshot{{Policy: p, NumberOfClusters: *p.NumberOfClusters}}}}
	}
	cond := func(typ, status string) condition.Timed {
		return condition.Timed{Condition: condition.Condition{Type: typ, Status: metav1.ConditionStatus(status)}}
	}
	healthy := func(lbl map[string]string) *mhub.MemberCluster {
		return &mhub.MemberCluster{
			Member:     &member.Member{Labels: lbl, Agent: member.AgentStatus{Present: true, Joined: true, HealthKnown: true, Healthy: true, LastHeartbeat: beat}},
			Conditions: []condition.Timed{cond("Joined", "True"), cond("Healthy", "True")},
		}
	}
	gold := map[string]string{"tier": "gold"}
	bad := map[string]string{"tier": "bad"}
	// members: c1 and c2 gold (weight 20 under the usual policy), c3 plain (0).
	members := func(edit func(map[string]*mhub.MemberCluster)) map[string]*mhub.MemberCluster {
		ms := map[string]*mhub.MemberCluster{"c1": healthy(gold), "c2": healthy(gold), "c3": healthy(nil)}
		if edit != nil {
			edit(ms)
		}
		return ms
	}
	bind := func(name, cluster string, st placement.BindingState) *placement.Binding {
		return &placement.Binding{Name: name, Placement: "p", TargetCluster: cluster, State: st}
	}
	usual := policy(2, term(20, "tier", "gold"))
	tests := []struct {
		name     string
		policy   *placement.PlacementPolicy
		members  map[string]*mhub.MemberCluster
		bindings []*placement.Binding
		created  []string
		want     string // "" when the check passes
	}{
		{
			name:     "the two heaviest clusters picked",
			policy:   usual,
			members:  members(nil),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b2", "c2", placement.Scheduled)},
			created:  []string{"b1", "b2"},
		},
		{
			name:     "a lighter cluster picked over an eligible heavier one",
			policy:   usual,
			members:  members(nil),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
			want:     "PickN placement p picked c3, whose preferred affinity terms weigh 0, and left out the eligible cluster c2, whose terms weigh 20",
		},
		{
			name:     "a negative weight: the cluster it matches picked over one that matches nothing",
			policy:   policy(1, term(-20, "tier", "bad")),
			members:  members(func(ms map[string]*mhub.MemberCluster) { ms["c1"] = healthy(bad) }),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled)},
			created:  []string{"b1"},
			want:     "PickN placement p picked c1, whose preferred affinity terms weigh -20, and left out the eligible cluster c2, whose terms weigh 0",
		},
		{
			name:   "weights of matching terms add up",
			policy: policy(1, term(20, "tier", "gold"), term(15, "zone", "a"), term(10, "zone", "b")),
			members: members(func(ms map[string]*mhub.MemberCluster) {
				ms["c3"] = healthy(map[string]string{"zone": "a"})
				ms["c1"] = healthy(map[string]string{"zone": "b"})
			}),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled)},
			created:  []string{"b1"},
			want:     "PickN placement p picked c1, whose preferred affinity terms weigh 10, and left out the eligible cluster c2, whose terms weigh 20",
		},
		{
			name:     "a light pick kept from an earlier decision is not compared",
			policy:   usual,
			members:  members(nil),
			bindings: []*placement.Binding{bind("b3", "c3", placement.Bound), bind("b1", "c1", placement.Scheduled)},
			created:  []string{"b1"},
		},
		{
			name:     "the heavier cluster left out is unhealthy",
			policy:   usual,
			members:  members(func(ms map[string]*mhub.MemberCluster) { ms["c2"].Conditions[1] = cond("Healthy", "Unknown") }),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
		},
		{
			name:     "the heavier cluster left out has reported itself unhealthy",
			policy:   usual,
			members:  members(func(ms map[string]*mhub.MemberCluster) { ms["c2"].Member.Agent.Healthy = false }),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
		},
		{
			name:     "the heavier cluster left out sent its last heartbeat before every picked one",
			policy:   usual,
			members:  members(func(ms map[string]*mhub.MemberCluster) { ms["c2"].Member.Agent.LastHeartbeat = beat.Add(-time.Second) }),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
		},
		{
			name:     "the heavier cluster left out is leaving",
			policy:   usual,
			members:  members(func(ms map[string]*mhub.MemberCluster) { ms["c2"].Member.Leaving = true }),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
		},
		{
			name:   "the heavier cluster left out has an untolerated taint",
			policy: usual,
			members: members(func(ms map[string]*mhub.MemberCluster) {
				ms["c2"].Member.Taints = []member.Taint{{Key: "k", Effect: member.NoSchedule}}
			}),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
		},
		{
			name:     "the heavier cluster left out still holds a binding being removed",
			policy:   usual,
			members:  members(nil),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled), bind("b2", "c2", placement.Unscheduled)},
			created:  []string{"b1", "b3"},
		},
		{
			name: "a property sorter also scores",
			policy: func() *placement.PlacementPolicy {
				p := policy(2, term(20, "tier", "gold"))
				p.Affinity.ClusterAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.PropertySorter = &placement.PropertySorter{Name: "cpu", SortOrder: placement.Descending}
				return p
			}(),
			members:  members(nil),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
		},
		{
			name: "a required term also filters",
			policy: func() *placement.PlacementPolicy {
				p := policy(2, term(20, "tier", "gold"))
				p.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &placement.ClusterSelector{ClusterSelectorTerms: []placement.ClusterSelectorTerm{{}}}
				return p
			}(),
			members:  members(nil),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
		},
		{
			name: "a topology spread constraint also scores",
			policy: func() *placement.PlacementPolicy {
				p := policy(2, term(20, "tier", "gold"))
				p.TopologySpreadConstraints = []placement.TopologySpreadConstraint{{TopologyKey: "zone"}}
				return p
			}(),
			members:  members(nil),
			bindings: []*placement.Binding{bind("b1", "c1", placement.Scheduled), bind("b3", "c3", placement.Scheduled)},
			created:  []string{"b1", "b3"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := fakeStore{placements: crp(tc.policy), bindings: map[string][]*placement.Binding{"p": tc.bindings}, members: tc.members}
			var created []placement.Binding
			for _, n := range tc.created {
				created = append(created, *st.Binding(n))
			}
			got := ""
			if err := PreferredAffinity(st, created); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PreferredAffinity (-want +got):\n%s", diff)
			}
		})
	}
}
