package invariants

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// TestDisplaceWatch plays sequences of registry and machine states through one watch: it
// fires when a global unit takes the machine of a scheduled unit that ran there, and when a
// unit is newly scheduled next to a global unit it conflicts with; it is silent when the
// scheduled unit keeps its machine, when it left because its machine disconnected or its
// metadata changed, when the unit changed, when a unit that replaces it exists, and when a
// unit is scheduled to a machine the global unit does not run on.
func TestDisplaceWatch(t *testing.T) {
	u := func(name string, x unitfile.XFleet) *units.Unit {
		return &units.Unit{Name: name, DesiredState: units.StateLaunched, Options: &x}
	}
	db := u("db.service", unitfile.XFleet{})
	db2 := u("db.service", unitfile.XFleet{})
	db2.Hash[0] = 1 // another file under the same name
	monitor := u("monitor.service", unitfile.XFleet{Global: true, Conflicts: []string{"db*.service"}})
	dbNew := u("db-new.service", unitfile.XFleet{Replaces: []string{"db.service"}})
	m := func(id string, connected, settled bool, md string, running ...string) UnitMachine {
		return UnitMachine{ID: id, Connected: connected, Settled: settled, Metadata: map[string]string{"md": md}, Running: running}
	}
	type state struct {
		jobs     []units.Job
		machines []UnitMachine
		want     string // a part of the error, "" for none
	}
	dbOnM1 := state{jobs: []units.Job{{Unit: db, Machine: "m1"}}, machines: []UnitMachine{m("m1", true, true, "a", "db.service"), m("m2", true, true, "a")}}
	displaced := "a global unit displaced a scheduled unit"
	nextTo := "such a unit cannot be scheduled there"
	for _, tc := range []struct {
		name   string
		states []state
	}{
		{"the global unit stays off the scheduled unit's machine", []state{dbOnM1,
			{jobs: []units.Job{{Unit: db, Machine: "m1"}, {Unit: monitor}}, machines: []UnitMachine{m("m1", true, true, "a", "db.service"), m("m2", true, true, "a", "monitor.service")}}}},
		{"the global unit takes the machine", []state{dbOnM1,
			{jobs: []units.Job{{Unit: db}, {Unit: monitor}}, machines: []UnitMachine{m("m1", true, false, "a", "db.service"), m("m2", true, true, "a")}},
			{jobs: []units.Job{{Unit: db}, {Unit: monitor}}, machines: []UnitMachine{m("m1", true, true, "a", "monitor.service"), m("m2", true, true, "a", "monitor.service")}, want: displaced}}},
		{"the machine crashed in between: the unit may move", []state{dbOnM1,
			{jobs: []units.Job{{Unit: db, Machine: "m2"}, {Unit: monitor}}, machines: []UnitMachine{m("m1", false, false, "a"), m("m2", true, false, "a")}},
			{jobs: []units.Job{{Unit: db, Machine: "m2"}, {Unit: monitor}}, machines: []UnitMachine{m("m1", true, true, "a", "monitor.service"), m("m2", true, true, "a", "db.service")}}}},
		{"the machine's metadata changed: the unit may move", []state{dbOnM1,
			{jobs: []units.Job{{Unit: db, Machine: "m2"}, {Unit: monitor}}, machines: []UnitMachine{m("m1", true, true, "b", "monitor.service"), m("m2", true, true, "a", "db.service")}}}},
		{"the unit's file changed", []state{dbOnM1,
			{jobs: []units.Job{{Unit: db2}, {Unit: monitor}}, machines: []UnitMachine{m("m1", true, true, "a", "monitor.service"), m("m2", true, true, "a", "monitor.service")}}}},
		{"a unit replaces it", []state{dbOnM1,
			{jobs: []units.Job{{Unit: db}, {Unit: dbNew, Machine: "m2"}, {Unit: monitor}}, machines: []UnitMachine{m("m1", true, true, "a", "monitor.service"), m("m2", true, true, "a", "db-new.service")}}}},
		{"newly scheduled next to a running global unit", []state{
			{jobs: []units.Job{{Unit: monitor}, {Unit: db}}, machines: []UnitMachine{m("m1", true, true, "a", "monitor.service"), m("m2", true, true, "a")}},
			{jobs: []units.Job{{Unit: monitor}, {Unit: db, Machine: "m1"}}, machines: []UnitMachine{m("m1", true, false, "a", "monitor.service"), m("m2", true, true, "a")}, want: nextTo}}},
		{"newly scheduled where the global unit does not run", []state{
			{jobs: []units.Job{{Unit: monitor}, {Unit: db}}, machines: []UnitMachine{m("m1", true, true, "a", "monitor.service"), m("m2", true, true, "a")}},
			{jobs: []units.Job{{Unit: monitor}, {Unit: db, Machine: "m2"}}, machines: []UnitMachine{m("m1", true, true, "a", "monitor.service"), m("m2", true, false, "a")}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w DisplaceWatch
			for i, s := range tc.states {
				got := ""
				if err := w.Check(fakeUnits{jobs: s.jobs, machines: s.machines}); err != nil {
					got = err.Error()
				}
				if (s.want == "") != (got == "") || !strings.Contains(got, s.want) {
					t.Errorf("state %d: %s", i, cmp.Diff(s.want, got))
				}
			}
		})
	}
}
