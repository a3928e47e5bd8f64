package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/agentsystemd"
	"github.com/fleetsim/fleetsim/model/invariants"
	"github.com/fleetsim/fleetsim/model/member"
)

// TestUnitInvariantsReadTheSimulator: the unit invariants, read through the simulator's
// registry and machines, hold after every event of a small fleet with a global unit and a
// scheduled one, with the machines settled most of the time; a machine whose systemd
// stops the global unit, or starts the scheduled unit a second time, violates them.
func TestUnitInvariantsReadTheSimulator(t *testing.T) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []MemberSpec{
		{Name: "m1", Kind: member.KindMachine, Labels: map[string]string{"role": "worker"}, HeartbeatPeriod: 15 * time.Second},
		{Name: "m2", Kind: member.KindMachine, HeartbeatPeriod: 15 * time.Second},
	} {
		if err := s.AddMember(spec); err != nil {
			t.Fatal(err)
		}
	}
	const agent = "[Service]\nExecStart=/usr/bin/sleep infinity\n[X-Fleet]\nGlobal=true\nMachineMetadata=role=worker\n"
	const web = "[Service]\nExecStart=/usr/bin/sleep infinity\n[X-Fleet]\nMachineMetadata=role=worker\n"
	s.At(30*time.Second, "test-start", func() {
		for name, file := range map[string]string{"agent.service": agent, "web.service": web} {
			if err := s.Fleetctl("start", name, file); err != nil {
				t.Error(err)
			}
		}
	})
	var firstErr error
	settledWithGlobal := 0
	s.AfterEvent(func() {
		for _, name := range invariants.Names() {
			if _, ok := invariants.UnitChecks[name]; !ok {
				continue
			}
			if err := s.CheckInvariant(name); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		for _, m := range (unitView{s}).UnitMachines() {
			if m.Settled && m.ID == "m1" && strings.Contains(strings.Join(m.Running, " "), "agent.service") {
				settledWithGlobal++
			}
		}
	})
	if _, err := s.Run(3 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if firstErr != nil {
		t.Fatalf("a unit invariant failed: %v", firstErr)
	}
	if settledWithGlobal == 0 {
		t.Fatal("m1 was never settled running agent.service: the unit invariants checked nothing")
	}
	for _, u := range []string{"agent.service", "web.service"} {
		if st, _ := s.Unit(u); !strings.Contains(strings.Join(st.Running, " "), "m1") {
			t.Fatalf("%s runs on %v, want m1 (%+v)", u, st.Running, st)
		}
	}

	sd1 := s.store.members["m1"].agent.systemd
	sd2 := s.store.members["m2"].agent.systemd
	c, _ := sd1.Unit("agent.service")
	c.ActiveState = agentsystemd.ActiveInactive
	sd1.Set(c)
	if err := s.CheckInvariant("globalUnits"); err == nil || !strings.Contains(err.Error(), "does not run on machine m1") {
		t.Errorf("globalUnits with agent.service stopped on m1 = %v, want a violation", err)
	}
	w, _ := sd1.Unit("web.service")
	sd2.Set(w)
	if err := s.CheckInvariant("unitOnOneMachine"); err == nil || !strings.Contains(err.Error(), "web.service runs on 2 machines") {
		t.Errorf("unitOnOneMachine with web.service on m1 and m2 = %v, want a violation", err)
	}
}

// TestMachineMetadataChangeMovesGlobalUnits: a machine's agent reconciles when its metadata
// (labels) changes, so a global unit stops on a machine that no longer matches and starts on
// one that now does (found by the globalUnits invariant: the agents used to wait for an
// unrelated registry change, and the machines never settled).
func TestMachineMetadataChangeMovesGlobalUnits(t *testing.T) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []MemberSpec{
		{Name: "m1", Kind: member.KindMachine, Labels: map[string]string{"role": "worker"}, HeartbeatPeriod: 15 * time.Second},
		{Name: "m2", Kind: member.KindMachine, HeartbeatPeriod: 15 * time.Second},
	} {
		if err := s.AddMember(spec); err != nil {
			t.Fatal(err)
		}
	}
	try := func(err error) {
		if err != nil {
			t.Error(err)
		}
	}
	s.At(30*time.Second, "test-start", func() {
		try(s.Fleetctl("start", "agent.service", "[Service]\nExecStart=/usr/bin/sleep infinity\n[X-Fleet]\nGlobal=true\nMachineMetadata=role=worker\n"))
	})
	s.At(2*time.Minute, "test-unlabel", func() { try(s.Label("m1", nil, []string{"role"})) })
	s.At(3*time.Minute, "test-label", func() { try(s.Label("m2", map[string]string{"role": "worker"}, nil)) })
	var firstErr error
	s.AfterEvent(func() {
		if err := s.CheckInvariant("globalUnits"); err != nil && firstErr == nil {
			firstErr = err
		}
	})
	if _, err := s.Run(4 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if firstErr != nil {
		t.Errorf("globalUnits: %v", firstErr)
	}
	st, _ := s.Unit("agent.service")
	if got := strings.Join(st.Running, " "); got != "m2" {
		t.Errorf("agent.service runs on %q, want m2 (its metadata matches now, m1's no longer does)", got)
	}
	for _, m := range (unitView{s}).UnitMachines() {
		if !m.Settled {
			t.Errorf("machine %s is not settled a minute after its last change", m.ID)
		}
	}
}
