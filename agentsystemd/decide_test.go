package agentsystemd

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// testFiles are unit files with distinct hashes.
var testFiles = func() []*unitfile.File {
	var fs []*unitfile.File
	for i := range 4 {
		f, err := unitfile.Parse(fmt.Sprintf("[Unit]\nDescription=test %d\n\n[Service]\nExecStart=/bin/sleep %d\n", i, 1000+i))
		if err != nil {
			panic(err)
		}
		fs = append(fs, f)
	}
	return fs
}()

var (
	fileA, fileB = testFiles[0], testFiles[1]
	hA, hB       = fileA.Hash(), fileB.Hash()
)

func want(name string, h unitfile.Hash, s TargetState) DesiredUnit {
	return DesiredUnit{Name: name, Hash: h, State: s}
}

func running(name string, h unitfile.Hash) CurrentUnit {
	return CurrentUnit{Name: name, Hash: h, LoadState: LoadLoaded, ActiveState: ActiveActive, SubState: SubRunning}
}

func stopped(name string, h unitfile.Hash) CurrentUnit {
	return CurrentUnit{Name: name, Hash: h, LoadState: LoadLoaded, ActiveState: ActiveInactive, SubState: SubDead}
}

func failed(name string, h unitfile.Hash) CurrentUnit {
	return CurrentUnit{Name: name, Hash: h, LoadState: LoadLoaded, ActiveState: ActiveFailed, SubState: SubFailed}
}

// actedOn returns c as the agent remembers it: acted on state s for content h.
func actedOn(c CurrentUnit, s TargetState, h unitfile.Hash) CurrentUnit {
	c.Acted = Acted{State: s, Hash: h}
	return c
}

func stopTask(name, reason string) Task   { return Task{Kind: TaskStop, Unit: name, Reason: reason} }
func unloadTask(name, reason string) Task { return Task{Kind: TaskUnload, Unit: name, Reason: reason} }
func startTask(name, reason string) Task  { return Task{Kind: TaskStart, Unit: name, Reason: reason} }
func loadTask(name string, h unitfile.Hash, reason string) Task {
	return Task{Kind: TaskLoad, Unit: name, Hash: h, Reason: reason}
}
func reloadTask(written, removed int) Task {
	return Task{Kind: TaskDaemonReload, Reason: fmt.Sprintf("unit files changed: %d written, %d removed", written, removed)}
}

