package agentsystemd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

var (
	propNames  = []string{"a.service", "b.service", "c.socket", "d@1.service", "d@2.service", "e.timer", "z.mount"}
	propLoads  = []string{"", LoadLoaded, LoadNotFound, LoadMasked, LoadError, LoadBadSetting}
	propActive = []string{"", ActiveActive, ActiveInactive, ActiveFailed, ActiveActivating, ActiveDeactivating, ActiveReloading}
	propSubs   = []string{"", SubRunning, SubDead, SubExited, SubFailed, "start", "stop-sigterm"}
	propStates = []TargetState{TargetInactive, TargetLoaded, TargetLaunched}
)

// genDesired draws one desired unit. Its content is given as a Hash, a File, or both, always
// consistently, and a given hash always comes with the same File.
func genDesired(t *rapid.T, names []string) DesiredUnit {
	i := rapid.IntRange(0, len(testFiles)-1).Draw(t, "file")
	d := DesiredUnit{
		Name:  rapid.SampledFrom(names).Draw(t, "name"),
		State: rapid.SampledFrom(propStates).Draw(t, "state"),
	}
	switch rapid.IntRange(0, 2).Draw(t, "content") {
	case 0:
		d.Hash = testFiles[i].Hash()
	case 1:
		d.File = testFiles[i]
	default:
		d.Hash, d.File = testFiles[i].Hash(), testFiles[i]
	}
	return d
}

// genCurrent draws one current unit in any combination of states, with no file or one of the
// test files.
func genCurrent(t *rapid.T, name string) CurrentUnit {
	var h unitfile.Hash
	if i := rapid.IntRange(-1, len(testFiles)-1).Draw(t, "file"); i >= 0 {
		h = testFiles[i].Hash()
	}
	return CurrentUnit{
		Name:        name,
		Hash:        h,
		LoadState:   rapid.SampledFrom(propLoads).Draw(t, "load"),
		ActiveState: rapid.SampledFrom(propActive).Draw(t, "active"),
		SubState:    rapid.SampledFrom(propSubs).Draw(t, "sub"),
		// Rarely: most plans should not be forced to reload.
		NeedDaemonReload: rapid.IntRange(0, 4).Draw(t, "need reload") == 0,
	}
}

// genUnique draws desired and current sets with unique names.
func genUnique(t *rapid.T) ([]DesiredUnit, []CurrentUnit) {
	var desired []DesiredUnit
	for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(propNames), rapid.ID).Draw(t, "desired names") {
		desired = append(desired, genDesired(t, []string{n}))
	}
	var current []CurrentUnit
	for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(propNames), rapid.ID).Draw(t, "current names") {
		current = append(current, genCurrent(t, n))
	}
	return desired, current
}

// TestPropertyConvergesInOneRound: with no injected failures, one round of Decide and Apply
// against SimSystemd reaches a state in which Decide plans nothing, every file change has been
// read by systemd, and every unit's reported state matches its target.
func TestPropertyConvergesInOneRound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		desired, current := genUnique(t)
		sys := NewSimSystemd(current...)
		plan, done, err := Reconcile(desired, sys)
		if err != nil {
			t.Fatalf("Reconcile(%v) on %v: plan %v failed: %v", desired, current, plan, err)
		}
		if len(done) != len(plan) {
			t.Fatalf("Reconcile: done %v, want all of %v", done, plan)
		}
		after := sys.CurrentUnits()
		if again := Decide(desired, after); len(again) != 0 {
			t.Fatalf("Decide(%v) after one round from %v (plan %v) = %v, want []\nunits now: %v", desired, current, plan, again, after)
		}
		for _, c := range after {
			if sys.NeedDaemonReload(c.Name) {
				t.Errorf("unit %s needs a daemon-reload after plan %v", c.Name, plan)
			}
		}

		target := map[string]DesiredUnit{}
		for _, d := range desired {
			target[d.Name] = d
		}
		for _, c := range after {
			d, ok := target[c.Name]
			got := c.State()
			switch {
			case !ok || d.State == TargetInactive:
				if !c.Hash.IsZero() || c.Started() {
					t.Errorf("unit %s (target %q) is %+v, want no file and not started", c.Name, d.State, c)
				}
			case c.Hash != d.EffectiveHash():
				t.Errorf("unit %s has hash %s, want %s", c.Name, c.Hash.Short(), d.EffectiveHash().Short())
			case d.State == TargetLoaded && got != CurrentLoaded:
				t.Errorf("unit %s (target loaded) is %v (%+v)", c.Name, got, c)
			case d.State == TargetLaunched && got != CurrentLaunched && c.LoadState != LoadMasked && !loadRejected(c.LoadState):
				t.Errorf("unit %s (target launched) is %v (%+v)", c.Name, got, c)
			}
		}
	})
}

