package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/agentsystemd"
	"github.com/fleetsim/fleetsim/model/member"
)

// TestSimulatedAgentsActAsFleetDoes: the simulator's machine agents share the production
// agent's Memory (issue 30, items 8 and 9): a unit whose process fails right after its start
// is started once however many rounds its agent makes (every fleetctl step wakes every
// agent), reports launched, and after a stop reports loaded; a second start starts it once
// more.
func TestSimulatedAgentsActAsFleetDoes(t *testing.T) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddMember(MemberSpec{Name: "m1", Kind: member.KindMachine, HeartbeatPeriod: 15 * time.Second}); err != nil {
		t.Fatal(err)
	}
	s.store.members["m1"].agent.systemd.ExitsAfterStart["fails.service"] = agentsystemd.ExitFailure
	starts := 0
	s.Observe(func(_ time.Duration, kind, subject, detail string) {
		if kind == "systemd-start" && subject == "m1" && detail == "fails.service" {
			starts++
		}
	})
	const fails = "[Service]\nExecStart=/bin/false\n"
	step := func(at time.Duration, cmd, name, file string) {
		s.At(at, "test-"+cmd, func() {
			if err := s.Fleetctl(cmd, name, file); err != nil {
				t.Errorf("%s %s: %v", cmd, name, err)
			}
		})
	}
	step(30*time.Second, "start", "fails.service", fails)
	// Other units' steps make the agent reconcile many more rounds.
	for i, name := range []string{"a.service", "b.service", "c.service", "d.service", "e.service"} {
		step(time.Duration(60+10*i)*time.Second, "start", name, "[Service]\nExecStart=/bin/sleep 100"+string(rune('0'+i))+"\n")
	}
	type view struct {
		State   string
		Running []string
		Starts  int
	}
	var got []view
	look := func(at time.Duration) {
		s.At(at, "test-look", func() {
			u, _ := s.Unit("fails.service")
			got = append(got, view{u.State, u.Running, starts})
		})
	}
	look(3 * time.Minute)
	step(4*time.Minute, "stop", "fails.service", "")
	look(5 * time.Minute)
	step(6*time.Minute, "start", "fails.service", "")
	look(7 * time.Minute)
	if _, err := s.Run(8 * time.Minute); err != nil {
		t.Fatal(err)
	}
	want := []view{{"launched", []string{}, 1}, {"loaded", []string{}, 1}, {"launched", []string{}, 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fails.service over time (-want +got):\n%s", diff)
	}
}
