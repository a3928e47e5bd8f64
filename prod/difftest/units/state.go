package units

import (
	"fmt"
	"slices"
	"strings"
)

// State is what the two sides are compared on: every unit in the registry with its desired
// state, the machine the engine scheduled it to, and the machines whose systemd really runs
// it. Times, reasons and fence tokens are left out: they say when and under which lease a
// decision was written, not what was decided.
type State struct {
	Units map[string]Unit
}

// Unit is one unit's state.
type Unit struct {
	// Desired is the desired state: inactive, loaded or launched.
	Desired string
	// Machine is where the engine scheduled the unit ("" when unscheduled, and for global
	// units, which the engine does not schedule).
	Machine string
	// Running lists the machines whose systemd runs the unit (active or on its way there),
	// sorted: several for a global unit, or for a unit left running on a partitioned machine.
	Running []string
}

func (u Unit) String() string {
	m := u.Machine
	if m == "" {
		m = "-"
	}
	return fmt.Sprintf("desired %s, machine %s, running on [%s]", u.Desired, m, strings.Join(u.Running, " "))
}

// normalize sorts what has no meaningful order and makes empty lists non-nil, so two states
// that say the same compare equal.
func (s *State) normalize() {
	if s.Units == nil {
		s.Units = map[string]Unit{}
	}
	for n, u := range s.Units {
		if u.Running == nil {
			u.Running = []string{}
		}
		slices.Sort(u.Running)
		s.Units[n] = u
	}
}

// Summary renders a state for logs, one unit a line, by name.
func (s State) Summary() string {
	var b strings.Builder
	names := make([]string, 0, len(s.Units))
	for n := range s.Units {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s: %s\n", n, s.Units[n])
	}
	return b.String()
}
