package agentsystemd

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

func TestSimSystemdLifecycle(t *testing.T) {
	sys := NewSimSystemd()
	run := func(task Task) {
		t.Helper()
		if err := sys.Run(task); err != nil {
			t.Fatalf("Run(%v) = %v", task, err)
		}
	}
	check := func(step string, want ...CurrentUnit) {
		t.Helper()
		if diff := cmp.Diff(want, sys.CurrentUnits(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("after %s: units (-want +got):\n%s", step, diff)
		}
	}

	run(loadTask("a.service", hA, ""))
	check("load", CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadNotFound, ActiveState: ActiveInactive, SubState: SubDead, NeedDaemonReload: true})
	if !sys.NeedDaemonReload("a.service") {
		t.Error("NeedDaemonReload after load = false, want true")
	}
	if err := sys.Run(startTask("a.service", "")); err == nil {
		t.Error("start before daemon-reload succeeded, want an error")
	}
	run(reloadTask(1, 0))
	check("daemon-reload", stopped("a.service", hA))
	if sys.NeedDaemonReload("a.service") {
		t.Error("NeedDaemonReload after daemon-reload = true, want false")
	}
	run(startTask("a.service", ""))
	check("start", running("a.service", hA))
	run(startTask("a.service", ""))
	check("second start", running("a.service", hA))

	// A new file is read only at the next daemon-reload.
	run(loadTask("a.service", hB, ""))
	if !sys.NeedDaemonReload("a.service") {
		t.Error("NeedDaemonReload after rewrite = false, want true")
	}
	run(reloadTask(1, 0))

	run(stopTask("a.service", ""))
	check("stop", stopped("a.service", hB))
	run(stopTask("a.service", ""))
	check("second stop", stopped("a.service", hB))

	run(unloadTask("a.service", ""))
	check("unload", stale(stopped("a.service", unitfile.Hash{})))
	run(reloadTask(0, 1))
	check("daemon-reload after unload")
	if got := sys.DaemonReloads(); got != 3 {
		t.Errorf("DaemonReloads() = %d, want 3", got)
	}
	if err := sys.Run(stopTask("a.service", "")); err == nil {
		t.Error("stop of an unknown unit succeeded, want an error")
	}
	run(unloadTask("a.service", "")) // idempotent
}

func stale(c CurrentUnit) CurrentUnit {
	c.NeedDaemonReload = true
	return c
}

func TestSimSystemdSetNeedDaemonReload(t *testing.T) {
	for _, c := range []CurrentUnit{
		stale(stopped("a.service", hA)),
		stale(running("a.service", unitfile.Hash{})),
		stale(CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadError, ActiveState: ActiveInactive, SubState: SubDead}),
		stopped("a.service", hA),
		running("a.service", unitfile.Hash{}),
		CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadMasked, ActiveState: ActiveInactive, SubState: SubDead},
	} {
		sys := NewSimSystemd(c)
		if diff := cmp.Diff([]CurrentUnit{c}, sys.CurrentUnits()); diff != "" {
			t.Errorf("NewSimSystemd(%+v).CurrentUnits() (-want +got):\n%s", c, diff)
		}
	}

	// A file rejected before it changed is loaded after the next daemon-reload.
	sys := NewSimSystemd(stale(CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadError, ActiveState: ActiveInactive, SubState: SubDead}))
	if err := sys.Run(reloadTask(0, 0)); err != nil {
		t.Fatal(err)
	}
	if got, _ := sys.Unit("a.service"); got != stopped("a.service", hA) {
		t.Errorf("after daemon-reload: %+v, want %+v", got, stopped("a.service", hA))
	}
}

