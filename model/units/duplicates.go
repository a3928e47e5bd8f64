package units

import (
	"cmp"
	"slices"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// ReportedState is one unit state an agent published: what systemd says about a unit on one
// machine (the API's UnitState entity).
type ReportedState struct {
	Unit    string
	Machine string
	Hash    unitfile.Hash
	// LoadState, ActiveState and SubState are systemd's, verbatim.
	LoadState   string
	ActiveState string
	SubState    string
}

// Running reports whether systemd may have the unit's processes up: ActiveState active,
// reloading, activating or deactivating.
func (r ReportedState) Running() bool {
	switch r.ActiveState {
	case "active", "reloading", "activating", "deactivating":
		return true
	}
	return false
}

// Duplicate is a non-global unit reported running on more than one machine.
type Duplicate struct {
	Unit string
	// Machines are the machines reporting it running, sorted.
	Machines []string
	// Scheduled is the machine the unit is scheduled to, "" if none (or unknown unit).
	Scheduled string
}

// Duplicates finds the units that the reported states show running on more than one
// machine, sorted by unit name. Global units (per units) are skipped: they run everywhere by
// design. Units missing from units are included: an orphan running twice is still a
// duplicate.
//
// Duplicates are expected after a partition: a machine cut off from the registry keeps
// running its units while the engine reschedules them elsewhere, until it reconnects and
// its agent stops them (see the package documentation).
func Duplicates(units []Job, reported []ReportedState) []Duplicate {
	global := make(map[string]bool)
	scheduled := make(map[string]string)
	for _, j := range units {
		if j.Unit == nil {
			continue
		}
		if isGlobal(j.Unit) {
			global[j.Unit.Name] = true
		}
		scheduled[j.Unit.Name] = j.Machine
	}
	running := make(map[string][]string)
	for _, r := range reported {
		if r.Running() && !global[r.Unit] {
			running[r.Unit] = append(running[r.Unit], r.Machine)
		}
	}
	var out []Duplicate
	for name, ms := range running {
		slices.Sort(ms)
		ms = slices.Compact(ms)
		if len(ms) > 1 {
			out = append(out, Duplicate{Unit: name, Machines: ms, Scheduled: scheduled[name]})
		}
	}
	slices.SortFunc(out, func(a, b Duplicate) int { return cmp.Compare(a.Unit, b.Unit) })
	return out
}

// isGlobal reports whether u is a global unit, parsing its file if its options are missing.
func isGlobal(u *Unit) bool {
	if u.Options != nil && u.Options.Name == u.Name {
		return u.Options.Global
	}
	x, err := unitfile.ParseXFleet(u.File, u.Name)
	return err == nil && x.Global
}
