package invariants

// Fleet-unit invariants, written from the spec of CoreOS fleet's [X-Fleet] options
// (Conflicts as two-way globs, MachineOf, Global, MachineMetadata, the
// agent's desired state) and its partition behaviour, reading the registry (where the
// engine scheduled each unit) and what each machine's systemd runs; never model/units'
// scheduler.

import (
	"fmt"
	"path"
	"slices"

	"github.com/fleetsim/fleetsim/model/units"
)

// UnitReader is what the unit checks read: a fleet registry and its machines.
type UnitReader interface {
	// Jobs are every unit with the machine the engine scheduled it to ("" if none).
	Jobs() []units.Job
	// UnitMachines are the machines, as their agents and systemd stand.
	UnitMachines() []UnitMachine
}

// UnitMachine is one machine for the unit checks.
type UnitMachine struct {
	ID string
	// Metadata is the machine's metadata (its labels).
	Metadata map[string]string
	// Running are the units its systemd runs (launched), whatever the registry says.
	Running []string
	// Settled: the machine's agent is connected to the registry (not crashed, partitioned or
	// gone) and has reconciled since anything it acts on last changed (the registry, the
	// machine's metadata). Only a settled machine must run exactly what the registry says.
	Settled bool
	// Connected: the machine's agent runs and reaches the registry (not crashed, not
	// partitioned, joined) and its presence is alive for the engine (its last heartbeat
	// within the machine TTL), whether or not it has caught up with the registry.
	Connected bool
}

// UnitCheck is one unit invariant.
type UnitCheck func(UnitReader) error

// UnitChecks are the unit invariants by the names a scenario's `always` accepts.
var UnitChecks = map[string]UnitCheck{
	"unitConflicts":    UnitConflicts,
	"unitMachineOf":    UnitMachineOf,
	"globalUnits":      GlobalUnits,
	"unitOnOneMachine": UnitOnOneMachine,
	"unitReplaces":     UnitReplaces,
}

// active: the unit's desired state asks for a machine (loaded or launched).
func active(u *units.Unit) bool {
	return u != nil && (u.DesiredState == units.StateLoaded || u.DesiredState == units.StateLaunched)
}

func global(u *units.Unit) bool { return u != nil && u.Options != nil && u.Options.Global }

// conflicting: either unit has a Conflicts glob matching the other's name.
func conflicting(a, b *units.Unit) bool {
	match := func(x, y *units.Unit) bool {
		if x.Options == nil {
			return false
		}
		for _, g := range x.Options.Conflicts {
			if ok, err := path.Match(g, y.Name); ok && err == nil {
				return true
			}
		}
		return false
	}
	return a.Name != b.Name && (match(a, b) || match(b, a))
}

// metadataMatches: for each key the unit requires, the machine has it with one of the
// allowed values.
func metadataMatches(u *units.Unit, md map[string]string) bool {
	if u.Options == nil {
		return true
	}
	for k, vs := range u.Options.MachineMetadata {
		v, ok := md[k]
		if !ok || !slices.Contains(vs, v) {
			return false
		}
	}
	return true
}

func byName(jobs []units.Job) map[string]units.Job {
	out := make(map[string]units.Job, len(jobs))
	for _, j := range jobs {
		if j.Unit != nil {
			out[j.Unit.Name] = j
		}
	}
	return out
}

