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
	for _, c := range Changes() {
		if _, ok := table[c]; !ok {
			t.Errorf("Changes() lists %q, which the table lacks", c)
		}
	}
	if len(Changes()) != len(table) {
		t.Errorf("Changes() has %d entries, the table %d", len(Changes()), len(table))
	}
}
