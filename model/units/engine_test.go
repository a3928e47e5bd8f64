package units_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/units"
)

// TestPropSettledReasons: the reasons of a settled decision's unplaced units, rendered from
// the first machines only, are those a scan of every alive machine gives.
func TestPropSettledReasons(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		if diff := cmp.Diff(units.ScheduleScanningReasons(in), units.Schedule(in)); diff != "" {
			t.Fatalf("Schedule(%s) (-scanning +settled):\n%s", describe(in), diff)
		}
	})
}

// TestPropEngineIncremental applies random changes to an Engine (machines lost, back,
// added, removed or relabelled; units added, changed, destroyed or moved; plans applied or
// not) and after each decision compares its plan with a whole decision from scratch.
func TestPropEngineIncremental(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := units.NewEngine(propInput(t))
		lease := units.Lease{Holder: "engine", Token: 3}
		steps := rapid.IntRange(1, 25).Draw(t, "steps")
		for step := range steps {
			label := fmt.Sprint("step ", step)
			in := e.Input()
			switch op := rapid.IntRange(0, 9).Draw(t, label); op {
			case 0, 1: // a machine changes liveness or metadata, or is added
				ms := propMachines(t)
				e.SetMachine(ms[0])
			case 2: // a machine is removed
				if len(in.Machines) > 0 {
					e.RemoveMachine(rapid.SampledFrom(in.Machines).Draw(t, label+" machine").ID)
				}
			case 3: // a unit is added or replaced
				if js := propUnits(t, false); len(js) > 0 {
					e.SetUnit(rapid.SampledFrom(js).Draw(t, label+" unit"))
				}
			case 4: // a unit's desired state changes
				if len(in.Units) > 0 {
					j := rapid.SampledFrom(in.Units).Draw(t, label+" unit")
					s := rapid.SampledFrom([]units.State{units.StateInactive, units.StateLoaded, units.StateLaunched}).Draw(t, label+" state")
					at := j.Machine
					if propMaybe(t, 50, label+" retarget?") {
						at = rapid.SampledFrom(append([]string{""}, propMachineIDs...)).Draw(t, label+" target")
					}
					e.SetUnit(units.Job{Unit: j.Unit.WithState(s), Machine: at})
				}
			case 5: // a unit is destroyed
				if len(in.Units) > 0 {
					e.RemoveUnit(rapid.SampledFrom(in.Units).Draw(t, label+" unit").Unit.Name)
				}
			case 6: // a unit is moved by hand, or its write is lost
				if len(in.Units) > 0 {
					j := rapid.SampledFrom(in.Units).Draw(t, label+" unit")
					e.SetTarget(j.Unit.Name, rapid.SampledFrom(append([]string{"", "m9"}, propMachineIDs...)).Draw(t, label+" target"))
				}
			}
			if propMaybe(t, 10, label+" sync?") {
				// The same changes (and others) reported as a whole new input.
				next := e.Input()
				if propMaybe(t, 50, label+" change?") {
					next = propInput(t)
				}
				e.Sync(next)
				slices.SortFunc(next.Machines, func(a, b units.MachineState) int { return strings.Compare(a.ID, b.ID) })
				slices.SortFunc(next.Units, func(a, b units.Job) int { return strings.Compare(a.Unit.Name, b.Unit.Name) })
				if diff := cmp.Diff(next, e.Input(), cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("step %d: after Sync, Input() differs (-synced +held):\n%s", step, diff)
				}
			}
			if !propMaybe(t, 60, label+" schedule?") {
				continue
			}
			in = e.Input()
			in.Lease = lease
			got := e.Schedule(lease)
			if diff := cmp.Diff(units.Schedule(in), got); diff != "" {
				t.Fatalf("step %d: Engine.Schedule differs from Schedule(%s) (-scratch +engine):\n%s", step, describe(in), diff)
			}
			if propMaybe(t, 70, label+" apply?") {
				e.Apply(got)
			}
		}
	})
}