// UnitConflicts: no machine holds two units that conflict: neither two active units the
// engine scheduled to it, nor two units its systemd runs (global units included).
func UnitConflicts(r UnitReader) error {
	jobs := r.Jobs()
	if len(jobs) == 0 {
		return nil
	}
	on := map[string][]*units.Unit{}
	for _, j := range jobs {
		if j.Machine != "" && active(j.Unit) && !global(j.Unit) {
			on[j.Machine] = append(on[j.Machine], j.Unit)
		}
	}
	for _, m := range sortedKeys(on) {
		us := on[m]
		for i := range us {
			for k := i + 1; k < len(us); k++ {
				if conflicting(us[i], us[k]) {
					return fmt.Errorf("invariant unitConflicts: %s and %s, which conflict, are both scheduled to machine %s", us[i].Name, us[k].Name, m)
				}
			}
		}
	}
	all := byName(jobs)
	for _, m := range r.UnitMachines() {
		for i, a := range m.Running {
			for _, b := range m.Running[i+1:] {
				ua, ub := all[a].Unit, all[b].Unit
				if ua != nil && ub != nil && conflicting(ua, ub) {
					return fmt.Errorf("invariant unitConflicts: %s and %s, which conflict, both run on machine %s", a, b, m.ID)
				}
			}
		}
	}
	return nil
}

// UnitMachineOf: an active unit with MachineOf is never scheduled to another machine than
// a leader that is scheduled (leaders that are global or unscheduled are the engine's
// next decision).
func UnitMachineOf(r UnitReader) error {
	jobs := r.Jobs()
	all := byName(jobs)
	for _, j := range jobs {
		if j.Machine == "" || !active(j.Unit) || j.Unit.Options == nil {
			continue
		}
		for _, leader := range j.Unit.Options.MachineOf {
			l, ok := all[leader]
			if ok && l.Machine != "" && !global(l.Unit) && l.Machine != j.Machine {
				return fmt.Errorf("invariant unitMachineOf: %s is scheduled to machine %s, but its MachineOf leader %s is scheduled to %s", j.Unit.Name, j.Machine, leader, l.Machine)
			}
		}
	}
	return nil
}

// GlobalUnits: a launched global unit runs on a settled machine exactly when the machine's
// metadata matches its MachineMetadata and nothing there conflicts with it (no active unit
// scheduled to the machine, no other global unit running there: scheduled units win, and
// of two global units one runs). It never runs on a settled machine whose metadata does
// not match it.
func GlobalUnits(r UnitReader) error {
	jobs := r.Jobs()
	var globals []*units.Unit
	for _, j := range jobs {
		if global(j.Unit) && j.Unit.DesiredState == units.StateLaunched {
			globals = append(globals, j.Unit)
		}
	}
	if len(globals) == 0 {
		return nil
	}
	all := byName(jobs)
	for _, m := range r.UnitMachines() {
		if !m.Settled {
			continue
		}
		for _, g := range globals {
			runs := slices.Contains(m.Running, g.Name)
			matches := metadataMatches(g, m.Metadata)
			if runs && !matches {
				return fmt.Errorf("invariant globalUnits: global unit %s runs on machine %s, whose metadata %v does not match its MachineMetadata %v", g.Name, m.ID, m.Metadata, g.Options.MachineMetadata)
			}
			blocked := ""
			for _, j := range jobs {
				if j.Machine == m.ID && active(j.Unit) && !global(j.Unit) && conflicting(g, j.Unit) {
					blocked = "unit " + j.Unit.Name + " scheduled there"
				}
			}
			if runs && blocked != "" {
				return fmt.Errorf("invariant globalUnits: global unit %s runs on machine %s, though it conflicts with %s", g.Name, m.ID, blocked)
			}
			for _, other := range m.Running {
				if o := all[other].Unit; o != nil && global(o) && conflicting(g, o) {
					blocked = "global unit " + other + " running there"
				}
			}
			if !runs && matches && blocked == "" {
				return fmt.Errorf("invariant globalUnits: global unit %s does not run on machine %s, which matches its MachineMetadata and runs nothing it conflicts with", g.Name, m.ID)
			}
		}
	}
	return nil
}

