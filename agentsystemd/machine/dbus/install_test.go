package dbus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/agentsystemd"
	sdbus "github.com/fleetsim/fleetsim/agentsystemd/machine/dbus"
	"github.com/fleetsim/fleetsim/agentsystemd/machine/dbus/sdtest"
)

// TestInstallSectionOnRealSystemd: the agent enables a unit whose file has an [Install]
// section when it loads it (runtime), so a real systemd starts it together with the unit its
// WantedBy= names, though fleet wants it only loaded; the agent, having acted on loaded,
// leaves it running and reports it loaded. Unloading disables it. The simulator's SimSystemd
// does the same (agentsystemd TestInstallSectionsInSimSystemd).
func TestInstallSectionOnRealSystemd(t *testing.T) {
	sb := sdtest.Start(t)
	d, err := sdbus.Dial(context.Background(), sb.BusAddress, sb.UnitDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	main := mustParse(t, "[Service]\nExecStart=/bin/sleep 3600\n")
	discovery := mustParse(t, "[Service]\nExecStart=/bin/sleep 3601\n\n[Install]\nWantedBy=my.service\n")
	plain := mustParse(t, "[Service]\nExecStart=/bin/sleep 3602\n")
	desired := func(my agentsystemd.TargetState) []agentsystemd.DesiredUnit {
		return []agentsystemd.DesiredUnit{{Name: "my.service", File: main, State: my},
			{Name: "my_discovery.service", File: discovery, State: agentsystemd.TargetLoaded},
			{Name: "plain.service", File: plain, State: agentsystemd.TargetLoaded}}
	}
	var mem agentsystemd.Memory
	rounds := func(ds []agentsystemd.DesiredUnit, n int) {
		t.Helper()
		for i := range n {
			if plan, _, err := mem.Reconcile(ds, d); err != nil {
				t.Fatalf("round %d: plan %v: %v", i, plan, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	show := func(name string) string {
		out, _ := sb.Systemctl("is-enabled", name)
		return strings.TrimSpace(out)
	}
	rounds(desired(agentsystemd.TargetLoaded), 2)
	if got := show("my_discovery.service"); got != "enabled-runtime" {
		t.Errorf("my_discovery.service after load: is-enabled %q, want enabled-runtime", got)
	}
	if got := states(t, d)["my_discovery.service"]; got.Active != "inactive" {
		t.Errorf("my_discovery.service started before my.service: %+v", got)
	}
	rounds(desired(agentsystemd.TargetLaunched), 4)
	want := map[string]state{"my.service": {"loaded", "active", "running"}, "my_discovery.service": {"loaded", "active", "running"},
		"plain.service": {"loaded", "inactive", "dead"}}
	if diff := cmp.Diff(want, states(t, d)); diff != "" {
		t.Errorf("systemd after starting my.service (-want +got):\n%s", diff)
	}
	cur, err := d.Units()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range mem.ReportStates(cur, "m1") {
		got[s.Name] = string(s.State())
	}
	if diff := cmp.Diff(map[string]string{"my.service": "launched", "my_discovery.service": "loaded", "plain.service": "loaded"}, got); diff != "" {
		t.Errorf("fleet's current states (-want +got):\n%s", diff)
	}
	rounds(nil, 2)
	if got := states(t, d); len(got) != 0 {
		t.Errorf("after unload the driver still reports %v", got)
	}
	if got := show("my_discovery.service"); got == "enabled-runtime" {
		t.Errorf("my_discovery.service still enabled after unload")
	}
}
