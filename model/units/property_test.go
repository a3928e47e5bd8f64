package units_test

// Property tests of Schedule and GlobalTargets. Every helper here is prefixed with prop.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

const propLongID = "0123456789abcdef0123456789abcdef"

var (
	propMachineIDs = []string{"m1", "m2", "m3", "m4", "m5", propLongID}
	propUnitNames  = []string{"a1.service", "a2.service", "b1.service", "b2.service", "c1.service", "c2.service",
		"d1.service", "web@1.service", "web@2.service", "web@.service"}
	propMetadata = []string{"region=east", "region=west", "disk=ssd", "disk=hdd"}
	propGlobs    = []string{"a*", "b1.service", "*", "web@*.service", "c?.service", "d1.service"}
)

// propMachines draws 1 to 6 distinct machines with random metadata, most of them alive.
func propMachines(t *rapid.T) []units.MachineState {
	ids := rapid.SliceOfNDistinct(rapid.SampledFrom(propMachineIDs), 1, len(propMachineIDs), rapid.ID[string]).Draw(t, "machines")
	var ms []units.MachineState
	for _, id := range ids {
		m := units.MachineState{ID: id, Metadata: map[string]string{}, Alive: rapid.IntRange(0, 9).Draw(t, "alive "+id) < 8}
		if rapid.Bool().Draw(t, "region? "+id) {
			m.Metadata["region"] = rapid.SampledFrom([]string{"east", "west"}).Draw(t, "region "+id)
		}
		if rapid.Bool().Draw(t, "disk? "+id) {
			m.Metadata["disk"] = rapid.SampledFrom([]string{"ssd", "hdd"}).Draw(t, "disk "+id)
		}
		ms = append(ms, m)
	}
	return ms
}

// propMaybe is true with probability pct/100.
func propMaybe(t *rapid.T, pct int, label string) bool {
	return rapid.IntRange(0, 99).Draw(t, label) < pct
}

// propUnits draws distinct units with random [X-Fleet] options, desired states and current
// machines (possibly unknown ones). Most units get one family of options that fleet accepts;
// a few get any mix, usually an invalid one. With plain set, units have no options.
func propUnits(t *rapid.T, plain bool) []units.Job {
	names := rapid.SliceOfNDistinct(rapid.SampledFrom(propUnitNames), 0, len(propUnitNames), rapid.ID[string]).Draw(t, "units")
	var jobs []units.Job
	for _, name := range names {
		var lines []string
		add := func(key string, values []string) {
			lines = append(lines, key+"="+rapid.SampledFrom(values).Draw(t, key+" "+name))
		}
		metadata := func(pct int) {
			for _, kv := range rapid.SliceOfN(rapid.SampledFrom(propMetadata), 0, 2).Draw(t, "metadata "+name) {
				if propMaybe(t, pct, "MachineMetadata? "+name) {
					lines = append(lines, "MachineMetadata="+kv)
				}
			}
		}
		machineIDs := append([]string{"01234567", "m9"}, propMachineIDs...)
		kind := "plain"
		if !plain {
			kind = rapid.SampledFrom([]string{"plain", "plain", "plain", "id", "metadata", "metadata", "of", "of",
				"conflicts", "conflicts", "global", "replaces", "replaces", "any"}).Draw(t, "kind "+name)
		}
		switch kind {
		case "id":
			add("MachineID", machineIDs)
		case "metadata":
			metadata(70)
			if propMaybe(t, 30, "Conflicts? "+name) {
				add("Conflicts", propGlobs)
			}
		case "of":
			add("MachineOf", propUnitNames)
			metadata(20)
		case "conflicts":
			add("Conflicts", propGlobs)
			if propMaybe(t, 30, "more Conflicts? "+name) {
				add("X-Conflicts", propGlobs)
			}
		case "global":
			lines = append(lines, "Global=true")
			metadata(40)
			if propMaybe(t, 40, "Conflicts? "+name) {
				add("Conflicts", propGlobs)
			}
		case "replaces":
			add("Replaces", propGlobs)
			if propMaybe(t, 40, "MachineOf? "+name) {
				add("MachineOf", propUnitNames)
			}
		case "any":
			if propMaybe(t, 30, "MachineID? "+name) {
				add("MachineID", machineIDs)
			}
			metadata(30)
			if propMaybe(t, 30, "MachineOf? "+name) {
				add("MachineOf", propUnitNames)
			}
			if propMaybe(t, 30, "Conflicts? "+name) {
				add("Conflicts", propGlobs)
			}
			if propMaybe(t, 30, "Global? "+name) {
				lines = append(lines, "Global=true")
			}
			if propMaybe(t, 30, "Replaces? "+name) {
				add("Replaces", propGlobs)
			}
		}
		state := units.StateLaunched
		if r := rapid.IntRange(0, 9).Draw(t, "state "+name); r < 2 {
			state = units.StateInactive
		} else if r < 4 {
			state = units.StateLoaded
		}
		u := raw(t, name, state, lines...)
		at := ""
		if propMaybe(t, 50, "scheduled? "+name) {
			at = rapid.SampledFrom(append([]string{"m9"}, propMachineIDs...)).Draw(t, "machine "+name)
		}
		jobs = append(jobs, units.Job{Unit: u, Machine: at})
	}
	return jobs
}

