package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios"
)

// TestFleetctlRuntimeErrorNamesField: a fleetctl step that fails only at run time (another
// file under a name in use) names the step's line and its field.
func TestFleetctlRuntimeErrorNamesField(t *testing.T) {
	const src = `name: twice
duration: 10m
members:
  - name: m1
    kind: Machine
timeline:
  - at: 1m
    fleetctl: {command: submit, unit: a.service, file: "[Service]\nExecStart=/bin/true\n"}
  - at: 2m
    fleetctl: {command: submit, unit: a.service, file: "[Service]\nExecStart=/bin/false\n"}
expect:
  - unit: {name: a.service, state: inactive}
`
	sc, err := scenarios.Parse("twice.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(sc, Options{})
	if err == nil {
		t.Fatal("Run succeeded, want the second submit refused")
	}
	if want := "twice.yaml:9: timeline[1].fleetctl: the step at 2m0s failed: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Run error = %q, want it to start with %q", err, want)
	}
}

// TestFleetctlRunRejectsWhatValidateRejects: the unit names and files Parse refuses are
// refused by the run too (a scenario built without Parse), so validation is not stricter
// than the run.
func TestFleetctlRunRejectsWhatValidateRejects(t *testing.T) {
	for _, st := range []scenarios.FleetctlStep{
		{Command: "start", Unit: "a/b.service", File: "[Service]\nExecStart=/bin/true\n"},
		{Command: "start", Unit: "web", File: "[Service]\nExecStart=/bin/true\n"},
		{Command: "start", Unit: strings.Repeat("a", 300) + ".service", File: "[Service]\n"},
		{Command: "start", Unit: "web@.service", File: "[Service]\nExecStart=/bin/true\n"},
		{Command: "submit", Unit: "a.service", File: "[Service] junk\n"},
		{Command: "submit", Unit: "a.service", File: "[Service\nExecStart=/bin/true\n"},
		{Command: "submit", Unit: "a.service", File: "[Service]\nExecStart /bin/true\n\n"},
		{Command: "submit", Unit: "a.service", File: "[Service]\nExecStart=" + strings.Repeat("x", 3000) + "\n"},
		{Command: "start", Unit: "a.service", File: "[X-Fleet]\nGlobal=true\nMachineOf=b.service\n"},
		{Command: "start", Unit: "a.service", File: "[X-Fleet]\nConflicts=a[.service\n"},
	} {
		sc := &scenarios.Scenario{Path: "t.yaml", Name: "t", Seed: 1, Duration: 5 * time.Minute,
			Members:  []scenarios.MemberGroup{{Line: 3, Names: []string{"m1"}, Kind: member.KindMachine, HeartbeatPeriod: 15 * time.Second}},
			Timeline: []scenarios.Step{{Line: 7, Field: "timeline[0]", At: time.Minute, Action: scenarios.ActionFleetctl, Fleetctl: &st}},
		}
		if _, err := Run(sc, Options{}); err == nil {
			t.Errorf("Run with fleetctl %s %q accepted the step; validation refuses it", st.Command, st.Unit)
		}
	}
}
