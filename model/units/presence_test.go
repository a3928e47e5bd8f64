package units_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/units"
)

// TestMachinePresence: fleet's TTL rule, shared by the simulator and production (the engine
// round, the agents' view of the machines, the fleet API's machine list).
func TestMachinePresence(t *testing.T) {
	beat := func(ago time.Duration) units.MachinePresence {
		return units.MachinePresence{ID: "m1", Reported: true, LastHeartbeat: t0.Add(-ago)}
	}
	never := units.MachinePresence{ID: "m1", LastHeartbeat: t0}
	leaving := beat(time.Second)
	leaving.Leaving = true
	type result struct {
		Alive   bool
		Expires time.Time
	}
	tests := []struct {
		name string
		p    units.MachinePresence
		ttl  time.Duration
		want result
	}{
		{"fresh", beat(10 * time.Second), 30 * time.Second, result{true, t0.Add(20 * time.Second)}},
		{"just inside the TTL", beat(30*time.Second - time.Nanosecond), 30 * time.Second, result{true, t0.Add(time.Nanosecond)}},
		{"at the TTL it is already lost", beat(30 * time.Second), 30 * time.Second, result{false, t0}},
		{"past the TTL", beat(31 * time.Second), 30 * time.Second, result{false, t0.Add(-time.Second)}},
		{"ttl <= 0 is the default 30s", beat(29 * time.Second), 0, result{true, t0.Add(time.Second)}},
		{"the default TTL runs out too", beat(30 * time.Second), -1, result{false, t0}},
		{"a longer TTL", beat(31 * time.Second), time.Minute, result{true, t0.Add(29 * time.Second)}},
		{"never reported: not present at all", never, 30 * time.Second, result{}},
		{"leaving: not present at all", leaving, 30 * time.Second, result{}},
	}
	for _, tt := range tests {
		got := result{Alive: tt.p.Alive(t0, tt.ttl), Expires: tt.p.Expires(tt.ttl)}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.name, diff)
		}
	}
	ms := units.MachinesAt([]units.MachinePresence{beat(time.Second), never}, t0, 0)
	if diff := cmp.Diff([]units.MachineState{{ID: "m1", Alive: true}, {ID: "m1"}}, ms); diff != "" {
		t.Errorf("MachinesAt (-want +got):\n%s", diff)
	}
}