func propInput(t *rapid.T) units.Input {
	return units.Input{Machines: propMachines(t), Units: propUnits(t, false)}
}

// propView is a decoded view of a schedule, for checking.
type propView struct {
	alive   map[string]units.MachineState
	opts    map[string]*unitfile.XFleet // valid units only
	state   map[string]units.State
	machine map[string]string
	jobs    []units.Job
}

func propNewView(machines []units.MachineState, jobs []units.Job) propView {
	v := propView{alive: map[string]units.MachineState{}, opts: map[string]*unitfile.XFleet{}, state: map[string]units.State{},
		machine: map[string]string{}, jobs: jobs}
	for _, m := range machines {
		if m.Alive {
			v.alive[m.ID] = m
		}
	}
	for _, j := range jobs {
		v.state[j.Unit.Name] = j.Unit.DesiredState
		v.machine[j.Unit.Name] = j.Machine
		if unitfile.ValidateName(j.Unit.Name) != nil || (unitfile.IsTemplate(j.Unit.Name) && j.Unit.DesiredState.Active()) {
			continue
		}
		if x, err := unitfile.ParseXFleet(j.Unit.File, j.Unit.Name); err == nil {
			v.opts[j.Unit.Name] = x
		}
	}
	return v
}

// runsGlobal reports whether name is a valid, active global unit.
func (v propView) runsGlobal(name string) bool {
	x := v.opts[name]
	return x != nil && x.Global && v.state[name].Active()
}

// scheduledOn returns the valid, active, non-global units scheduled to machine id.
func (v propView) scheduledOn(id string) []string {
	var out []string
	for _, j := range v.jobs {
		n := j.Unit.Name
		if x := v.opts[n]; j.Machine == id && x != nil && !x.Global && v.state[n].Active() {
			out = append(out, n)
		}
	}
	return out
}

// refGlobalsOn is the reference rule for global units: in name order, each active valid
// global unit runs on an alive machine if it matches its metadata and conflicts with no
// scheduled unit there and with no global unit already running there.
func (v propView) refGlobalsOn(id string) []string {
	m, alive := v.alive[id]
	if !alive {
		return nil
	}
	var names []string
	for n := range v.opts {
		if v.runsGlobal(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	sched := v.scheduledOn(id)
	var running []string
	for _, g := range names {
		x := v.opts[g]
		if !x.MachineMetadata.Matches(m.Metadata) {
			continue
		}
		clash := false
		for _, o := range append(slices.Clone(sched), running...) {
			clash = clash || unitfile.Conflicts(x, v.opts[o])
		}
		if !clash {
			running = append(running, g)
		}
	}
	return running
}

// TestPropNoConflictingNeighbours: after applying a plan, no two units on one machine
// conflict, counting the global units that run there.
func TestPropNoConflictingNeighbours(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		after := units.Schedule(in).Apply(in.Units)
		v := propNewView(in.Machines, after)
		for id := range v.alive {
			here := append(v.scheduledOn(id), units.GlobalsOn(id, in.Machines, after)...)
			for i, a := range here {
				for _, b := range here[i+1:] {
					if unitfile.Conflicts(v.opts[a], v.opts[b]) {
						t.Fatalf("Schedule(%s): %s and %s, which conflict, share machine %s", describe(in), a, b, id)
					}
				}
			}
		}
	})
}

