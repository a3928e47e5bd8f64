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
)

// countingDriver counts the start tasks the agent gives systemd.
type countingDriver struct {
	*sdbus.Driver
	starts map[string]int
}

func (c *countingDriver) Run(t agentsystemd.Task) error {
	if t.Kind == agentsystemd.TaskStart {
		c.starts[t.Unit]++
	}
	return c.Driver.Run(t)
}

// TestActedOnStatesOnRealSystemd: issue 30, items 8 and 9, on a real systemd. A unit systemd
// refuses (no ExecStart=) and a unit that fails at once (ExecStart ends in /bin/false) report
// launched once the agent has acted on launched, and loaded after a stop, while systemd's own
// states say bad-setting and failed. Over many rounds the failing unit is started once per
// desired-state change: systemd ran it once, then once more after a stop and a start.
func TestActedOnStatesOnRealSystemd(t *testing.T) {
	sb := sdtest.Start(t)
	d, err := sdbus.Dial(context.Background(), sb.BusAddress, sb.UnitDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	sys := &countingDriver{Driver: d, starts: map[string]int{}}
	// Each run of false.service appends a line to runs.log (not a unit name: the driver
	// ignores it), so systemd's own count of runs is visible from the host.
	runs := filepath.Join(sb.UnitDir, "runs.log")
	noexec := mustParse(t, "[Unit]\nDescription=no ExecStart\n\n[Service]\nType=simple\n")
	failing := mustParse(t, "[Service]\nExecStart=/bin/sh -c 'echo run >> "+runs+"; exec /bin/false'\n")
	desired := func(s agentsystemd.TargetState) []agentsystemd.DesiredUnit {
		return []agentsystemd.DesiredUnit{{Name: "noexec.service", File: noexec, State: s}, {Name: "false.service", File: failing, State: s}}
	}
	var mem agentsystemd.Memory
	// rounds runs n rounds, a quarter second apart (systemd's state settles between them; a
	// real agent runs one on each change systemd reports, and every 5 s). Only the first may
	// fail: it asks systemd to start noexec.service before systemd has read its file, and
	// systemd refuses (which counts as acted on).
	rounds := func(s agentsystemd.TargetState, n int) {
		t.Helper()
		for i := range n {
			plan, _, err := mem.Reconcile(desired(s), sys)
			if err != nil && (i > 0 || !strings.Contains(err.Error(), "start noexec.service")) {
				t.Fatalf("round %d (target %s): plan %v: %v", i, s, plan, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	type view struct{ Current, Load, Active string }
	report := func() map[string]view {
		t.Helper()
		cur, err := d.Units()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]view{}
		for _, s := range mem.ReportStates(cur, "m1") {
			out[s.Name] = view{string(s.State()), s.LoadState, s.ActiveState}
		}
		return out
	}
	countRuns := func() int {
		b, err := os.ReadFile(runs)
		if os.IsNotExist(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "run\n")
	}

	rounds(agentsystemd.TargetLaunched, 12)
	want := map[string]view{"noexec.service": {"launched", "bad-setting", "inactive"}, "false.service": {"launched", "loaded", "failed"}}
	if diff := cmp.Diff(want, report()); diff != "" {
		t.Errorf("after start (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"false.service": 1, "noexec.service": 1}, sys.starts); diff != "" {
		t.Errorf("start tasks over 12 rounds (-want +got):\n%s", diff)
	}
	if n := countRuns(); n != 1 {
		t.Errorf("systemd ran false.service %d times over 12 rounds, want 1", n)
	}

	rounds(agentsystemd.TargetLoaded, 3)
	want = map[string]view{"noexec.service": {"loaded", "bad-setting", "inactive"}, "false.service": {"loaded", "loaded", "failed"}}
	if diff := cmp.Diff(want, report()); diff != "" {
		t.Errorf("after stop (-want +got):\n%s", diff)
	}

	rounds(agentsystemd.TargetLaunched, 6)
	if n := countRuns(); n != 2 {
		t.Errorf("systemd ran false.service %d times after a second start, want 2", n)
	}
	if got := sys.starts["false.service"]; got != 2 {
		t.Errorf("%d start tasks for false.service after a second start, want 2", got)
	}
	if got := report()["noexec.service"].Current; got != "launched" {
		t.Errorf("noexec.service after a second start: %s, want launched", got)
	}
}