// TestPropertyDeterministicUnderPermutation: Decide's plan does not depend on the order of its
// inputs, even when names repeat.
func TestPropertyDeterministicUnderPermutation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		desired := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) DesiredUnit { return genDesired(t, propNames) }), 0, 10).Draw(t, "desired")
		current := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) CurrentUnit {
			return genCurrent(t, rapid.SampledFrom(propNames).Draw(t, "name"))
		}), 0, 10).Draw(t, "current")
		want := Decide(desired, current)

		d2 := rapid.Permutation(desired).Draw(t, "desired permuted")
		c2 := rapid.Permutation(current).Draw(t, "current permuted")
		got := Decide(d2, c2)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Decide(%v, %v) = %v, want %v (as for %v, %v); diff (-want +got):\n%s", d2, c2, got, want, desired, current, diff)
		}

		r1 := ReportStates(current, "m1")
		r2 := ReportStates(c2, "m1")
		if diff := cmp.Diff(r1, r2, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("ReportStates depends on input order; diff (-first +permuted):\n%s", diff)
		}
	})
}

// TestPropertyPlanShape: at most one daemon-reload, present exactly when a file is written or
// removed, never after a start; phases in order; names sorted within a phase; a unit's stop
// comes before its unload or load.
func TestPropertyPlanShape(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		desired := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) DesiredUnit { return genDesired(t, propNames) }), 0, 10).Draw(t, "desired")
		current := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) CurrentUnit {
			return genCurrent(t, rapid.SampledFrom(propNames).Draw(t, "name"))
		}), 0, 10).Draw(t, "current")
		plan := Decide(desired, current)

		reloads, fileChanges := 0, 0
		// Generated desired units are all valid, so Decide leaves no unit alone and every
		// unit that needs a daemon-reload counts.
		for _, c := range indexCurrent(current) {
			if c.NeedDaemonReload {
				fileChanges++
			}
		}
		seenStart := false
		seen := map[Task]bool{}
		for i, task := range plan {
			switch task.Kind {
			case TaskDaemonReload:
				reloads++
				if seenStart {
					t.Fatalf("plan %v: daemon-reload after a start", plan)
				}
				if task.Unit != "" {
					t.Fatalf("plan %v: daemon-reload names unit %q", plan, task.Unit)
				}
			case TaskStart:
				seenStart = true
			case TaskLoad, TaskUnload:
				fileChanges++
				if reloads > 0 {
					t.Fatalf("plan %v: file change after the daemon-reload", plan)
				}
			}
			if task.Reason == "" {
				t.Fatalf("plan %v: task %d has no reason", plan, i)
			}
			if i > 0 {
				prev := plan[i-1]
				if prev.Kind > task.Kind || (prev.Kind == task.Kind && prev.Unit >= task.Unit) {
					t.Fatalf("plan %v: %v before %v", plan, prev, task)
				}
			}
			key := Task{Kind: task.Kind, Unit: task.Unit}
			if seen[key] {
				t.Fatalf("plan %v: %v twice", plan, key)
			}
			seen[key] = true
		}
		if reloads > 1 {
			t.Fatalf("plan %v: %d daemon-reloads", plan, reloads)
		}
		if (reloads == 1) != (fileChanges > 0) {
			t.Fatalf("plan %v: %d daemon-reloads for %d file changes", plan, reloads, fileChanges)
		}
	})
}

// TestPropertyRoundsConvergeDespiteFailures: with StartFails and injected failures removed
// after some rounds, the machine converges at the next round, whatever state the failed
// rounds left it in.
func TestPropertyRoundsConvergeDespiteFailures(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		desired, current := genUnique(t)
		sys := NewSimSystemd(current...)
		failing := rapid.SliceOfDistinct(rapid.SampledFrom(propNames), rapid.ID).Draw(t, "start fails")
		for _, n := range failing {
			sys.StartFails[n] = true
		}
		failKind := TaskKind(rapid.IntRange(int(TaskStop), int(TaskStart)).Draw(t, "inject kind"))
		sys.Inject = func(task Task) error {
			if task.Kind == failKind {
				return errInjected
			}
			return nil
		}
		for range rapid.IntRange(0, 3).Draw(t, "failing rounds") {
			_, _, _ = Reconcile(desired, sys)
		}
		sys.Inject = nil
		for _, n := range failing {
			sys.StartFails[n] = false
		}
		plan, _, err := Reconcile(desired, sys)
		if err != nil {
			t.Fatalf("recovery round %v: %v", plan, err)
		}
		if again := Decide(desired, sys.CurrentUnits()); len(again) != 0 {
			t.Fatalf("after recovery round %v: Decide = %v, want []", plan, again)
		}
	})
}

var errInjected = errorString("injected")

type errorString string

func (e errorString) Error() string { return string(e) }