// TestPropScheduledUnitsAreValid: after applying a plan, only active, valid, non-global units
// are scheduled, on alive machines whose ID and metadata they accept.
func TestPropScheduledUnitsAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		after := units.Schedule(in).Apply(in.Units)
		v := propNewView(in.Machines, after)
		for _, j := range after {
			if j.Machine == "" {
				continue
			}
			n, x := j.Unit.Name, v.opts[j.Unit.Name]
			m, alive := v.alive[j.Machine]
			switch {
			case !alive:
				t.Fatalf("Schedule(%s): %s left on machine %s, which is not alive", describe(in), n, j.Machine)
			case x == nil || x.Global || !j.Unit.DesiredState.Active():
				t.Fatalf("Schedule(%s): %s (invalid, global or inactive) left scheduled on %s", describe(in), n, j.Machine)
			case x.MachineID != "" && !unitfile.MachineIDMatches(x.MachineID, m.ID):
				t.Fatalf("Schedule(%s): %s on %s violates MachineID=%s", describe(in), n, m.ID, x.MachineID)
			case !x.MachineMetadata.Matches(m.Metadata):
				t.Fatalf("Schedule(%s): %s on %s violates MachineMetadata %v", describe(in), n, m.ID, x.MachineMetadata)
			}
		}
	})
}

// TestPropFollowersWithLeader: after applying a plan, every scheduled MachineOf follower runs
// on the machine of each of its peers.
func TestPropFollowersWithLeader(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		after := units.Schedule(in).Apply(in.Units)
		v := propNewView(in.Machines, after)
		for _, j := range after {
			x := v.opts[j.Unit.Name]
			if j.Machine == "" || x == nil {
				continue
			}
			for _, p := range x.MachineOf {
				if v.runsGlobal(p) {
					if !slices.Contains(units.GlobalTargets(unitOf(after, p), in.Machines, after), j.Machine) {
						t.Fatalf("Schedule(%s): %s on %s, but its global peer %s does not run there", describe(in), j.Unit.Name, j.Machine, p)
					}
					continue
				}
				if v.machine[p] != j.Machine {
					t.Fatalf("Schedule(%s): %s on %s, but its MachineOf peer %s is on %q", describe(in), j.Unit.Name, j.Machine, p, v.machine[p])
				}
			}
		}
	})
}

func unitOf(jobs []units.Job, name string) *units.Unit {
	for _, j := range jobs {
		if j.Unit.Name == name {
			return j.Unit
		}
	}
	return nil
}

// TestPropGlobalTargets: a global unit's targets are exactly the alive machines that match its
// metadata and where it conflicts with nothing scheduled and with no global unit (of smaller
// name) already running there.
func TestPropGlobalTargets(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		v := propNewView(in.Machines, in.Units)
		for _, j := range in.Units {
			var want []string
			if v.runsGlobal(j.Unit.Name) {
				for _, m := range in.Machines {
					if slices.Contains(v.refGlobalsOn(m.ID), j.Unit.Name) {
						want = append(want, m.ID)
					}
				}
				slices.Sort(want)
			}
			got := units.GlobalTargets(j.Unit, in.Machines, in.Units)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("GlobalTargets(%s) in %s = %v, want %v", j.Unit.Name, describe(in), got, want)
			}
			// A single global unit alone: exactly the matching machines (no conflicts).
			if v.runsGlobal(j.Unit.Name) {
				var alone []string
				for _, m := range in.Machines {
					if m.Alive && v.opts[j.Unit.Name].MachineMetadata.Matches(m.Metadata) {
						alone = append(alone, m.ID)
					}
				}
				slices.Sort(alone)
				got := units.GlobalTargets(j.Unit, in.Machines, nil)
				if diff := cmp.Diff(alone, got, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("GlobalTargets(%s) alone = %v, want the matching machines %v", j.Unit.Name, got, alone)
				}
			}
		}
	})
}

