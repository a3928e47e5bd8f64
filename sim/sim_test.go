package sim

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
)

func newSim(t *testing.T, cfg Config) *Sim {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func addMembers(t *testing.T, s *Sim, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := s.AddMember(MemberSpec{Name: n, Labels: map[string]string{"name": n}}); err != nil {
			t.Fatal(err)
		}
	}
}

// memberState summarises a member's Joined and Healthy conditions and eligibility.
type memberState struct {
	Joined, Healthy string
	Eligible        bool
	Exists          bool
}

func stateOf(s *Sim, name string) memberState {
	st, ok := s.Member(name)
	if !ok {
		return memberState{}
	}
	out := memberState{Exists: true, Eligible: st.Eligible}
	if c, ok := ConditionOf(st.Conditions, membership.TypeJoined); ok {
		out.Joined = c.Status + "/" + c.Reason
	}
	if c, ok := ConditionOf(st.Conditions, membership.TypeHealthy); ok {
		out.Healthy = c.Status + "/" + c.Reason
	}
	return out
}

var (
	joinedHealthy = memberState{Exists: true, Eligible: true, Joined: "True/MemberClusterJoined", Healthy: "True/MemberClusterHealthy"}
	timedOut      = memberState{Exists: true, Joined: "True/MemberClusterJoined", Healthy: "Unknown/MemberClusterHeartbeatTimeout"}
)