// UnitOnOneMachine: outside a partition, a unit that is not global runs on at most one
// machine. A machine cut off from the registry (or whose agent has not yet caught up with
// a move) keeps running its units, as fleet does; two settled machines never run one.
func UnitOnOneMachine(r UnitReader) error {
	jobs := r.Jobs()
	if len(jobs) == 0 {
		return nil
	}
	all := byName(jobs)
	where := map[string][]string{}
	for _, m := range r.UnitMachines() {
		if !m.Settled {
			continue
		}
		for _, u := range m.Running {
			if j, ok := all[u]; !ok || !global(j.Unit) {
				where[u] = append(where[u], m.ID)
			}
		}
	}
	for _, u := range sortedKeys(where) {
		if ms := where[u]; len(ms) > 1 {
			return fmt.Errorf("invariant unitOnOneMachine: unit %s runs on %d machines %v, none of them cut off from the registry (scheduled to %q)", u, len(ms), ms, all[u].Machine)
		}
	}
	return nil
}

// replaces: unit a's Replaces globs match b's name.
func replaces(a, b *units.Unit) bool {
	if a == nil || b == nil || a.Options == nil || a.Name == b.Name {
		return false
	}
	for _, g := range a.Options.Replaces {
		if ok, err := path.Match(g, b.Name); ok && err == nil {
			return true
		}
	}
	return false
}

// replaceLinks returns the Replaces links that count: among units that are not global, a
// replaces b unless b leads back to a through Replaces links and MachineOf links (leader
// to follower): a circular replacement is not allowed and is ignored, and a unit cannot
// displace one it follows.
func replaceLinks(jobs []units.Job) map[[2]string]bool {
	next := map[string][]string{}
	var links [][2]string
	for _, a := range jobs {
		if a.Unit == nil || global(a.Unit) || a.Unit.Options == nil {
			continue
		}
		for _, b := range jobs {
			if b.Unit != nil && !global(b.Unit) && replaces(a.Unit, b.Unit) {
				links = append(links, [2]string{a.Unit.Name, b.Unit.Name})
				next[a.Unit.Name] = append(next[a.Unit.Name], b.Unit.Name)
			}
		}
		for _, leader := range a.Unit.Options.MachineOf {
			next[leader] = append(next[leader], a.Unit.Name)
		}
	}
	reaches := func(from, to string) bool {
		seen := map[string]bool{from: true}
		stack := []string{from}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, v := range next[u] {
				if v == to {
					return true
				}
				if !seen[v] {
					seen[v] = true
					stack = append(stack, v)
				}
			}
		}
		return false
	}
	out := map[[2]string]bool{}
	for _, l := range links {
		if !reaches(l[1], l[0]) {
			out[l] = true
		}
	}
	return out
}

// UnitReplaces: a unit is never scheduled to the machine of an active unit that replaces
// it (the replaced unit moves away: [X-Fleet] Replaces), and no settled machine runs both.
// Global units and circular replacements take no part (replaceLinks).
func UnitReplaces(r UnitReader) error {
	jobs := r.Jobs()
	if len(jobs) == 0 {
		return nil
	}
	links := replaceLinks(jobs)
	if len(links) == 0 {
		return nil
	}
	on := map[string][]*units.Unit{}
	for _, j := range jobs {
		if j.Machine != "" && active(j.Unit) && !global(j.Unit) {
			on[j.Machine] = append(on[j.Machine], j.Unit)
		}
	}
	for _, m := range sortedKeys(on) {
		for _, a := range on[m] {
			for _, b := range on[m] {
				if links[[2]string{a.Name, b.Name}] {
					return fmt.Errorf("invariant unitReplaces: %s is scheduled to machine %s, where %s, which replaces it, is scheduled", b.Name, m, a.Name)
				}
			}
		}
	}
	for _, m := range r.UnitMachines() {
		if !m.Settled {
			continue
		}
		for _, a := range m.Running {
			for _, b := range m.Running {
				if links[[2]string{a, b}] {
					return fmt.Errorf("invariant unitReplaces: settled machine %s runs %s and %s, which replaces it", m.ID, b, a)
				}
			}
		}
	}
	return nil
}