func TestDecide(t *testing.T) {
	changed := func(name string, s TargetState, from, to unitfile.Hash) string {
		return fmt.Sprintf("unit %s is %s on this machine but its hash changed (%s → %s)", name, s, from.Short(), to.Short())
	}
	tests := []struct {
		name    string
		desired []DesiredUnit
		current []CurrentUnit
		want    Plan
	}{
		{
			name: "nothing desired, nothing present",
		},
		{
			name:    "new unit to launch",
			desired: []DesiredUnit{want("foo.service", hA, TargetLaunched)},
			want: Plan{
				loadTask("foo.service", hA, "unit foo.service is launched on this machine but its unit file is not present"),
				reloadTask(1, 0),
				startTask("foo.service", "unit foo.service is launched on this machine and its unit file is being loaded"),
			},
		},
		{
			name:    "new unit to load only",
			desired: []DesiredUnit{want("foo.service", hA, TargetLoaded)},
			want: Plan{
				loadTask("foo.service", hA, "unit foo.service is loaded on this machine but its unit file is not present"),
				reloadTask(1, 0),
			},
		},
		{
			name:    "new unit with target inactive does nothing",
			desired: []DesiredUnit{want("foo.service", hA, TargetInactive)},
		},
		{
			name:    "launched to loaded stops",
			desired: []DesiredUnit{want("foo.service", hA, TargetLoaded)},
			current: []CurrentUnit{running("foo.service", hA)},
			want: Plan{
				stopTask("foo.service", "unit foo.service is loaded on this machine but systemd reports it active/running"),
			},
		},
		{
			name:    "loaded to launched starts",
			desired: []DesiredUnit{want("foo.service", hA, TargetLaunched)},
			current: []CurrentUnit{stopped("foo.service", hA)},
			want: Plan{
				startTask("foo.service", "unit foo.service is launched on this machine but is not running (inactive/dead)"),
			},
		},
		{
			name:    "loaded to inactive unloads",
			desired: []DesiredUnit{want("foo.service", hA, TargetInactive)},
			current: []CurrentUnit{stopped("foo.service", hA)},
			want: Plan{
				unloadTask("foo.service", fmt.Sprintf("unit foo.service has target state inactive on this machine but its unit file is present (%s)", hA.Short())),
				reloadTask(0, 1),
			},
		},
		{
			name:    "launched to inactive stops then unloads",
			desired: []DesiredUnit{want("foo.service", hA, TargetInactive)},
			current: []CurrentUnit{running("foo.service", hA)},
			want: Plan{
				stopTask("foo.service", "unit foo.service has target state inactive on this machine but systemd reports it active/running"),
				unloadTask("foo.service", fmt.Sprintf("unit foo.service has target state inactive on this machine but its unit file is present (%s)", hA.Short())),
				reloadTask(0, 1),
			},
		},
		{
			name:    "unit not desired is stopped and unloaded",
			current: []CurrentUnit{running("foo.service", hA)},
			want: Plan{
				stopTask("foo.service", "unit foo.service is not scheduled to this machine but systemd reports it active/running"),
				unloadTask("foo.service", fmt.Sprintf("unit foo.service is not scheduled to this machine but its unit file is present (%s)", hA.Short())),
				reloadTask(0, 1),
			},
		},
		{
			name:    "failed unit not desired is unloaded without a stop",
			current: []CurrentUnit{failed("foo.service", hA)},
			want: Plan{
				unloadTask("foo.service", fmt.Sprintf("unit foo.service is not scheduled to this machine but its unit file is present (%s)", hA.Short())),
				reloadTask(0, 1),
			},
		},
		{
			name:    "deactivating unit not desired is stopped too",
			current: []CurrentUnit{{Name: "foo.service", Hash: hA, LoadState: LoadLoaded, ActiveState: ActiveDeactivating, SubState: "stop-sigterm"}},
			want: Plan{
				stopTask("foo.service", "unit foo.service is not scheduled to this machine but systemd reports it deactivating/stop-sigterm"),
				unloadTask("foo.service", fmt.Sprintf("unit foo.service is not scheduled to this machine but its unit file is present (%s)", hA.Short())),
				reloadTask(0, 1),
			},
		},
		{
			name:    "running unit without a file and not desired is only stopped",
			current: []CurrentUnit{running("foo.service", unitfile.Hash{})},
			want: Plan{
				stopTask("foo.service", "unit foo.service is not scheduled to this machine but systemd reports it active/running"),
			},
		},
		{
			name:    "hash change while running restarts",
			desired: []DesiredUnit{want("foo.service", hB, TargetLaunched)},
			current: []CurrentUnit{running("foo.service", hA)},
			want: Plan{
				stopTask("foo.service", changed("foo.service", TargetLaunched, hA, hB)),
				loadTask("foo.service", hB, changed("foo.service", TargetLaunched, hA, hB)),
				reloadTask(1, 0),
				startTask("foo.service", "unit foo.service is launched on this machine and was stopped to rewrite its unit file"),
			},
		},
		{
			name:    "hash change while running with target loaded stops and rewrites",
			desired: []DesiredUnit{want("foo.service", hB, TargetLoaded)},
			current: []CurrentUnit{running("foo.service", hA)},
			want: Plan{
				stopTask("foo.service", changed("foo.service", TargetLoaded, hA, hB)),
				loadTask("foo.service", hB, changed("foo.service", TargetLoaded, hA, hB)),
				reloadTask(1, 0),
			},
		},
		{
			name:    "hash change while stopped rewrites without a stop",
			desired: []DesiredUnit{want("foo.service", hB, TargetLoaded)},
			current: []CurrentUnit{stopped("foo.service", hA)},
			want: Plan{
				loadTask("foo.service", hB, changed("foo.service", TargetLoaded, hA, hB)),
				reloadTask(1, 0),
			},
		},
		{
			name:    "failed unit desired launched is started",
			desired: []DesiredUnit{want("foo.service", hA, TargetLaunched)},
			current: []CurrentUnit{failed("foo.service", hA)},
			want: Plan{
				startTask("foo.service", "unit foo.service is launched on this machine but has failed (failed/failed)"),
			},
		},
		{
			name:    "failed unit desired loaded is left failed",
			desired: []DesiredUnit{want("foo.service", hA, TargetLoaded)},
			current: []CurrentUnit{failed("foo.service", hA)},
		},
		{
			name:    "activating unit counts as started",
			desired: []DesiredUnit{want("foo.service", hA, TargetLaunched)},
			current: []CurrentUnit{{Name: "foo.service", Hash: hA, LoadState: LoadLoaded, ActiveState: ActiveActivating, SubState: "start"}},
		},
		{
			name: "no-op when converged",
			desired: []DesiredUnit{
				want("a.service", hA, TargetLaunched),
				want("b.service", hB, TargetLoaded),
				want("c.service", hA, TargetInactive),
			},
			current: []CurrentUnit{running("a.service", hA), stopped("b.service", hB)},
		},
		{
			name:    "file present but unknown to systemd is linked again",
			desired: []DesiredUnit{want("foo.service", hA, TargetLaunched)},
			current: []CurrentUnit{{Name: "foo.service", Hash: hA, LoadState: LoadNotFound, ActiveState: ActiveInactive, SubState: SubDead}},
			want: Plan{
				loadTask("foo.service", hA, "unit foo.service is launched on this machine but systemd does not know it (load state not-found)"),
				reloadTask(1, 0),
				startTask("foo.service", "unit foo.service is launched on this machine but is not running (inactive/dead)"),
			},
		},
		{
			name:    "masked unit is never started",
			desired: []DesiredUnit{want("foo.service", hB, TargetLaunched)},
			current: []CurrentUnit{{Name: "foo.service", Hash: hA, LoadState: LoadMasked, ActiveState: ActiveInactive, SubState: SubDead}},
			want: Plan{
				loadTask("foo.service", hB, changed("foo.service", TargetLaunched, hA, hB)),
				reloadTask(1, 0),
			},
		},
		{
			name:    "unit with a rejected file is not started until the file changes",
			desired: []DesiredUnit{want("a.service", hA, TargetLaunched), want("b.service", hB, TargetLaunched)},
			current: []CurrentUnit{
				{Name: "a.service", Hash: hA, LoadState: LoadBadSetting, ActiveState: ActiveInactive, SubState: SubDead},
				{Name: "b.service", Hash: hA, LoadState: LoadError, ActiveState: ActiveInactive, SubState: SubDead},
			},
			want: Plan{
				loadTask("b.service", hB, changed("b.service", TargetLaunched, hA, hB)),
				reloadTask(1, 0),
				startTask("b.service", "unit b.service is launched on this machine but is not running (inactive/dead)"),
			},
		},
		{
			name:    "file not yet re-read by systemd: daemon-reload before the start",
			desired: []DesiredUnit{want("foo.service", hA, TargetLaunched)},
			current: []CurrentUnit{stale(stopped("foo.service", hA))},
			want: Plan{
				{Kind: TaskDaemonReload, Reason: "unit files changed: 0 written, 0 removed, 1 not yet re-read by systemd"},
				startTask("foo.service", "unit foo.service is launched on this machine but is not running (inactive/dead)"),
			},
		},
		{
			name:    "rejected load state of content no longer on disk does not block the start",
			desired: []DesiredUnit{want("foo.service", hA, TargetLaunched)},
			current: []CurrentUnit{stale(CurrentUnit{Name: "foo.service", Hash: hA, LoadState: LoadError, ActiveState: ActiveInactive, SubState: SubDead})},
			want: Plan{
				{Kind: TaskDaemonReload, Reason: "unit files changed: 0 written, 0 removed, 1 not yet re-read by systemd"},
				startTask("foo.service", "unit foo.service is launched on this machine but is not running (inactive/dead)"),
			},
		},
		{
			name:    "removed file not yet re-read by systemd",
			current: []CurrentUnit{stale(stopped("foo.service", unitfile.Hash{}))},
			want: Plan{
				{Kind: TaskDaemonReload, Reason: "unit files changed: 0 written, 0 removed, 1 not yet re-read by systemd"},
			},
		},
		{
			name:    "hash taken from the file when Hash is zero",
			desired: []DesiredUnit{{Name: "foo.service", File: fileA, State: TargetLaunched}},
			current: []CurrentUnit{running("foo.service", hA)},
		},
		{
			name:    "load task carries the file",
			desired: []DesiredUnit{{Name: "foo.service", File: fileB, State: TargetLoaded}},
			current: []CurrentUnit{stopped("foo.service", hA)},
			want: Plan{
				{Kind: TaskLoad, Unit: "foo.service", Hash: hB, File: fileB, Reason: changed("foo.service", TargetLoaded, hA, hB)},
				reloadTask(1, 0),
			},
		},
		{
			name: "invalid desired entries leave their unit alone",
			desired: []DesiredUnit{
				{Name: "a.service", State: TargetLaunched},            // no content
				{Name: "b.service", Hash: hA, State: "running"},       // bad state
				{Name: "../c.service", Hash: hA, State: TargetLoaded}, // bad name
			},
			current: []CurrentUnit{running("a.service", hB), running("b.service", hB), running("../c.service", hB)},
		},
		{
			name: "duplicate desired names: the higher target state wins",
			desired: []DesiredUnit{
				want("foo.service", hA, TargetLoaded),
				want("foo.service", hA, TargetLaunched),
				want("foo.service", hA, TargetInactive),
			},
			current: []CurrentUnit{stopped("foo.service", hA)},
			want: Plan{
				startTask("foo.service", "unit foo.service is launched on this machine but is not running (inactive/dead)"),
			},
		},
		{
			name: "multiple units: phases in order, names sorted, one daemon-reload",
			desired: []DesiredUnit{
				want("z.service", hA, TargetLaunched),
				want("m.service", hB, TargetLaunched),
				want("b.service", hA, TargetLoaded),
				want("k.service", hA, TargetLaunched),
				want("a.service", hB, TargetLoaded),
			},
			current: []CurrentUnit{
				running("y.service", hA),
				running("m.service", hA),
				running("b.service", hA),
				stopped("c.service", hB),
				failed("k.service", hA),
				stopped("a.service", hA),
			},
			want: Plan{
				stopTask("b.service", "unit b.service is loaded on this machine but systemd reports it active/running"),
				stopTask("m.service", changed("m.service", TargetLaunched, hA, hB)),
				stopTask("y.service", "unit y.service is not scheduled to this machine but systemd reports it active/running"),
				unloadTask("c.service", fmt.Sprintf("unit c.service is not scheduled to this machine but its unit file is present (%s)", hB.Short())),
				unloadTask("y.service", fmt.Sprintf("unit y.service is not scheduled to this machine but its unit file is present (%s)", hA.Short())),
				loadTask("a.service", hB, changed("a.service", TargetLoaded, hA, hB)),
				loadTask("m.service", hB, changed("m.service", TargetLaunched, hA, hB)),
				loadTask("z.service", hA, "unit z.service is launched on this machine but its unit file is not present"),
				reloadTask(3, 2),
				startTask("k.service", "unit k.service is launched on this machine but has failed (failed/failed)"),
				startTask("m.service", "unit m.service is launched on this machine and was stopped to rewrite its unit file"),
				startTask("z.service", "unit z.service is launched on this machine and its unit file is being loaded"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.desired, tt.current)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide(%v, %v) = %v, want %v; diff (-want +got):\n%s", tt.desired, tt.current, got, tt.want, diff)
			}
		})
	}
}

