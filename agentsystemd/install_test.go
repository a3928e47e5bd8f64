package agentsystemd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// TestInstallSectionsInSimSystemd: a unit whose [Install] names another is enabled when the
// agent loads it, and systemd starts it with that unit (transitively), whatever its desired
// state in fleet; the agent, having acted on loaded for it, leaves it running and reports it
// loaded, as upstream fleet does ([Unit Files › Definition of the Install Section]). Without
// an [Install] section, or before systemd read the file, nothing is pulled in.
func TestInstallSectionsInSimSystemd(t *testing.T) {
	parse := func(text string) *unitfile.File {
		f, err := unitfile.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	main := parse("[Service]\nExecStart=/bin/sleep 1\n")
	discovery := parse("[Service]\nExecStart=/bin/sleep 2\n\n[Install]\nWantedBy=my.service\n")
	chained := parse("[Service]\nExecStart=/bin/sleep 3\n\n[Install]\nRequiredBy=my_discovery.service\n")
	plain := parse("[Service]\nExecStart=/bin/sleep 4\n")
	other := parse("[Service]\nExecStart=/bin/sleep 5\n\n[Install]\nWantedBy=multi-user.target\n")
	d := func(name string, f *unitfile.File, s TargetState) DesiredUnit {
		return DesiredUnit{Name: name, File: f, State: s}
	}
	loadedAll := []DesiredUnit{d("my.service", main, TargetLoaded), d("my_discovery.service", discovery, TargetLoaded),
		d("chained.service", chained, TargetLoaded), d("plain.service", plain, TargetLoaded), d("other.service", other, TargetLoaded)}

	sys := NewSimSystemd()
	var m Memory
	if _, _, err := m.Reconcile(loadedAll, sys); err != nil {
		t.Fatal(err)
	}
	started := func() []string {
		var out []string
		for _, c := range sys.CurrentUnits() {
			if c.Started() {
				out = append(out, c.Name)
			}
		}
		return out
	}
	if got := started(); len(got) != 0 {
		t.Fatalf("started with everything loaded: %v", got)
	}
	launchMy := append([]DesiredUnit{d("my.service", main, TargetLaunched)}, loadedAll[1:]...)
	for range 3 {
		if _, _, err := m.Reconcile(launchMy, sys); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"chained.service", "my.service", "my_discovery.service"}, started()); diff != "" {
		t.Errorf("started after starting my.service (-want +got):\n%s", diff)
	}
	got := map[string]CurrentState{}
	for _, s := range m.ReportStates(sys.CurrentUnits(), "m1") {
		got[s.Name] = s.State()
	}
	want := map[string]CurrentState{"my.service": CurrentLaunched, "my_discovery.service": CurrentLoaded, "chained.service": CurrentLoaded,
		"plain.service": CurrentLoaded, "other.service": CurrentLoaded}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("current states (-want +got):\n%s", diff)
	}

	// A fresh agent (no memory) stops what runs against its target once; systemd does not
	// pull it in again until my.service starts again.
	var fresh Memory
	plan, _, err := fresh.Reconcile(launchMy, sys)
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.String(); got != "[stop chained.service; stop my_discovery.service]" {
		t.Errorf("fresh agent's plan = %s", got)
	}
}
