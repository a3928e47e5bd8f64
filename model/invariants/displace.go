package invariants

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// GlobalDisplacesName is the `always` name of DisplaceWatch's check.
const GlobalDisplacesName = "noUnitDisplacedByGlobal"

// DisplaceWatch checks that scheduled units win over global units: a global unit runs only
// where no unit scheduled there conflicts with it, so it never takes a machine from a unit
// already running there [fleet: Unit Files › Unit Requirements]. Whether a unit was there
// first is history, not state, so the watch remembers, per unit, the machine it was last
// seen running on while that machine was settled (its home), with the unit's file and the
// machine's metadata at that time. It is written from the rule, never from model/units.
//
// The other direction too: a unit is not newly scheduled to a machine where a global unit
// it conflicts with ran at the machine's last settled check (the machine connected since,
// with the same metadata, the global unit still loaded or launched): such a unit cannot be
// scheduled there [fleet: Unit Files › Unit Requirements].
type DisplaceWatch struct {
	home map[string]unitHome
	// machine: the last machine each unit was scheduled to ("" for none).
	machine map[string]string
	// globals: per machine, the global units it ran at its last settled check, and its
	// metadata then.
	globals map[string]machineGlobals
}

type machineGlobals struct {
	running  []string
	metadata map[string]string
}

type unitHome struct {
	machine  string
	hash     unitfile.Hash
	metadata map[string]string
}

// Check: no unit that is not global, still loaded or launched with the same file, has left
// its home machine while a global unit that conflicts with it now runs there, the machine
// having stayed connected (never crashed, partitioned or gone at a check since) with the
// same metadata. Units whose placement other rules decide (MachineID, MachineOf, a unit
// that replaces them) are left out: those rules may move them. It must be called after
// every step.
func (w *DisplaceWatch) Check(r UnitReader) error {
	jobs := r.Jobs()
	if len(jobs) == 0 {
		w.home, w.machine, w.globals = nil, nil, nil
		return nil
	}
	if w.home == nil {
		w.home, w.machine, w.globals = map[string]unitHome{}, map[string]string{}, map[string]machineGlobals{}
	}
	machines := map[string]UnitMachine{}
	for _, m := range r.UnitMachines() {
		machines[m.ID] = m
	}
	all := byName(jobs)
	// Forget homes whose machine disconnected or changed, or whose unit changed or left.
	for name, h := range w.home {
		j, ok := all[name]
		m, present := machines[h.machine]
		if !ok || !active(j.Unit) || j.Unit.Hash != h.hash || !present || !m.Connected || !maps.Equal(m.Metadata, h.metadata) {
			delete(w.home, name)
		}
	}
	var globals []*units.Unit
	for _, j := range jobs {
		if global(j.Unit) && active(j.Unit) {
			globals = append(globals, j.Unit)
		}
	}
	for id, g := range w.globals {
		if m, ok := machines[id]; !ok || !m.Connected || !maps.Equal(m.Metadata, g.metadata) {
			delete(w.globals, id)
		}
	}
	if err := w.newlyNextToGlobal(jobs, all); err != nil {
		return err
	}
	for id, m := range machines {
		if !m.Settled || !m.Connected {
			continue
		}
		var running []string
		for _, g := range globals {
			if slices.Contains(m.Running, g.Name) {
				running = append(running, g.Name)
			}
		}
		w.globals[id] = machineGlobals{running: running, metadata: maps.Clone(m.Metadata)}
	}
	for _, name := range sortedKeys(all) {
		j := all[name]
		u := j.Unit
		if !active(u) || global(u) || placedByOtherRules(u, jobs) {
			delete(w.home, name)
			continue
		}
		if h, ok := w.home[name]; ok && j.Machine != h.machine {
			m := machines[h.machine]
			for _, g := range globals {
				if slices.Contains(m.Running, g.Name) && conflicting(g, u) {
					return fmt.Errorf("invariant %s: unit %s ran on machine %s and is now scheduled to %q, while the global unit %s, which conflicts with it, runs there: a global unit displaced a scheduled unit",
						GlobalDisplacesName, name, h.machine, j.Machine, g.Name)
				}
			}
		}
		if j.Machine == "" {
			continue
		}
		if m, ok := machines[j.Machine]; ok && m.Settled && m.Connected && slices.Contains(m.Running, name) {
			w.home[name] = unitHome{machine: m.ID, hash: u.Hash, metadata: maps.Clone(m.Metadata)}
		}
	}
	return nil
}

// newlyNextToGlobal fails a unit scheduled since the last check to a machine whose last
// settled check found a global unit it conflicts with running there; it records where each
// unit is scheduled.
func (w *DisplaceWatch) newlyNextToGlobal(jobs []units.Job, all map[string]units.Job) error {
	for _, j := range jobs {
		u := j.Unit
		if u == nil {
			continue
		}
		prev, seen := w.machine[u.Name]
		w.machine[u.Name] = j.Machine
		if !seen || j.Machine == "" || prev == j.Machine || !active(u) || global(u) || placedByOtherRules(u, jobs) {
			continue
		}
		for _, g := range w.globals[j.Machine].running {
			if gj, ok := all[g]; ok && active(gj.Unit) && global(gj.Unit) && conflicting(gj.Unit, u) {
				return fmt.Errorf("invariant %s: unit %s was scheduled to machine %s, where the global unit %s, which conflicts with it, was running: such a unit cannot be scheduled there",
					GlobalDisplacesName, u.Name, j.Machine, g)
			}
		}
	}
	return nil
}

// placedByOtherRules: the unit is pinned (MachineID), follows another (MachineOf), or an
// active unit replaces it.
func placedByOtherRules(u *units.Unit, jobs []units.Job) bool {
	if u.Options != nil && (u.Options.MachineID != "" || len(u.Options.MachineOf) > 0) {
		return true
	}
	for _, j := range jobs {
		if active(j.Unit) && replaces(j.Unit, u) {
			return true
		}
	}
	return false
}