func TestDesiredUnitValidate(t *testing.T) {
	tests := []struct {
		name string
		d    DesiredUnit
		ok   bool
	}{
		{"hash only", want("a.service", hA, TargetLaunched), true},
		{"file only", DesiredUnit{Name: "a.service", File: fileA, State: TargetLoaded}, true},
		{"file and matching hash", DesiredUnit{Name: "a.service", File: fileA, Hash: hA, State: TargetLoaded}, true},
		{"file and other hash", DesiredUnit{Name: "a.service", File: fileA, Hash: hB, State: TargetLoaded}, false},
		{"inactive without content", DesiredUnit{Name: "a.service", State: TargetInactive}, true},
		{"launched without content", DesiredUnit{Name: "a.service", State: TargetLaunched}, false},
		{"empty state", DesiredUnit{Name: "a.service", Hash: hA}, false},
		{"bad name", want("a", hA, TargetLoaded), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.d.Validate(); (err == nil) != tt.ok {
				t.Errorf("%+v.Validate() = %v, want ok=%v", tt.d, err, tt.ok)
			}
		})
	}
}

func TestTaskKindString(t *testing.T) {
	got := []string{TaskStop.String(), TaskUnload.String(), TaskLoad.String(), TaskDaemonReload.String(), TaskStart.String(), TaskKind(0).String()}
	wantS := []string{"stop", "unload", "load", "daemon-reload", "start", "TaskKind(0)"}
	if diff := cmp.Diff(wantS, got); diff != "" {
		t.Errorf("TaskKind.String() mismatch (-want +got):\n%s", diff)
	}
	p := Plan{stopTask("a.service", ""), reloadTask(0, 0)}
	if got, w := p.String(), "[stop a.service; daemon-reload]"; got != w {
		t.Errorf("Plan.String() = %q, want %q", got, w)
	}
}
