package invariants

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// fakeUnits is a minimal UnitReader.
type fakeUnits struct {
	jobs     []units.Job
	machines []UnitMachine
}

func (f fakeUnits) Jobs() []units.Job           { return f.jobs }
func (f fakeUnits) UnitMachines() []UnitMachine { return f.machines }

func TestUnitChecks(t *testing.T) {
	u := func(name string, state units.State, x unitfile.XFleet) *units.Unit {
		return &units.Unit{Name: name, DesiredState: state, Options: &x}
	}
	launched := units.StateLaunched
	web := u("web.service", launched, unitfile.XFleet{Conflicts: []string{"web*"}})
	web2 := u("web2.service", launched, unitfile.XFleet{})
	sidecar := u("sidecar.service", launched, unitfile.XFleet{MachineOf: []string{"web.service"}})
	agent := u("agent.service", launched, unitfile.XFleet{Global: true, MachineMetadata: unitfile.Metadata{"role": {"worker"}}})
	blocker := u("blocker.service", launched, unitfile.XFleet{Conflicts: []string{"agent.service"}})
	worker := map[string]string{"role": "worker"}
	newer := u("app-v2.service", launched, unitfile.XFleet{Replaces: []string{"app-v1.service"}})
	older := u("app-v1.service", launched, unitfile.XFleet{})
	ping := u("ping.service", launched, unitfile.XFleet{Replaces: []string{"pong.service"}})
	pong := u("pong.service", launched, unitfile.XFleet{Replaces: []string{"ping.service"}})
	m := func(id string, md map[string]string, settled bool, running ...string) UnitMachine {
		return UnitMachine{ID: id, Metadata: md, Settled: settled, Running: running}
	}
	tests := []struct {
		name string
		r    fakeUnits
		want map[string]bool
	}{
		{
			name: "healthy",
			r: fakeUnits{
				jobs: []units.Job{{Unit: web, Machine: "m1"}, {Unit: web2, Machine: "m2"}, {Unit: sidecar, Machine: "m1"}, {Unit: agent}, {Unit: blocker, Machine: "m3"}},
				machines: []UnitMachine{
					m("m1", worker, true, "agent.service", "sidecar.service", "web.service"),
					m("m2", nil, true, "web2.service"),
					m("m3", worker, true, "blocker.service"),
				},
			},
			want: map[string]bool{},
		},
		{
			name: "a unit scheduled and running next to the unit that replaces it",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: newer, Machine: "m1"}, {Unit: older, Machine: "m1"}},
				machines: []UnitMachine{m("m1", nil, true, "app-v1.service", "app-v2.service")},
			},
			want: map[string]bool{"unitReplaces": true},
		},
		{
			name: "a replaced unit moved away; units replacing each other are ignored",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: newer, Machine: "m1"}, {Unit: older, Machine: "m2"}, {Unit: ping, Machine: "m1"}, {Unit: pong, Machine: "m1"}},
				machines: []UnitMachine{m("m1", nil, true, "app-v2.service", "ping.service", "pong.service"), m("m2", nil, true, "app-v1.service")},
			},
			want: map[string]bool{},
		},
		{
			name: "a replaced unit still running on a machine not settled is not judged",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: newer, Machine: "m1"}, {Unit: older, Machine: "m2"}},
				machines: []UnitMachine{m("m1", nil, false, "app-v1.service", "app-v2.service"), m("m2", nil, true, "app-v1.service")},
			},
			want: map[string]bool{},
		},
		{
			name: "conflicting units scheduled and running together",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: web, Machine: "m1"}, {Unit: web2, Machine: "m1"}},
				machines: []UnitMachine{m("m1", nil, true, "web.service", "web2.service")},
			},
			want: map[string]bool{"unitConflicts": true},
		},
		{
			name: "conflicting units run together on a machine the registry no longer schedules them to",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: web, Machine: "m2"}, {Unit: web2, Machine: "m3"}},
				machines: []UnitMachine{m("m1", nil, false, "web.service", "web2.service"), m("m2", nil, true, "web.service"), m("m3", nil, true, "web2.service")},
			},
			want: map[string]bool{"unitConflicts": true},
		},
		{
			name: "a follower away from its leader",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: web, Machine: "m1"}, {Unit: sidecar, Machine: "m2"}},
				machines: []UnitMachine{m("m1", nil, true, "web.service"), m("m2", nil, true, "sidecar.service")},
			},
			want: map[string]bool{"unitMachineOf": true},
		},
		{
			name: "a follower whose leader is unscheduled waits for the engine",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: web}, {Unit: sidecar, Machine: "m2"}},
				machines: []UnitMachine{m("m2", nil, true, "sidecar.service")},
			},
			want: map[string]bool{},
		},
		{
			name: "a global unit missing from a matching settled machine, running on one that does not match",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: agent}},
				machines: []UnitMachine{m("m1", worker, true), m("m2", nil, true, "agent.service")},
			},
			want: map[string]bool{"globalUnits": true},
		},
		{
			name: "a global unit running where a conflicting unit is scheduled",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: agent}, {Unit: blocker, Machine: "m1"}},
				machines: []UnitMachine{m("m1", worker, true, "agent.service")},
			},
			want: map[string]bool{"globalUnits": true},
		},
		{
			name: "machines not settled are not judged on globals or duplicates",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: agent}, {Unit: web, Machine: "m2"}},
				machines: []UnitMachine{m("m1", worker, false, "web.service"), m("m2", nil, true, "web.service")},
			},
			want: map[string]bool{},
		},
		{
			name: "a unit running on two settled machines",
			r: fakeUnits{
				jobs:     []units.Job{{Unit: web, Machine: "m2"}},
				machines: []UnitMachine{m("m1", nil, true, "web.service"), m("m2", nil, true, "web.service")},
			},
			want: map[string]bool{"unitOnOneMachine": true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]bool{}
			for name, check := range UnitChecks {
				if err := check(tc.r); err != nil {
					got[name] = true
					t.Logf("%s: %v", name, err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violated invariants (-want +got):\n%s", diff)
			}
		})
	}
}