// propSpread returns max-min of the number of units per alive machine, counting active
// units other than templates (which can never run).
func propSpread(machines []units.MachineState, jobs []units.Job) int {
	load := map[string]int{}
	for _, m := range machines {
		if m.Alive {
			load[m.ID] = 0
		}
	}
	for _, j := range jobs {
		if _, ok := load[j.Machine]; ok && j.Unit.DesiredState.Active() && !unitfile.IsTemplate(j.Unit.Name) {
			load[j.Machine]++
		}
	}
	if len(load) == 0 {
		return 0
	}
	lo, hi := int(^uint(0)>>1), 0
	for _, l := range load {
		lo, hi = min(lo, l), max(hi, l)
	}
	return hi - lo
}

// TestPropLeastLoadedSpread: unconstrained units are spread so that loads differ by at most
// one across alive machines, starting from nothing; starting from an existing schedule (which
// fleet never rebalances) the spread never grows beyond max(its spread, 1).
func TestPropLeastLoadedSpread(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		machines := propMachines(t)
		jobs := propUnits(t, true)
		empty := make([]units.Job, len(jobs))
		for i, j := range jobs {
			empty[i] = units.Job{Unit: j.Unit}
		}
		in := units.Input{Machines: machines, Units: empty}
		if s := propSpread(machines, units.Schedule(in).Apply(empty)); s > 1 {
			t.Fatalf("Schedule(%s) from empty: spread %d, want at most 1", describe(in), s)
		}

		in = units.Input{Machines: machines, Units: jobs}
		before := propSpread(machines, jobs) // inactive units and dead machines do not count
		if s := propSpread(machines, units.Schedule(in).Apply(jobs)); s > max(before, 1) {
			t.Fatalf("Schedule(%s): spread %d, want at most max(%d, 1)", describe(in), s, before)
		}
	})
}

// TestPropPermutation: the plan does not depend on the order of machines or units.
func TestPropPermutation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		perm := units.Input{
			Machines: rapid.Permutation(in.Machines).Draw(t, "machine order"),
			Units:    rapid.Permutation(in.Units).Draw(t, "unit order"),
		}
		if diff := cmp.Diff(units.Schedule(in), units.Schedule(perm)); diff != "" {
			t.Fatalf("Schedule(%s) differs under permutation (-original +permuted):\n%s", describe(in), diff)
		}
	})
}

// TestPropIdempotent: scheduling again after applying a plan writes nothing and reports the
// same unschedulable units.
func TestPropIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		p := units.Schedule(in)
		again := units.Schedule(units.Input{Machines: in.Machines, Units: p.Apply(in.Units)})
		if !again.Empty() {
			t.Fatalf("Schedule(after applying Schedule(%s) = %v) = %v, want no writes", describe(in), summarize(p), summarize(again))
		}
		if diff := cmp.Diff(p.Unschedulable, again.Unschedulable); diff != "" {
			t.Fatalf("Schedule(%s): unschedulable units changed on a second decision (-first +second):\n%s", describe(in), diff)
		}
	})
}

// TestPropReasons: every write and every unschedulable unit carries a reason, a unit moves
// at most once, and only units of the input appear.
func TestPropReasons(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		p := units.Schedule(in)
		names := map[string]bool{}
		for _, j := range in.Units {
			names[j.Unit.Name] = true
		}
		seen := map[string]bool{}
		for _, a := range append(append([]units.Action{}, p.Unschedule...), p.Schedule...) {
			key := fmt.Sprint(a.Unit, a.Machine)
			if a.Reason == "" || !names[a.Unit] || seen[key] {
				t.Fatalf("Schedule(%s): bad action %+v", describe(in), a)
			}
			seen[key] = true
		}
		for _, u := range p.Unschedulable {
			if u.Reason == "" || !names[u.Unit] {
				t.Fatalf("Schedule(%s): bad unplaced %+v", describe(in), u)
			}
		}
	})
}

// TestPropSettles: every decision settles (rounds stop because nothing changes, not because
// of the safety bound), so no unit is left unplaced while a machine would take it.
func TestPropSettles(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propInput(t)
		for _, u := range units.Schedule(in).Unschedulable {
			if strings.Contains(u.Reason, "did not settle") {
				t.Fatalf("Schedule(%s): %s: %s", describe(in), u.Unit, u.Reason)
			}
		}
	})
}
