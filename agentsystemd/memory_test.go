package agentsystemd

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// TestDecideWithActed: what the agent has acted on (CurrentUnit.Acted) keeps it from starting a
// failed unit again and from stopping a loaded unit systemd started by itself; a change of
// target state or content acts again.
func TestDecideWithActed(t *testing.T) {
	tests := []struct {
		name    string
		desired []DesiredUnit
		current []CurrentUnit
		want    Plan
	}{
		{
			name:    "failed after the agent started it: not started again",
			desired: []DesiredUnit{want("a.service", hA, TargetLaunched)},
			current: []CurrentUnit{actedOn(failed("a.service", hA), TargetLaunched, hA)},
		},
		{
			name:    "exited after the agent started it: not started again",
			desired: []DesiredUnit{want("a.service", hA, TargetLaunched)},
			current: []CurrentUnit{actedOn(stopped("a.service", hA), TargetLaunched, hA)},
		},
		{
			name:    "failed, acted on loaded, now launched: started once",
			desired: []DesiredUnit{want("a.service", hA, TargetLaunched)},
			current: []CurrentUnit{actedOn(failed("a.service", hA), TargetLoaded, hA)},
			want:    Plan{startTask("a.service", "unit a.service is launched on this machine but has failed (failed/failed)")},
		},
		{
			name:    "failed, acted on launched for older content, file rewritten: restarted",
			desired: []DesiredUnit{want("a.service", hB, TargetLaunched)},
			current: []CurrentUnit{actedOn(failed("a.service", hA), TargetLaunched, hA)},
			want: Plan{
				loadTask("a.service", hB, "unit a.service is launched on this machine but its hash changed ("+hA.Short()+" → "+hB.Short()+")"),
				reloadTask(1, 0),
				startTask("a.service", "unit a.service is launched on this machine but has failed (failed/failed)"),
			},
		},
		{
			name:    "content on disk but not yet read by systemd, acted on for the older content: started",
			desired: []DesiredUnit{want("a.service", hB, TargetLaunched)},
			current: []CurrentUnit{{Name: "a.service", Hash: hB, LoadState: LoadLoaded, ActiveState: ActiveInactive, SubState: SubDead, NeedDaemonReload: true,
				Acted: Acted{State: TargetLaunched, Hash: hA}}},
			want: Plan{
				{Kind: TaskDaemonReload, Reason: "unit files changed: 0 written, 0 removed, 1 not yet re-read by systemd"},
				startTask("a.service", "unit a.service is launched on this machine but is not running (inactive/dead)"),
			},
		},
		{
			name:    "systemd lost the unit: loaded and started again",
			desired: []DesiredUnit{want("a.service", hA, TargetLaunched)},
			current: []CurrentUnit{{Name: "a.service", Hash: hA, LoadState: LoadNotFound, ActiveState: ActiveInactive, SubState: SubDead, Acted: Acted{State: TargetLaunched, Hash: hA}}},
			want: Plan{
				loadTask("a.service", hA, "unit a.service is launched on this machine but systemd does not know it (load state not-found)"),
				reloadTask(1, 0),
				startTask("a.service", "unit a.service is launched on this machine but is not running (inactive/dead)"),
			},
		},
		{
			name:    "running although loaded, acted on loaded (a dependency started it): left running",
			desired: []DesiredUnit{want("a.service", hA, TargetLoaded)},
			current: []CurrentUnit{actedOn(running("a.service", hA), TargetLoaded, hA)},
		},
		{
			name:    "running, acted on launched, now loaded: stopped",
			desired: []DesiredUnit{want("a.service", hA, TargetLoaded)},
			current: []CurrentUnit{actedOn(running("a.service", hA), TargetLaunched, hA)},
			want:    Plan{stopTask("a.service", "unit a.service is loaded on this machine but systemd reports it active/running")},
		},
		{
			name:    "not scheduled any more: stopped and unloaded whatever was acted on",
			current: []CurrentUnit{actedOn(running("a.service", hA), TargetLoaded, hA)},
			want: Plan{
				stopTask("a.service", "unit a.service is not scheduled to this machine but systemd reports it active/running"),
				unloadTask("a.service", "unit a.service is not scheduled to this machine but its unit file is present ("+hA.Short()+")"),
				reloadTask(0, 1),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.desired, tt.current)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide(%v, %v) (-want +got):\n%s", tt.desired, tt.current, diff)
			}
		})
	}
}

