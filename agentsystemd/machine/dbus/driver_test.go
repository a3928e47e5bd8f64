package dbus_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/agentsystemd"
	sdbus "github.com/fleetsim/fleetsim/agentsystemd/machine/dbus"
	"github.com/fleetsim/fleetsim/agentsystemd/machine/dbus/sdtest"
	"github.com/fleetsim/fleetsim/model/unitfile"
)

func mustParse(t *testing.T, text string) *unitfile.File {
	t.Helper()
	f, err := unitfile.Parse(text)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

type state struct{ Load, Active, Sub string }

func states(t *testing.T, d *sdbus.Driver) map[string]state {
	t.Helper()
	cur, err := d.Units()
	if err != nil {
		t.Fatalf("Units: %v", err)
	}
	m := map[string]state{}
	for _, c := range cur {
		m[c.Name] = state{c.LoadState, c.ActiveState, c.SubState}
	}
	return m
}

// reconcile runs rounds until the plan is empty (at most a few: a start may need systemd's
// state to settle).
func reconcile(t *testing.T, d *sdbus.Driver, desired []agentsystemd.DesiredUnit) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		plan, _, err := agentsystemd.Reconcile(desired, d)
		if err != nil {
			t.Fatalf("Reconcile: plan %v: %v", plan, err)
		}
		if len(plan) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no convergence; last plan %v", plan)
		}
	}
}

func TestDriverOnRealSystemd(t *testing.T) {
	sb := sdtest.Start(t)
	ctx := context.Background()
	d, err := sdbus.Dial(ctx, sb.BusAddress, sb.UnitDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	if v, err := d.Version(ctx); err != nil || v == "" {
		t.Fatalf("Version = %q, %v", v, err)
	}

	sleeper := mustParse(t, "[Unit]\nDescription=sleeper\n\n[Service]\nExecStart=/bin/sleep 600\n")
	other := mustParse(t, "[Service]\nExecStart=/bin/sleep 700\n")
	desired := []agentsystemd.DesiredUnit{
		{Name: "sleeper.service", File: sleeper, State: agentsystemd.TargetLaunched},
		{Name: "other.service", File: other, State: agentsystemd.TargetLoaded},
	}
	reconcile(t, d, desired)
	want := map[string]state{
		"sleeper.service": {"loaded", "active", "running"},
		"other.service":   {"loaded", "inactive", "dead"},
	}
	if diff := cmp.Diff(want, states(t, d)); diff != "" {
		t.Fatalf("states after launch (-want +got):\n%s", diff)
	}
	cur, _ := d.Units()
	for _, c := range cur {
		if c.Hash != map[string]unitfile.Hash{"sleeper.service": sleeper.Hash(), "other.service": other.Hash()}[c.Name] {
			t.Errorf("%s: hash on disk %s differs from the desired one", c.Name, c.Hash.Short())
		}
	}
	// The process really runs, in the sandbox's systemd, not in the host's root cgroup.
	pid, err := d.MainPID(ctx, "sleeper.service")
	if err != nil || pid == 0 {
		t.Fatalf("MainPID = %d, %v", pid, err)
	}
	out, err := sb.Systemctl("is-active", "sleeper.service")
	if strings.TrimSpace(out) != "active" {
		t.Fatalf("systemctl is-active in the sandbox: %q, %v", out, err)
	}

	// Stopped by systemd behind the agent's back: reported from systemd, restarted by Decide.
	if out, err := sb.Systemctl("stop", "sleeper.service"); err != nil {
		t.Fatalf("systemctl stop: %v %s", err, out)
	}
	if got := states(t, d)["sleeper.service"]; got.Active != "inactive" {
		t.Fatalf("after an outside stop the driver reports %+v, want inactive", got)
	}
	reconcile(t, d, desired)
	if got := states(t, d)["sleeper.service"]; got != (state{"loaded", "active", "running"}) {
		t.Fatalf("after reconcile: %+v", got)
	}

	// New content for a launched unit: stopped, rewritten, started again.
	sleeper2 := mustParse(t, "[Service]\nExecStart=/bin/sleep 601\n")
	desired[0].File = sleeper2
	reconcile(t, d, desired)
	pid2, _ := d.MainPID(ctx, "sleeper.service")
	if pid2 == 0 || pid2 == pid {
		t.Fatalf("MainPID after rewrite = %d (before %d): want a new process", pid2, pid)
	}
	if out, _ := sb.Systemctl("cat", "sleeper.service"); !strings.Contains(out, "sleep 601") {
		t.Fatalf("systemd does not see the new content:\n%s", out)
	}

	// Target loaded stops it; not desired removes everything.
	desired[0].State = agentsystemd.TargetLoaded
	reconcile(t, d, desired)
	if got := states(t, d)["sleeper.service"]; got != (state{"loaded", "inactive", "dead"}) {
		t.Fatalf("after target loaded: %+v", got)
	}
	reconcile(t, d, nil)
	if got := states(t, d); len(got) != 0 {
		t.Fatalf("after destroy the driver still reports %v", got)
	}
	entries, _ := os.ReadDir(sb.UnitDir)
	if len(entries) != 0 {
		t.Fatalf("unit dir not empty: %v", entries)
	}
	if out, _ := sb.Systemctl("show", "-p", "LoadState", "sleeper.service"); !strings.Contains(out, "not-found") {
		t.Fatalf("systemd still knows sleeper.service: %s", out)
	}
}

func TestDriverRefusesBadNames(t *testing.T) {
	sb := sdtest.Start(t)
	d, err := sdbus.Dial(context.Background(), sb.BusAddress, sb.UnitDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	f := mustParse(t, "[Service]\nExecStart=/bin/true\n")
	for _, name := range []string{"../evil.service", "a/b.service", "/etc/x.service", "noext", ""} {
		err := d.Run(agentsystemd.Task{Kind: agentsystemd.TaskLoad, Unit: name, File: f})
		if err == nil {
			t.Errorf("load %q: no error", name)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(sb.UnitDir), "evil.service")); err == nil {
		t.Fatal("a unit file landed outside the unit directory")
	}
}
