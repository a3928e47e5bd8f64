package scheduler_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
)

// step is one scheduling cycle in a sequence: change the fleet or the policy, schedule,
// apply the plan, and check the outcome.
type step struct {
	name   string
	change func(f *fleet)
	want   outcome
}

type fleet struct {
	members  []*member.Member
	snapshot *placement.PolicySnapshot
	bindings []*placement.Binding
}

func (f *fleet) get(name string) *member.Member {
	for _, m := range f.members {
		if m.Name == name {
			return m
		}
	}
	panic("no member " + name)
}

func runSteps(t *testing.T, f *fleet, steps []step) {
	t.Helper()
	for _, st := range steps {
		if st.change != nil {
			st.change(f)
		}
		plan, err := scheduler.Schedule(scheduler.Input{Snapshot: f.snapshot, Members: f.members, Bindings: f.bindings, Now: now})
		if err != nil {
			t.Fatalf("%s: Schedule error: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, outcomeOf(plan)); diff != "" {
			t.Fatalf("%s: Schedule outcome mismatch (-want +got):\n%s", st.name, diff)
		}
		f.bindings = apply(f.bindings, plan)
	}
}

// TestTaintsAndTolerations follows the taints how-to (TAINT-1) [Using Taints and Tolerations › Adding taint to MemberCluster].
func TestTaintsAndTolerations(t *testing.T) {
	f := &fleet{members: []*member.Member{cluster("kind-cluster-1", taint("test-key1", "test-value1"))}}
	pickAll := policy(t, "placementType: PickAll")
	runSteps(t, f, []step{
		{
			name:   "a tainted cluster gets nothing, yet PickAll is fulfilled [Using Taints and Tolerations › Adding taint to MemberCluster]",
			change: func(f *fleet) { f.snapshot = snapshot(pickAll, 0) },
			want:   outcome{Scheduled: yes, Reason: fulfilled},
		},
		{
			name:   "removing the taint places the resources [Using Taints and Tolerations › Removing taint from MemberCluster]",
			change: func(f *fleet) { f.get("kind-cluster-1").Taints = nil },
			want:   outcome{Create: []string{"kind-cluster-1"}, Scheduled: yes, Reason: fulfilled},
		},
	})

	f = &fleet{members: []*member.Member{cluster("kind-cluster-1", taint("test-key1", "test-value1"))}}
	runSteps(t, f, []step{
		{
			name:   "a tainted cluster is not picked [Using Taints and Tolerations › Adding toleration to ClusterResourcePlacement]",
			change: func(f *fleet) { f.snapshot = snapshot(pickAll, 0) },
			want:   outcome{Scheduled: yes, Reason: fulfilled},
		},
		{
			name: "an Exists toleration places the resources [Using Taints and Tolerations › Example MemberCluster with taint]",
			change: func(f *fleet) {
				f.snapshot = snapshot(policy(t, "placementType: PickAll\ntolerations:\n  - key: test-key1\n    operator: Exists"), 1)
			},
			want: outcome{Create: []string{"kind-cluster-1"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name: "a new untolerated taint changes nothing for a placed cluster [Using Taints and Tolerations › Example MemberCluster with taint]",
			change: func(f *fleet) {
				m := f.get("kind-cluster-1")
				m.Taints = append(m.Taints, member.Taint{Key: "test-key2", Value: "test-value2", Effect: member.NoSchedule})
			},
			want: outcome{Scheduled: yes, Reason: fulfilled},
		},
	})
}

// TestIgnoredDuringExecution: picked clusters stay picked until they leave (CRP-POL-IDE,
// SCHED-IDE-1) [Using the ClusterResourcePlacement API › A few more points about scheduling policies].
func TestIgnoredDuringExecution(t *testing.T) {
	f := &fleet{members: []*member.Member{
		cluster("a", labels("env=prod")), cluster("b", labels("env=prod")), cluster("c", labels("env=prod")),
	}}
	p := policy(t, `
placementType: PickN
numberOfClusters: 2
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels:
            env: prod`)
	runSteps(t, f, []step{
		{name: "initial picks", change: func(f *fleet) { f.snapshot = snapshot(p, 0) }, want: outcome{Create: []string{"b", "c"}, Scheduled: yes, Reason: fulfilled}},
		{name: "losing the required label keeps the placement", change: func(f *fleet) { delete(f.get("c").Labels, "env") }, want: outcome{Scheduled: yes, Reason: fulfilled}},
		{name: "becoming unhealthy keeps the placement", change: func(f *fleet) {
			f.get("b").Agent.Healthy, f.get("b").Agent.HealthTransition = false, now.Add(-time.Hour)
		}, want: outcome{Scheduled: yes, Reason: fulfilled}},
		{name: "a disconnected cluster keeps the placement", change: func(f *fleet) {
			f.get("b").Agent.LastHeartbeat = now.Add(-time.Hour)
		}, want: outcome{Scheduled: yes, Reason: fulfilled}},
		{name: "a leaving cluster is unpicked and replaced", change: func(f *fleet) { f.get("c").Leaving = true },
			want: outcome{Create: []string{"a"}, Unschedule: []string{"c"}, Scheduled: yes, Reason: fulfilled}},
		{name: "a cluster that is gone is unpicked; nothing is left to replace it", change: func(f *fleet) { f.members = []*member.Member{f.get("a"), f.get("c")} },
			want: outcome{Unschedule: []string{"b"}, Scheduled: no, Reason: unfulfilled}},
	})
}

// TestScaling: numberOfClusters changes update the snapshot's annotation; scale out adds
// only the extra clusters, scale in drops the weakest first (CRP-POL-SCALE) [Using the ClusterResourcePlacement API › Up-scaling and downscaling].
func TestScaling(t *testing.T) {
	f := &fleet{members: []*member.Member{
		cluster("a", labels("tier=gold")), cluster("b"), cluster("c", labels("tier=gold")), cluster("d"), cluster("e"),
	}}
	p := policy(t, `
placementType: PickN
numberOfClusters: 2
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 50
      preference:
        labelSelector:
          matchLabels:
            tier: gold`)
	setN := func(n int32) func(*fleet) { return func(f *fleet) { f.snapshot.NumberOfClusters = n } }
	runSteps(t, f, []step{
		{name: "pick the two gold clusters", change: func(f *fleet) { f.snapshot = snapshot(p, 0) }, want: outcome{Create: []string{"a", "c"}, Scheduled: yes, Reason: fulfilled}},
		{name: "scale out to 4 adds the two greatest names", change: setN(4), want: outcome{Create: []string{"d", "e"}, Scheduled: yes, Reason: fulfilled}},
		{name: "bind two of them", change: func(f *fleet) {
			for _, b := range f.bindings {
				if b.TargetCluster == "a" || b.TargetCluster == "d" {
					b.State = placement.Bound
				}
			}
		}, want: outcome{Scheduled: yes, Reason: fulfilled}},
		// Scheduled bindings go first (c score 50, e score 0: e is weaker), then Bound ones by score.
		{name: "scale in to 3 drops the weakest Scheduled binding", change: setN(3), want: outcome{Unschedule: []string{"e"}, Scheduled: yes, Reason: fulfilled}},
		{name: "scale in to 1 drops Scheduled c, then Bound d (score 0) before Bound a (50)", change: setN(1), want: outcome{Unschedule: []string{"c", "d"}, Scheduled: yes, Reason: fulfilled}},
		{name: "scale out again reuses Unscheduled bindings instead of creating new ones", change: setN(3), want: outcome{Update: []string{"c", "e"}, Scheduled: yes, Reason: fulfilled}},
	})
	for _, b := range f.bindings {
		want := map[string]placement.BindingState{"a": placement.Bound, "c": placement.Scheduled, "d": placement.Unscheduled, "e": placement.Scheduled, "b": ""}[b.TargetCluster]
		if b.State != want {
			t.Errorf("binding on %s: state %s, want %s", b.TargetCluster, b.State, want)
		}
	}
	if len(f.bindings) != 4 {
		t.Errorf("got %d bindings, want 4 (no duplicates): %v", len(f.bindings), f.bindings)
	}
}

// TestPolicyChangeMovesPlacements: a new policy snapshot re-evaluates obsolete bindings
// (TUT-MIGRATE-AFFINITY) [Resource Migration Across Clusters].
func TestPolicyChangeMovesPlacements(t *testing.T) {
	loc := func(l string) clusterOpt { return labels("fleet.azure.com/location=" + l) }
	f := &fleet{members: []*member.Member{
		cluster("aks-member-1", loc("westus")), cluster("aks-member-2", loc("westus")), cluster("aks-member-3", loc("westus")),
		cluster("aks-member-4", loc("westeurope")), cluster("aks-member-5", loc("westeurope")),
	}}
	byLocation := func(l string, index int) *placement.PolicySnapshot {
		return snapshot(policy(t, `
placementType: PickN
numberOfClusters: 2
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels:
            fleet.azure.com/location: `+l), index)
	}
	runSteps(t, f, []step{
		{name: "westus", change: func(f *fleet) { f.snapshot = byLocation("westus", 0) }, want: outcome{Create: []string{"aks-member-2", "aks-member-3"}, Scheduled: yes, Reason: fulfilled}},
		{name: "westeurope moves both", change: func(f *fleet) { f.snapshot = byLocation("westeurope", 1) },
			want: outcome{Create: []string{"aks-member-4", "aks-member-5"}, Unschedule: []string{"aks-member-2", "aks-member-3"}, Scheduled: yes, Reason: fulfilled}},
	})

	// Re-picking a cluster under a new snapshot patches its binding rather than replacing it.
	f = &fleet{members: []*member.Member{cluster("a"), cluster("b"), cluster("c")}}
	runSteps(t, f, []step{
		{name: "PickN 2", change: func(f *fleet) { f.snapshot = snapshot(policy(t, "placementType: PickN\nnumberOfClusters: 2"), 0) }, want: outcome{Create: []string{"b", "c"}, Scheduled: yes, Reason: fulfilled}},
		{name: "a new snapshot prefers the clusters already holding the placement", change: func(f *fleet) {
			f.snapshot = snapshot(policy(t, "placementType: PickN\nnumberOfClusters: 2\ntolerations:\n  - key: x\n    operator: Exists"), 1)
		}, want: outcome{Update: []string{"b", "c"}, Scheduled: yes, Reason: fulfilled}},
	})
	for _, b := range f.bindings {
		if b.SchedulingPolicySnapshotName != "crp-1" {
			t.Errorf("binding %s names snapshot %s, want crp-1", b.Name, b.SchedulingPolicySnapshotName)
		}
	}
}

// TestExistingBindings covers the bind step's bookkeeping.
func TestExistingBindings(t *testing.T) {
	pickAll := snapshot(nil, 0)
	cases := []struct {
		name     string
		members  []*member.Member
		bindings []*placement.Binding
		want     outcome
		reason   string // of the first Unschedule, when any
	}{
		{
			name:     "a current binding is kept as it is",
			members:  []*member.Member{cluster("a")},
			bindings: []*placement.Binding{binding("a", placement.Bound, "crp-0")},
			want:     outcome{Scheduled: yes, Reason: fulfilled},
		},
		{
			name:     "a binding being deleted blocks a new pick on its cluster",
			members:  []*member.Member{cluster("a")},
			bindings: []*placement.Binding{func() *placement.Binding { b := binding("a", placement.Bound, "crp-0"); b.Deleting = true; return b }()},
			want:     outcome{Scheduled: yes, Reason: fulfilled},
		},
		{
			name:    "an Unscheduled binding is restored to its previous state",
			members: []*member.Member{cluster("a")},
			bindings: []*placement.Binding{func() *placement.Binding {
				b := binding("a", placement.Unscheduled, "crp-0")
				b.PreviousState = placement.Bound
				return b
			}()},
			want: outcome{Update: []string{"a"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name:     "a binding on a cluster not in the fleet is unscheduled",
			members:  []*member.Member{cluster("a")},
			bindings: []*placement.Binding{binding("gone", placement.Bound, "crp-0")},
			want:     outcome{Create: []string{"a"}, Unschedule: []string{"gone"}, Scheduled: yes, Reason: fulfilled},
			reason:   "cluster is not found in the fleet",
		},
		{
			name:    "a duplicate live binding is unscheduled and the current one kept",
			members: []*member.Member{cluster("a")},
			bindings: []*placement.Binding{
				binding("a", placement.Bound, "crp-0"),
				func() *placement.Binding {
					b := binding("a", placement.Scheduled, "crp-0")
					b.Name = "crp-a-dup"
					return b
				}(),
			},
			want:   outcome{Unschedule: []string{"a"}, Scheduled: yes, Reason: fulfilled},
			reason: "another binding of this placement already targets the cluster",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := scheduler.Schedule(scheduler.Input{Snapshot: pickAll, Members: tc.members, Bindings: tc.bindings, Now: now})
			if err != nil {
				t.Fatalf("Schedule error: %v", err)
			}
			if diff := cmp.Diff(tc.want, outcomeOf(plan)); diff != "" {
				t.Errorf("Schedule outcome mismatch (-want +got):\n%s", diff)
			}
			if tc.reason != "" && (len(plan.Unschedule) == 0 || plan.Unschedule[0].Reason != tc.reason) {
				t.Errorf("Schedule unschedule reasons = %v, want first %q", plan.Unschedule, tc.reason)
			}
			for _, u := range plan.Update {
				if u.Binding.State != placement.Bound {
					t.Errorf("restored binding %s has state %s, want Bound", u.Binding.Name, u.Binding.State)
				}
			}
		})
	}
}

// TestEligibilityReasons checks each eligibility rule and its message (MC-HEARTBEAT-HEALTH).
func TestEligibilityReasons(t *testing.T) {
	cases := []struct {
		name   string
		opt    clusterOpt
		reason string
	}{
		{"leaving", leaving, "cluster has left the fleet"},
		{"agent never reported", agent(func(a *member.AgentStatus) { a.Present = false }), "cluster is not connected to the fleet: member agent not online yet"},
		{"stale heartbeat", agent(func(a *member.AgentStatus) { a.LastHeartbeat = now.Add(-5*time.Minute - 30*time.Second) }),
			"cluster is not connected to the fleet: no recent heartbeat signals (last received 5.50 minutes ago)"},
		{"not joined", agent(func(a *member.AgentStatus) { a.Joined = false }), "cluster is not connected to the fleet: member agent not joined yet"},
		{"no health condition", agent(func(a *member.AgentStatus) { a.HealthKnown = false }), "cluster is not connected to the fleet: health condition not available"},
		{"unhealthy for long", agent(func(a *member.AgentStatus) { a.Healthy, a.HealthTransition = false, now.Add(-6*time.Minute) }),
			"cluster is not connected to the fleet: unhealthy for a prolonged period of time (last transitioned 6.00 minutes ago)"},
		{"briefly unhealthy is tolerated", agent(func(a *member.AgentStatus) { a.Healthy, a.HealthTransition = false, now.Add(-4*time.Minute) }), ""},
		{"heartbeat exactly at the limit is fine", agent(func(a *member.AgentStatus) { a.LastHeartbeat = now.Add(-5 * time.Minute) }), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := scheduler.Schedule(scheduler.Input{Snapshot: snapshot(nil, 0), Members: []*member.Member{cluster("m", tc.opt)}, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := decisionFor(plan, "m")
			want := placement.ClusterDecision{ClusterName: "m", Selected: true, Reason: scheduler.ReasonPicked}
			if tc.reason != "" {
				want = placement.ClusterDecision{ClusterName: "m", Reason: "ClusterUnschedulable, " + tc.reason, Plugin: scheduler.PluginClusterEligibility}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Schedule decision for m (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOtherKindsAreIgnored: a placement for clusters never lands on a machine.
func TestOtherKindsAreIgnored(t *testing.T) {
	m := cluster("machine-1")
	m.Kind = member.KindMachine
	plan, err := scheduler.Schedule(scheduler.Input{Snapshot: snapshot(nil, 0), Members: []*member.Member{m, cluster("c")}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(outcome{Create: []string{"c"}, Scheduled: yes, Reason: fulfilled}, outcomeOf(plan)); diff != "" {
		t.Errorf("Schedule outcome (-want +got):\n%s", diff)
	}
}

// TestDecisionLimit: at most MaxDecisions decisions, selected ones always included.
func TestDecisionLimit(t *testing.T) {
	var ms []*member.Member
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		ms = append(ms, cluster(n))
	}
	s := scheduler.New(scheduler.Options{MaxDecisions: 4})
	plan, err := s.Schedule(scheduler.Input{Snapshot: snapshot(policy(t, "placementType: PickN\nnumberOfClusters: 2"), 0), Members: ms, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range plan.Decisions {
		got = append(got, d.ClusterName)
	}
	// Selected f, e by name; then the best of the rest by rank: d, c.
	if diff := cmp.Diff([]string{"e", "f", "d", "c"}, got); diff != "" {
		t.Errorf("Schedule decisions (-want +got):\n%s", diff)
	}
}

// TestPickFixedDisconnectedNamedCluster: a named cluster that disconnects keeps its binding
// (IgnoredDuringExecution) but the placement is no longer fulfilled (CRP-POL-PICKFIXED) [CRP Schedule Failure TSG › Instances where this condition may arise].
func TestPickFixedDisconnectedNamedCluster(t *testing.T) {
	a := cluster("a", agent(func(s *member.AgentStatus) { s.LastHeartbeat = now.Add(-time.Hour) }))
	plan, err := scheduler.Schedule(scheduler.Input{
		Snapshot: snapshot(policy(t, "placementType: PickFixed\nclusterNames: [a]"), 0),
		Members:  []*member.Member{a},
		Bindings: []*placement.Binding{binding("a", placement.Bound, "crp-0")},
		Now:      now,
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(outcome{Scheduled: no, Reason: unfulfilled}, outcomeOf(plan)); diff != "" {
		t.Errorf("Schedule outcome (-want +got):\n%s", diff)
	}
	if plan.Placed != 1 {
		t.Errorf("Schedule placed = %d, want 1 (the binding stays)", plan.Placed)
	}
}

// TestDecisionLimitCapsMissingFixedNames: PickFixed names that match no member count toward
// MaxDecisions like any other unselected cluster.
func TestDecisionLimitCapsMissingFixedNames(t *testing.T) {
	s := scheduler.New(scheduler.Options{MaxDecisions: 3})
	plan, err := s.Schedule(scheduler.Input{
		Snapshot: snapshot(policy(t, "placementType: PickFixed\nclusterNames: [a, g1, g2, g3, g4, g5]"), 0),
		Members:  []*member.Member{cluster("a")},
		Now:      now,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range plan.Decisions {
		got = append(got, d.ClusterName+"/"+d.Reason)
	}
	want := []string{"a/" + plan.Decisions[0].Reason, "g1/" + scheduler.ReasonNotFound, "g2/" + scheduler.ReasonNotFound}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schedule decisions (-want +got):\n%s", diff)
	}
}

// TestNegativeNumberOfClustersIsAnError: Schedule is public; input validation would reject
// this, but Schedule itself must answer with an error, not a panic.
func TestNegativeNumberOfClustersIsAnError(t *testing.T) {
	snap := snapshot(policy(t, "placementType: PickN\nnumberOfClusters: 1"), 0)
	snap.NumberOfClusters = -1
	_, err := scheduler.Schedule(scheduler.Input{Snapshot: snap, Members: []*member.Member{cluster("a")}, Now: now})
	if err == nil || !strings.Contains(err.Error(), "numberOfClusters -1 is negative") {
		t.Errorf("Schedule(numberOfClusters -1) = %v, want a negative numberOfClusters error", err)
	}
}