// TestMemoryLearn: after a round, a unit whose tasks all ran is remembered at its target state
// for its content; one with a task that did not run, or a file change whose daemon-reload did
// not run, keeps what it had; a start at which the round stopped counts as acted on.
func TestMemoryLearn(t *testing.T) {
	old := map[string]Acted{"a.service": {TargetLoaded, hA}, "b.service": {TargetLoaded, hA}, "gone.service": {TargetLaunched, hA}}
	desired := []DesiredUnit{want("a.service", hA, TargetLaunched), want("b.service", hB, TargetLaunched), want("c.service", hA, TargetLoaded), want("off.service", hA, TargetInactive)}
	plan := Plan{
		loadTask("b.service", hB, "x"),
		reloadTask(1, 0),
		startTask("a.service", "x"),
		startTask("b.service", "x"),
	}
	tests := []struct {
		name string
		done int
		want map[string]Acted
	}{
		{"all done", 4, map[string]Acted{"a.service": {TargetLaunched, hA}, "b.service": {TargetLaunched, hB}, "c.service": {TargetLoaded, hA}}},
		{"stopped at b's start: counted as acted on", 3, map[string]Acted{"a.service": {TargetLaunched, hA}, "b.service": {TargetLaunched, hB}, "c.service": {TargetLoaded, hA}}},
		{"stopped at a's start: b's start not reached", 2, map[string]Acted{"a.service": {TargetLaunched, hA}, "b.service": {TargetLoaded, hA}, "c.service": {TargetLoaded, hA}}},
		{"stopped at the daemon-reload: b's new file not read", 1, map[string]Acted{"a.service": {TargetLoaded, hA}, "b.service": {TargetLoaded, hA}, "c.service": {TargetLoaded, hA}}},
		{"stopped at b's load", 0, map[string]Acted{"a.service": {TargetLoaded, hA}, "b.service": {TargetLoaded, hA}, "c.service": {TargetLoaded, hA}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Memory{acted: map[string]Acted{}}
			for k, v := range old {
				m.acted[k] = v
			}
			m.Learn(desired, plan, plan[:tt.done])
			if diff := cmp.Diff(tt.want, m.acted); diff != "" {
				t.Errorf("after Learn with %d tasks done (-want +got):\n%s", tt.done, diff)
			}
		})
	}
	var m Memory
	m.Learn([]DesiredUnit{{Name: "bad name", State: TargetLaunched, Hash: hA}, want("x.service", unitfile.Hash{}, TargetLaunched)}, nil, nil)
	if len(m.acted) != 0 {
		t.Errorf("invalid desired units were remembered: %v", m.acted)
	}
}

// countStarts wraps a SimSystemd's Run, counting the start tasks it is given.
type countStarts struct {
	*SimSystemd
	starts map[string]int
}

func (c *countStarts) Run(t Task) error {
	if t.Kind == TaskStart {
		c.starts[t.Unit]++
	}
	return c.SimSystemd.Run(t)
}

// TestNoRestartStorm: a launched unit that fails is started once per change of its desired
// state, however many rounds run (issue 30, item 9); a unit whose start job itself fails too.
func TestNoRestartStorm(t *testing.T) {
	sim := NewSimSystemd()
	sim.ExitsAfterStart["exits.service"] = ExitFailure
	sim.StartFails["refused.service"] = true
	sys := &countStarts{SimSystemd: sim, starts: map[string]int{}}
	launched := []DesiredUnit{want("exits.service", hA, TargetLaunched), want("refused.service", hB, TargetLaunched)}
	var m Memory
	rounds := func(desired []DesiredUnit, n int) {
		t.Helper()
		for range n {
			_, _, _ = m.Reconcile(desired, sys)
		}
	}
	rounds(launched, 10)
	if diff := cmp.Diff(map[string]int{"exits.service": 1, "refused.service": 1}, sys.starts); diff != "" {
		t.Errorf("starts after 10 rounds (-want +got):\n%s", diff)
	}
	// Both report launched: the agent acted on launched. systemd says failed.
	for _, s := range m.ReportStates(sim.CurrentUnits(), "m1") {
		if s.State() != CurrentLaunched || s.ActiveState != ActiveFailed {
			t.Errorf("%s: current %s, systemd %s; want launched, failed", s.Name, s.State(), s.ActiveState)
		}
	}
	// stop (desired loaded): nothing to stop, the units report loaded.
	loaded := []DesiredUnit{want("exits.service", hA, TargetLoaded), want("refused.service", hB, TargetLoaded)}
	plan, _, err := m.Reconcile(loaded, sys)
	if err != nil || len(plan) != 0 {
		t.Errorf("stop round: plan %v, err %v; want nothing to do", plan, err)
	}
	for _, s := range m.ReportStates(sim.CurrentUnits(), "m1") {
		if s.State() != CurrentLoaded {
			t.Errorf("%s after stop: current %s, want loaded", s.Name, s.State())
		}
	}
	// start again: one more start each.
	rounds(launched, 5)
	if diff := cmp.Diff(map[string]int{"exits.service": 2, "refused.service": 2}, sys.starts); diff != "" {
		t.Errorf("starts after a second start (-want +got):\n%s", diff)
	}
	// A memoryless agent (a new one each round) starts again every round, as before.
	for range 3 {
		_, _, _ = Reconcile(launched, sys)
	}
	if got := sys.starts["exits.service"]; got != 5 {
		t.Errorf("memoryless rounds: %d starts of exits.service, want 5", got)
	}
}