func TestSimSystemdFailures(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(*SimSystemd)
		initial CurrentUnit
		task    Task
		wantErr bool
		want    CurrentUnit
	}{
		{
			name:    "start fails",
			setup:   func(s *SimSystemd) { s.StartFails["a.service"] = true },
			initial: stopped("a.service", hA),
			task:    startTask("a.service", ""),
			wantErr: true,
			want:    failed("a.service", hA),
		},
		{
			name:    "exits cleanly after start",
			setup:   func(s *SimSystemd) { s.ExitsAfterStart["a.service"] = ExitClean },
			initial: stopped("a.service", hA),
			task:    startTask("a.service", ""),
			want:    stopped("a.service", hA),
		},
		{
			name:    "fails after start",
			setup:   func(s *SimSystemd) { s.ExitsAfterStart["a.service"] = ExitFailure },
			initial: stopped("a.service", hA),
			task:    startTask("a.service", ""),
			want:    failed("a.service", hA),
		},
		{
			name:    "failed unit restarts",
			initial: failed("a.service", hA),
			task:    startTask("a.service", ""),
			want:    running("a.service", hA),
		},
		{
			name:    "masked unit does not start",
			initial: CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadMasked, ActiveState: ActiveInactive, SubState: SubDead},
			task:    startTask("a.service", ""),
			wantErr: true,
			want:    CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadMasked, ActiveState: ActiveInactive, SubState: SubDead},
		},
		{
			name:    "masked unit stays masked across daemon-reload",
			initial: CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadMasked, ActiveState: ActiveInactive, SubState: SubDead},
			task:    reloadTask(0, 0),
			want:    CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadMasked, ActiveState: ActiveInactive, SubState: SubDead},
		},
		{
			name:    "rejected file stays rejected across daemon-reload",
			initial: CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadBadSetting, ActiveState: ActiveInactive, SubState: SubDead},
			task:    reloadTask(0, 0),
			want:    CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadBadSetting, ActiveState: ActiveInactive, SubState: SubDead},
		},
		{
			name:    "rejected file does not start",
			initial: CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadError, ActiveState: ActiveInactive, SubState: SubDead},
			task:    startTask("a.service", ""),
			wantErr: true,
			want:    CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadError, ActiveState: ActiveInactive, SubState: SubDead},
		},
		{
			name:    "unload resets a failed unit",
			initial: failed("a.service", hA),
			task:    unloadTask("a.service", ""),
			want:    stale(stopped("a.service", unitfile.Hash{})),
		},
		{
			name:    "unload leaves a running unit running",
			initial: running("a.service", hA),
			task:    unloadTask("a.service", ""),
			want:    stale(running("a.service", unitfile.Hash{})),
		},
		{
			name:    "daemon-reload keeps a running unit whose file is gone",
			initial: running("a.service", unitfile.Hash{}),
			task:    reloadTask(0, 0),
			want:    CurrentUnit{Name: "a.service", LoadState: LoadNotFound, ActiveState: ActiveActive, SubState: SubRunning},
		},
		{
			name:    "stop leaves a failed unit failed",
			initial: failed("a.service", hA),
			task:    stopTask("a.service", ""),
			want:    failed("a.service", hA),
		},
		{
			name:    "injected failure has no effect",
			setup:   func(s *SimSystemd) { s.Inject = func(Task) error { return errors.New("injected") } },
			initial: running("a.service", hA),
			task:    stopTask("a.service", ""),
			wantErr: true,
			want:    running("a.service", hA),
		},
		{
			name:    "load without content fails",
			initial: stopped("a.service", hA),
			task:    loadTask("a.service", unitfile.Hash{}, ""),
			wantErr: true,
			want:    stopped("a.service", hA),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := NewSimSystemd(tt.initial)
			if tt.setup != nil {
				tt.setup(sys)
			}
			err := sys.Run(tt.task)
			if (err != nil) != tt.wantErr {
				t.Errorf("Run(%v) = %v, want error %v", tt.task, err, tt.wantErr)
			}
			got, ok := sys.Unit(tt.initial.Name)
			if !ok {
				t.Fatalf("Unit(%s) missing after %v", tt.initial.Name, tt.task)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Unit(%s) after %v (-want +got):\n%s", tt.initial.Name, tt.task, diff)
			}
		})
	}
}