// TestMemberLifecycle is a table of member lifecycle cases: each applies actions at given
// times and checks the member's state at given times.
func TestMemberLifecycle(t *testing.T) {
	type check struct {
		at   time.Duration
		want memberState
	}
	type action struct {
		at time.Duration
		do func(*Sim) error
	}
	cases := []struct {
		name    string
		cfg     Config
		actions []action
		checks  []check
	}{
		{
			name: "join: namespace and IMC, then the agent's first heartbeat makes it Joined and Healthy",
			checks: []check{
				{0, memberState{Exists: true}},
				// Hub 100ms, agent sync 1s, heartbeat 50ms, hub 100ms.
				{1249 * time.Millisecond, memberState{Exists: true, Eligible: true, Joined: "Unknown/MemberClusterJoinStateUnknown", Healthy: "Unknown/MemberClusterHealthUnknown"}},
				{1250 * time.Millisecond, joinedHealthy},
				{2 * time.Hour, joinedHealthy},
			},
		},
		{
			name:    "crash: heartbeats stop, Healthy goes Unknown once the last heartbeat is 5 minutes old",
			actions: []action{{10 * time.Minute, func(s *Sim) error { return s.Fail("m", Crash) }}},
			checks: []check{
				// Last heartbeat sent at 9m1.1s (every 60s from 1.1s), stale after 14m1.1s.
				{14*time.Minute + 1100*time.Millisecond, joinedHealthy},
				{14*time.Minute + 1101*time.Millisecond, memberState{Exists: true, Joined: "True/MemberClusterJoined", Healthy: "Unknown/MemberClusterHeartbeatTimeout"}},
			},
		},
		{
			name: "crash then heal: the agent restarts, joins again and is Healthy",
			actions: []action{
				{10 * time.Minute, func(s *Sim) error { return s.Fail("m", Crash) }},
				{20 * time.Minute, func(s *Sim) error { return s.Heal("m") }},
			},
			checks: []check{{19 * time.Minute, timedOut}, {20*time.Minute + 200*time.Millisecond, joinedHealthy}},
		},
		{
			name: "partition: the hub sees the same as a crash; heal restores it",
			actions: []action{
				{10 * time.Minute, func(s *Sim) error { return s.Fail("m", Partition) }},
				{30 * time.Minute, func(s *Sim) error { return s.Heal("m") }},
			},
			checks: []check{{29 * time.Minute, timedOut}, {31 * time.Minute, joinedHealthy}},
		},
		{
			name:    "clock skew: a member whose clock is 6 minutes slow looks disconnected",
			actions: []action{{10 * time.Minute, func(s *Sim) error { return s.SetClockSkew("m", -6*time.Minute) }}},
			checks:  []check{{9 * time.Minute, joinedHealthy}, {12 * time.Minute, timedOut}},
		},
		{
			name:    "clock skew within the timeout changes nothing",
			actions: []action{{10 * time.Minute, func(s *Sim) error { return s.SetClockSkew("m", -3*time.Minute) }}},
			checks:  []check{{30 * time.Minute, joinedHealthy}},
		},
		{
			name:    "message loss below the timeout keeps the member healthy",
			cfg:     Config{Network: Network{Loss: 0.3, Delay: Distribution{Kind: Uniform, Min: 10 * time.Millisecond, Max: 2 * time.Second}}},
			actions: nil,
			checks:  []check{{3 * time.Hour, joinedHealthy}},
		},
		{
			name:    "leave: IMC to Leave, agent acknowledges, namespace deleted, member gone",
			actions: []action{{5 * time.Minute, func(s *Sim) error { return s.DeleteMember("m") }}},
			checks: []check{
				{5*time.Minute + 50*time.Millisecond, memberState{Exists: true, Joined: "True/MemberClusterJoined", Healthy: "True/MemberClusterHealthy"}},
				{5*time.Minute + 3*time.Second, memberState{}},
			},
		},
		{
			name:    "leave while crashed: the hub stops waiting once the agent is unreachable",
			actions: []action{{5 * time.Minute, func(s *Sim) error { return s.Fail("m", Crash) }}, {6 * time.Minute, func(s *Sim) error { return s.DeleteMember("m") }}},
			checks:  []check{{7 * time.Minute, memberState{Exists: true, Joined: "Unknown/MemberClusterJoinStateUnknown", Healthy: "True/MemberClusterHealthy"}}, {10*time.Minute + 2*time.Second, memberState{}}},
		},
		{
			name:    "hub restart: members stay Joined and Healthy, controllers resume",
			actions: []action{{10 * time.Minute, func(s *Sim) error { s.RestartHub(); return nil }}},
			checks:  []check{{10*time.Minute + 5*time.Second, joinedHealthy}, {2 * time.Hour, joinedHealthy}},
		},
		{
			name:    "an agent reporting unhealthy makes the member Healthy=False",
			actions: []action{{10 * time.Minute, func(s *Sim) error { s.store.members["m"].agent.healthy = false; return nil }}},
			checks:  []check{{12 * time.Minute, memberState{Exists: true, Eligible: true, Joined: "True/MemberClusterJoined", Healthy: "False/MemberClusterUnhealthy"}}, {17 * time.Minute, memberState{Exists: true, Joined: "True/MemberClusterJoined", Healthy: "False/MemberClusterUnhealthy"}}},
		},
		{
			name: "SetMemberHealth (the scenario's memberHealth step): unhealthy from the next heartbeat, healthy again after",
			actions: []action{
				{10 * time.Minute, func(s *Sim) error { return s.SetMemberHealth("m", false) }},
				{20 * time.Minute, func(s *Sim) error { return s.SetMemberHealth("m", true) }},
			},
			checks: []check{
				{10*time.Minute + time.Second, joinedHealthy},
				{11*time.Minute + 2*time.Second, memberState{Exists: true, Eligible: true, Joined: "True/MemberClusterJoined", Healthy: "False/MemberClusterUnhealthy"}},
				{21*time.Minute + 2*time.Second, joinedHealthy},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, tc.cfg)
			addMembers(t, s, "m")
			for _, a := range tc.actions {
				s.At(a.at, "action", func() {
					if err := a.do(s); err != nil {
						t.Errorf("action at %s: %v", a.at, err)
					}
				})
			}
			for _, c := range tc.checks {
				s.Barrier(c.at, func() {
					if diff := cmp.Diff(c.want, stateOf(s, "m")); diff != "" {
						t.Errorf("member at %s (-want +got):\n%s", c.at, diff)
					}
				})
			}
			if _, err := s.Run(tc.checks[len(tc.checks)-1].at + time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func pickN(name string, n int32, labels ...string) placement.ClusterResourcePlacement {
	crp := placement.ClusterResourcePlacement{}
	crp.Name = name
	crp.Spec.ResourceSelectors = []placement.ResourceSelector{{Group: "", Version: "v1", Kind: "Namespace", Name: "app"}}
	crp.Spec.Policy = &placement.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n}
	return crp
}

// TestPlacementFollowsTheFleet: a PickN placement is scheduled once members join, keeps a
// crashed member (KubeFleet semantics), and replaces a member that leaves.
func TestPlacementFollowsTheFleet(t *testing.T) {
	s := newSim(t, Config{})
	addMembers(t, s, "a", "b", "c")
	s.At(time.Minute, "apply", func() {
		if err := s.ApplyPlacement(pickN("crp", 2)); err != nil {
			t.Fatal(err)
		}
	})
	s.At(10*time.Minute, "fail", func() { _ = s.Fail("c", Crash) })
	s.At(30*time.Minute, "leave", func() { _ = s.DeleteMember("b") })
	clusters := func() []string { p, _ := s.Placement("crp"); return p.Clusters }
	for _, c := range []struct {
		at   time.Duration
		want []string
	}{
		{2 * time.Minute, []string{"b", "c"}},
		{20 * time.Minute, []string{"b", "c"}}, // c crashed and is ineligible, but stays picked
		{31 * time.Minute, []string{"a", "c"}}, // b left; a replaces it
	} {
		s.Barrier(c.at, func() {
			if diff := cmp.Diff(c.want, clusters()); diff != "" {
				t.Errorf("clusters at %s (-want +got):\n%s", c.at, diff)
			}
		})
	}
	if _, err := s.Run(time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Member("b"); ok {
		t.Errorf("member b still exists after leaving")
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Network: Network{Loss: 1}},
		{Network: Network{Delay: Distribution{Kind: "gaussian"}}},
		{Network: Network{Delay: Distribution{Kind: Uniform, Min: time.Second, Max: time.Millisecond}}},
		{HubDelay: -time.Second},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error, want an error", cfg)
		}
	}
}

// runTraced runs a small fleet with faults and returns its hash and JSONL trace.
func runTraced(t *testing.T, seed uint64) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	s := newSim(t, Config{Seed: seed, Trace: &buf, HeartbeatJitter: 5 * time.Second,
		Network: Network{Loss: 0.05, Delay: Distribution{Kind: Exponential, Mean: 200 * time.Millisecond, Max: 5 * time.Second}}})
	for i := range 20 {
		_ = s.AddMember(MemberSpec{Name: fmt.Sprintf("m%02d", i), Labels: map[string]string{"zone": fmt.Sprint(i % 3)}})
	}
	s.At(time.Minute, "apply", func() { _ = s.ApplyPlacement(pickN("crp", 5)) })
	if err := s.RandomFaults(RandomFaults{MeanTimeBetweenFailures: 30 * time.Minute, MeanDuration: 10 * time.Minute, Until: 3 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	s.At(90*time.Minute, "restart", s.RestartHub)
	res, err := s.Run(4 * time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return res.TraceHash, buf.String()
}

// TestDeterminism: same seed ⇒ same hash and same JSONL; a different seed with random
// faults ⇒ a different hash. The GOMAXPROCS variants run in TestDeterminismAcrossProcs.
func TestDeterminism(t *testing.T) {
	h1, j1 := runTraced(t, 7)
	h2, j2 := runTraced(t, 7)
	if h1 != h2 || j1 != j2 {
		t.Fatalf("same seed gave hashes %s and %s (JSONL equal: %v)", h1, h2, j1 == j2)
	}
	if h3, _ := runTraced(t, 8); h3 == h1 {
		t.Errorf("seeds 7 and 8 gave the same hash %s", h1)
	}
	if len(j1) == 0 {
		t.Errorf("empty trace")
	}
}