// TestCurrentStateIssueCases: the three cases of issue 30, item 8, against SimSystemd: a unit
// systemd refuses to start reports launched once the agent acted on launched, and loaded after
// a stop; a failed unit stopped reports loaded. systemd's view is unchanged in the report.
func TestCurrentStateIssueCases(t *testing.T) {
	sim := NewSimSystemd(CurrentUnit{Name: "noexec.service", Hash: hA, LoadState: LoadBadSetting, ActiveState: ActiveInactive, SubState: SubDead})
	sim.ExitsAfterStart["false.service"] = ExitFailure
	var m Memory
	type st struct{ Current, Load, Active string }
	report := func() map[string]st {
		out := map[string]st{}
		for _, s := range m.ReportStates(sim.CurrentUnits(), "m1") {
			out[s.Name] = st{string(s.State()), s.LoadState, s.ActiveState}
		}
		return out
	}
	steps := []struct {
		name    string
		desired []DesiredUnit
		want    map[string]st
	}{
		{"start both", []DesiredUnit{want("noexec.service", hA, TargetLaunched), want("false.service", hB, TargetLaunched)},
			map[string]st{"noexec.service": {"launched", LoadBadSetting, ActiveInactive}, "false.service": {"launched", LoadLoaded, ActiveFailed}}},
		{"stop both", []DesiredUnit{want("noexec.service", hA, TargetLoaded), want("false.service", hB, TargetLoaded)},
			map[string]st{"noexec.service": {"loaded", LoadBadSetting, ActiveInactive}, "false.service": {"loaded", LoadLoaded, ActiveFailed}}},
	}
	for _, s := range steps {
		for range 3 {
			if _, _, err := m.Reconcile(s.desired, sim); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		if diff := cmp.Diff(s.want, report()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
	}
}

// TestMemoryReconcileListError: a failure to list units is reported and changes nothing.
func TestMemoryReconcileListError(t *testing.T) {
	var m Memory
	_, _, err := m.Reconcile([]DesiredUnit{want("a.service", hA, TargetLaunched)}, failingUnits{})
	if err == nil || err.Error() != "list units: no bus" {
		t.Errorf("err = %v, want list units: no bus", err)
	}
	if a := m.Acted("a.service"); a != (Acted{}) {
		t.Errorf("remembered %v after a failed round", a)
	}
}

type failingUnits struct{}

func (failingUnits) Units() ([]CurrentUnit, error) { return nil, errors.New("no bus") }
func (failingUnits) Run(Task) error                { return errors.New("no bus") }

// TestPropertyOneStartPerDesiredChange: over any sequence of rounds with an agent Memory,
// against units that fail or exit after their start or whose start fails, each unit is
// started at most once per round in which its target state or content differs from the
// previous round's (the first round counts as a change): a failing unit is not started
// again while its desired state stays.
func TestPropertyOneStartPerDesiredChange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		_, current := genUnique(t)
		sys := &countStarts{SimSystemd: NewSimSystemd(current...), starts: map[string]int{}}
		for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(propNames), rapid.ID).Draw(t, "start fails") {
			sys.StartFails[n] = true
		}
		for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(propNames), rapid.ID).Draw(t, "exits") {
			sys.ExitsAfterStart[n] = Exit(rapid.IntRange(int(ExitClean), int(ExitFailure)).Draw(t, "exit"))
		}
		var m Memory
		changes := map[string]int{}
		prev := map[string]DesiredUnit{}
		for round := range rapid.IntRange(1, 6).Draw(t, "rounds") {
			var desired []DesiredUnit
			for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(propNames), rapid.ID).Draw(t, "desired names") {
				desired = append(desired, genDesired(t, []string{n}))
			}
			now := map[string]DesiredUnit{}
			for _, d := range desired {
				now[d.Name] = d
				if p, ok := prev[d.Name]; !ok || p.State != d.State || p.EffectiveHash() != d.EffectiveHash() {
					changes[d.Name]++
				}
			}
			prev = now
			_, _, _ = m.Reconcile(desired, sys)
			for name, n := range sys.starts {
				if n > changes[name] {
					t.Fatalf("round %d: %s started %d times for %d desired changes", round, name, n, changes[name])
				}
			}
		}
	})
}

// TestPropertyReportsActedOnTarget: after a round that completed, every desired unit whose
// file is on the machine reports its target state, whatever systemd did with it.
func TestPropertyReportsActedOnTarget(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		desired, current := genUnique(t)
		sys := NewSimSystemd(current...)
		for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(propNames), rapid.ID).Draw(t, "exits") {
			sys.ExitsAfterStart[n] = Exit(rapid.IntRange(int(ExitClean), int(ExitFailure)).Draw(t, "exit"))
		}
		var m Memory
		if _, _, err := m.Reconcile(desired, sys); err != nil {
			t.Fatalf("round failed: %v", err)
		}
		got := map[string]CurrentState{}
		for _, s := range m.ReportStates(sys.CurrentUnits(), "m1") {
			got[s.Name] = s.State()
		}
		for _, d := range desired {
			if d.State == TargetInactive {
				if _, ok := got[d.Name]; ok {
					t.Fatalf("%s (target inactive) still reported %s", d.Name, got[d.Name])
				}
				continue
			}
			if got[d.Name] != CurrentState(d.State) {
				t.Fatalf("%s (target %s) reports %q", d.Name, d.State, got[d.Name])
			}
		}
	})
}
