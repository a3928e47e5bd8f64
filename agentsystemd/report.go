package agentsystemd

import (
	"bytes"
	"sort"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// UnitState is what the agent publishes for one unit on its machine (spec §3 "Unit state
// reporting"): the hash of the file on disk, systemd's three states verbatim, fleet's current
// state (what the agent has acted on), and the machine.
type UnitState struct {
	Name        string
	Hash        unitfile.Hash
	LoadState   string
	ActiveState string
	SubState    string
	// Current is fleet's current state of the unit (CurrentUnit.State): what the fleet API
	// shows as the unit's currentState. Empty in a state published by an agent that did not
	// report it; State then falls back on systemd's view.
	Current   CurrentState
	MachineID string
}

// ReportState returns the state the agent on machineID reports for c.
func ReportState(c CurrentUnit, machineID string) UnitState {
	return UnitState{
		Name:        c.Name,
		Hash:        c.Hash,
		LoadState:   c.LoadState,
		ActiveState: c.ActiveState,
		SubState:    c.SubState,
		Current:     c.State(),
		MachineID:   machineID,
	}
}

// State returns fleet's current state for s: Current if it is one of the three states,
// otherwise (a state from an agent that did not report it) derived from systemd's view as
// CurrentUnit.State does for a unit the agent has not acted on.
func (s UnitState) State() CurrentState {
	switch s.Current {
	case CurrentInactive, CurrentLoaded, CurrentLaunched:
		if s.Hash.IsZero() {
			return CurrentInactive
		}
		return s.Current
	}
	return fleetState(s.Hash, s.LoadState, s.ActiveState, Acted{})
}

// Publishable reports whether s may be published: it names a unit and a machine and has a
// hash. As upstream, a state without a unit hash or machine ID is never published; a unit
// whose file is gone has its state removed instead.
func (s UnitState) Publishable() bool {
	return s.Name != "" && s.MachineID != "" && !s.Hash.IsZero()
}

// ReportChanged reports whether next differs from prev, the state last published for the same
// unit, and so must be published now rather than at the next periodic republish.
func ReportChanged(prev, next UnitState) bool { return prev != next }

// ReportStates returns the publishable states for current on machineID, sorted by name, one per
// unit (duplicates resolved as in Decide). Units without a unit file are left out: their state
// is to be removed.
func ReportStates(current []CurrentUnit, machineID string) []UnitState {
	have := indexCurrent(current)
	out := make([]UnitState, 0, len(have))
	for _, c := range have {
		if s := ReportState(c, machineID); s.Publishable() {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ReportDiff is what changed between two rounds of reports from one machine.
type ReportDiff struct {
	// Publish holds the states that are new or changed, sorted by name.
	Publish []UnitState
	// Remove holds the names, sorted, whose state this machine must delete: published before,
	// not publishable now. Only this machine's state is removed, never other machines'.
	Remove []string
}

// Empty reports whether there is nothing to publish or remove.
func (d ReportDiff) Empty() bool { return len(d.Publish) == 0 && len(d.Remove) == 0 }

// DiffReports compares the states last published (prev) with the states now (next) and
// returns what must be published or removed. Entries that are not publishable are ignored on
// both sides. If a name repeats within a side, the greatest entry (by hash, then the
// remaining fields in order) counts, so the result does not depend on input order.
func DiffReports(prev, next []UnitState) ReportDiff {
	p, n := indexStates(prev), indexStates(next)
	var d ReportDiff
	for name, s := range n {
		if old, ok := p[name]; !ok || ReportChanged(old, s) {
			d.Publish = append(d.Publish, s)
		}
	}
	for name := range p {
		if _, ok := n[name]; !ok {
			d.Remove = append(d.Remove, name)
		}
	}
	sort.Slice(d.Publish, func(i, j int) bool { return d.Publish[i].Name < d.Publish[j].Name })
	sort.Strings(d.Remove)
	return d
}

func indexStates(states []UnitState) map[string]UnitState {
	m := make(map[string]UnitState, len(states))
	for _, s := range states {
		if !s.Publishable() {
			continue
		}
		if old, ok := m[s.Name]; ok && !preferState(s, old) {
			continue
		}
		m[s.Name] = s
	}
	return m
}

func preferState(a, b UnitState) bool {
	if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
		return c > 0
	}
	for _, f := range [...][2]string{
		{a.LoadState, b.LoadState},
		{a.ActiveState, b.ActiveState},
		{a.SubState, b.SubState},
		{string(a.Current), string(b.Current)},
		{a.MachineID, b.MachineID},
	} {
		if f[0] != f[1] {
			return f[0] > f[1]
		}
	}
	return false
}
