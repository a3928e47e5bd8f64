package triggers

import (
	"slices"
	"testing"
)

// TestTable pins the spec's rules on what moves placements.
func TestTable(t *testing.T) {
	wakesScheduler := func(c Change) bool {
		return slices.ContainsFunc(For(c), func(t Target) bool { return t.Controller == Scheduler })
	}
	for _, c := range []Change{MemberBecameEligible, MemberLabelsChanged, MemberTaintRemoved, MemberLeaving, PolicySnapshotNew, BindingDeleted, HubStarted} {
		if !wakesScheduler(c) {
			t.Errorf("For(%q) does not wake the scheduler", c)
		}
	}
	for _, c := range []Change{MemberTaintAdded, MemberStatusChanged, BindingChanged, RequeueAfter} {
		if wakesScheduler(c) {
			t.Errorf("For(%q) wakes the scheduler; it must not move placements", c)
		}
	}
	// The unit engine: unit and machine changes wake it; heartbeats do not (a machine is
	// lost by the engine's timed wake when its TTL runs out), and it wakes no placement
	// controller.
	for _, c := range []Change{UnitChanged, MachineChanged} {
		if got := For(c); len(got) != 1 || got[0] != (Target{UnitEngine, AllUnits}) {
			t.Errorf("For(%q) = %v, want the unit engine on every unit", c, got)
		}
	}
	if got := For(MachineHeartbeat); len(got) != 0 {
		t.Errorf("For(MachineHeartbeat) = %v, want nothing", got)
	}
	for _, c := range Changes() {
		if _, ok := table[c]; !ok {
			t.Errorf("Changes() lists %q, which the table lacks", c)
		}
	}
	if len(Changes()) != len(table) {
		t.Errorf("Changes() has %d entries, the table %d", len(Changes()), len(table))
	}
}
