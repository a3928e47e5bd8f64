package agentsystemd

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/fleetsim/fleetsim/model/units"
)

// DesiredOn returns the units the agent of machine id must run, with their target states:
// the desired set that [Decide] compares with what systemd has. Both fleet agents build it
// here: the simulator's (sim/units.go, reconcileMachineAgent) and `fleet agent`'s
// (agentsystemd/machine, Agent.Round), each from the registry it reads.
//
// machines is every machine the registry knows and jobs every unit with the machine the
// engine scheduled it to. A unit is desired here when
//
//   - it is not global and the engine scheduled it to id, whatever its desired state: an
//     inactive one is listed with target inactive, so the agent stops it and removes its file
//     before the engine gets round to unscheduling it (fleet's agent follows the registry,
//     not the engine's next decision);
//   - it is global and runs on id by the rule of [units.GlobalTargets]: loaded or launched,
//     valid, id matches its MachineMetadata and nothing scheduled or running there conflicts
//     with it (computed once for the machine by [units.GlobalsOn]).
//
// Units scheduled to another machine are not desired here, even if that machine is lost:
// moving them is the engine's decision, and this agent runs them once the engine schedules
// them here. A
// template is never desired: systemd cannot start one, only its instances (the engine never
// schedules templates; this keeps a stale registry entry from reaching systemd).
//
// The agent counts its own machine alive whatever the registry last heard: it is running,
// so the global units that match it run, even while its heartbeats do not reach the hub. A
// machine the registry does not know has no metadata there and runs no global unit.
//
// The result is sorted by unit name and does not depend on the order of the inputs; the
// inputs are not modified.
func DesiredOn(id string, machines []units.MachineState, jobs []units.Job) []DesiredUnit {
	self := slices.Clone(machines)
	anyGlobal := false
	for i := range self {
		if self[i].ID == id {
			self[i].Alive = true
		}
	}
	for _, j := range jobs {
		if j.Unit != nil && j.Unit.IsGlobal() {
			anyGlobal = true
			break
		}
	}
	// One decision for every global unit on this machine (not one per unit); skipped when
	// there is none, since it indexes the whole registry.
	var globals []string
	if anyGlobal {
		globals = units.GlobalsOn(id, self, jobs)
	}
	var out []DesiredUnit
	for _, j := range jobs {
		u := j.Unit
		if u == nil || u.IsTemplate() {
			continue
		}
		if u.IsGlobal() {
			if _, found := slices.BinarySearch(globals, u.Name); !found {
				continue
			}
		} else if j.Machine != id {
			continue
		}
		out = append(out, DesiredUnit{Name: u.Name, File: u.File, Hash: u.Hash, State: TargetState(u.DesiredState)})
	}
	// By name; a name given twice (Decide then keeps one entry by content) by content too.
	slices.SortFunc(out, func(a, b DesiredUnit) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.State, b.State), bytes.Compare(a.Hash[:], b.Hash[:]))
	})
	return out
}
