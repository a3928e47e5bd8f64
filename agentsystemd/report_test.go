package agentsystemd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

func TestCurrentState(t *testing.T) {
	tests := []struct {
		name string
		c    CurrentUnit
		want CurrentState
	}{
		{"no file", CurrentUnit{Name: "a.service"}, CurrentInactive},
		{"no file but running", running("a.service", unitfile.Hash{}), CurrentInactive},
		{"file, unknown to systemd", CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadNotFound, ActiveState: ActiveInactive, SubState: SubDead}, CurrentInactive},
		{"file, no systemd state", CurrentUnit{Name: "a.service", Hash: hA}, CurrentInactive},
		{"present and not started", stopped("a.service", hA), CurrentLoaded},
		{"started", running("a.service", hA), CurrentLaunched},
		{"exited but active", CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadLoaded, ActiveState: ActiveActive, SubState: SubExited}, CurrentLaunched},
		{"activating", CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadLoaded, ActiveState: ActiveActivating, SubState: "auto-restart"}, CurrentLaunched},
		{"deactivating", CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadLoaded, ActiveState: ActiveDeactivating, SubState: "stop-sigterm"}, CurrentLaunched},
		{"failed, not acted on: loaded", failed("a.service", hA), CurrentLoaded},
		{"failed, acted on launched: launched", actedOn(failed("a.service", hA), TargetLaunched, hA), CurrentLaunched},
		{"rejected, acted on launched: launched", actedOn(CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadBadSetting, ActiveState: ActiveInactive, SubState: SubDead}, TargetLaunched, hA), CurrentLaunched},
		{"failed, acted on loaded: loaded", actedOn(failed("a.service", hA), TargetLoaded, hA), CurrentLoaded},
		{"running, acted on loaded: loaded", actedOn(running("a.service", hA), TargetLoaded, hA), CurrentLoaded},
		{"running, acted on launched for other content: systemd's view", actedOn(running("a.service", hA), TargetLaunched, hB), CurrentLaunched},
		{"failed, acted on launched for other content: systemd's view", actedOn(failed("a.service", hA), TargetLaunched, hB), CurrentLoaded},
		{"no file, acted on launched: inactive", actedOn(CurrentUnit{Name: "a.service"}, TargetLaunched, hA), CurrentInactive},
		{"masked", CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadMasked, ActiveState: ActiveInactive, SubState: SubDead}, CurrentLoaded},
		{"rejected file", CurrentUnit{Name: "a.service", Hash: hA, LoadState: LoadBadSetting, ActiveState: ActiveInactive, SubState: SubDead}, CurrentLoaded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.State(); got != tt.want {
				t.Errorf("%+v.State() = %v, want %v", tt.c, got, tt.want)
			}
			if got := ReportState(tt.c, "m1").State(); got != tt.want {
				t.Errorf("ReportState(%+v).State() = %v, want %v", tt.c, got, tt.want)
			}
		})
	}
}

func TestReportState(t *testing.T) {
	c := failed("a.service", hA)
	got := ReportState(c, "m1")
	want := UnitState{Name: "a.service", Hash: hA, LoadState: LoadLoaded, ActiveState: ActiveFailed, SubState: SubFailed, Current: CurrentLoaded, MachineID: "m1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReportState(%+v, m1) (-want +got):\n%s", c, diff)
	}
	if !got.Publishable() {
		t.Errorf("%+v.Publishable() = false, want true", got)
	}
	for _, s := range []UnitState{
		ReportState(CurrentUnit{Name: "a.service"}, "m1"),
		ReportState(c, ""),
		{Hash: hA, MachineID: "m1"},
	} {
		if s.Publishable() {
			t.Errorf("%+v.Publishable() = true, want false", s)
		}
	}
}

func TestReportChanged(t *testing.T) {
	base := ReportState(running("a.service", hA), "m1")
	tests := []struct {
		name string
		edit func(*UnitState)
		want bool
	}{
		{"identical", func(*UnitState) {}, false},
		{"sub state", func(s *UnitState) { s.SubState = SubExited }, true},
		{"active state", func(s *UnitState) { s.ActiveState = ActiveFailed }, true},
		{"load state", func(s *UnitState) { s.LoadState = LoadMasked }, true},
		{"hash", func(s *UnitState) { s.Hash = hB }, true},
		{"machine", func(s *UnitState) { s.MachineID = "m2" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := base
			tt.edit(&next)
			if got := ReportChanged(base, next); got != tt.want {
				t.Errorf("ReportChanged(%+v, %+v) = %v, want %v", base, next, got, tt.want)
			}
		})
	}
}

func TestReportStates(t *testing.T) {
	current := []CurrentUnit{
		stopped("c.service", hB),
		running("a.service", hA),
		running("gone.service", unitfile.Hash{}), // no file: not reported
		{Name: "", Hash: hA},                     // no name: ignored
	}
	got := ReportStates(current, "m1")
	want := []UnitState{ReportState(running("a.service", hA), "m1"), ReportState(stopped("c.service", hB), "m1")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReportStates(%v) (-want +got):\n%s", current, diff)
	}
}

func TestDiffReports(t *testing.T) {
	a := ReportState(running("a.service", hA), "m1")
	aFailed := ReportState(failed("a.service", hA), "m1")
	b := ReportState(stopped("b.service", hB), "m1")
	c := ReportState(running("c.service", hA), "m1")
	tests := []struct {
		name       string
		prev, next []UnitState
		want       ReportDiff
	}{
		{"nothing", nil, nil, ReportDiff{}},
		{"unchanged", []UnitState{a, b}, []UnitState{b, a}, ReportDiff{}},
		{"new and changed", []UnitState{a}, []UnitState{c, aFailed, b}, ReportDiff{Publish: []UnitState{aFailed, b, c}}},
		{"removed", []UnitState{c, a, b}, []UnitState{b}, ReportDiff{Remove: []string{"a.service", "c.service"}}},
		{"unpublishable ignored", []UnitState{{Name: "x.service"}}, []UnitState{{Name: "y.service", MachineID: "m1"}}, ReportDiff{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DiffReports(tt.prev, tt.next)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DiffReports(%v, %v) = %+v, want %+v; diff (-want +got):\n%s", tt.prev, tt.next, got, tt.want, diff)
			}
			if got.Empty() != (len(tt.want.Publish)+len(tt.want.Remove) == 0) {
				t.Errorf("DiffReports(...).Empty() = %v", got.Empty())
			}
		})
	}
}
