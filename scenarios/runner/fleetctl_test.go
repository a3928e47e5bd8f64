package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios"
)

// TestFleetctlRuntimeErrorNamesField: a fleetctl step the run refuses (another file under a
// name in use, in a scenario built without Parse, which refuses it first) names the step's
// line and its field.
func TestFleetctlRuntimeErrorNamesField(t *testing.T) {
	sc := fleetctlScenario(
		scenarios.FleetctlStep{Command: "submit", Unit: "a.service", File: "[Service]\nExecStart=/bin/true\n"},
		scenarios.FleetctlStep{Command: "submit", Unit: "a.service", File: "[Service]\nExecStart=/bin/false\n"},
	)
	_, err := Run(sc, Options{})
	if err == nil {
		t.Fatal("Run succeeded, want the second submit refused")
	}
	if want := "t.yaml:9: timeline[1].fleetctl: the step at 2m0s failed: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Run error = %q, want it to start with %q", err, want)
	}
}

// fleetctlScenario is a scenario of one machine and the steps at 1m, 2m, ... (step i on
// line 7+2i), built without Parse.
func fleetctlScenario(steps ...scenarios.FleetctlStep) *scenarios.Scenario {
	sc := &scenarios.Scenario{Path: "t.yaml", Name: "t", Seed: 1, Duration: 30 * time.Minute,
		Members: []scenarios.MemberGroup{{Line: 3, Names: []string{"m1"}, Kind: member.KindMachine, HeartbeatPeriod: 15 * time.Second}}}
	for i := range steps {
		sc.Timeline = append(sc.Timeline, scenarios.Step{Line: 7 + 2*i, Field: fmt.Sprintf("timeline[%d]", i), At: time.Duration(i+1) * time.Minute,
			Action: scenarios.ActionFleetctl, Fleetctl: &steps[i]})
	}
	return sc
}

// fleetctlYAML is the scenario file of fleetctlScenario.
func fleetctlYAML(steps ...scenarios.FleetctlStep) string {
	var b strings.Builder
	b.WriteString("name: t\nduration: 30m\nmembers:\n  - name: m1\n    kind: Machine\ntimeline:\n")
	for i, st := range steps {
		fmt.Fprintf(&b, "  - at: %dm\n    fleetctl: {command: %s, unit: %q", i+1, st.Command, st.Unit)
		if st.File != "" {
			fmt.Fprintf(&b, ", file: %q", st.File)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// TestFleetctlValidateAgreesWithRun: for sequences of fleetctl steps, Parse (so `fleetsim
// validate`) refuses exactly those the run stops at: validation is neither weaker nor
// stricter than the run on what the steps before a step did.
func TestFleetctlValidateAgreesWithRun(t *testing.T) {
	const a, b = "[Service]\nExecStart=/bin/true\n", "[Service]\nExecStart=/bin/false\n"
	fc := func(command, unit, file string) scenarios.FleetctlStep {
		return scenarios.FleetctlStep{Command: scenarios.FleetctlCommand(command), Unit: unit, File: file}
	}
	for _, tc := range []struct {
		name    string
		refused bool
		steps   []scenarios.FleetctlStep
	}{
		{"stop never submitted", true, []scenarios.FleetctlStep{fc("stop", "a.service", "")}},
		{"destroy never submitted", true, []scenarios.FleetctlStep{fc("destroy", "a.service", "")}},
		{"unload never submitted", true, []scenarios.FleetctlStep{fc("unload", "a.service", "")}},
		{"start without a file", true, []scenarios.FleetctlStep{fc("start", "a.service", "")}},
		{"another file", true, []scenarios.FleetctlStep{fc("submit", "a.service", a), fc("load", "a.service", b)}},
		{"same file again", false, []scenarios.FleetctlStep{fc("submit", "a.service", a), fc("start", "a.service", a)}},
		{"stop inactive", true, []scenarios.FleetctlStep{fc("submit", "a.service", a), fc("stop", "a.service", "")}},
		{"stop loaded", false, []scenarios.FleetctlStep{fc("load", "a.service", a), fc("stop", "a.service", "")}},
		{"unload inactive (a no-op)", false, []scenarios.FleetctlStep{fc("submit", "a.service", a), fc("unload", "a.service", "")}},
		{"load launched", true, []scenarios.FleetctlStep{fc("start", "a.service", a), fc("load", "a.service", "")}},
		{"stop after destroy", true, []scenarios.FleetctlStep{fc("start", "a.service", a), fc("destroy", "a.service", ""), fc("stop", "a.service", "")}},
		{"resubmit after destroy", false, []scenarios.FleetctlStep{fc("start", "a.service", a), fc("destroy", "a.service", ""), fc("start", "a.service", b)}},
		{"every state", false, []scenarios.FleetctlStep{fc("submit", "a.service", a), fc("load", "a.service", ""), fc("start", "a.service", ""), fc("stop", "a.service", ""), fc("unload", "a.service", ""), fc("destroy", "a.service", "")}},
		{"instance of a submitted template", false, []scenarios.FleetctlStep{fc("submit", "web@.service", a), fc("start", "web@1.service", ""), fc("stop", "web@1.service", "")}},
		{"instance without a template", true, []scenarios.FleetctlStep{fc("start", "web@1.service", "")}},
		{"instance after its template is destroyed", true, []scenarios.FleetctlStep{fc("submit", "web@.service", a), fc("destroy", "web@.service", ""), fc("start", "web@1.service", "")}},
		{"instance kept when its template goes", false, []scenarios.FleetctlStep{fc("submit", "web@.service", a), fc("start", "web@1.service", ""), fc("destroy", "web@.service", ""), fc("stop", "web@1.service", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, runErr := Run(fleetctlScenario(tc.steps...), Options{})
			src := fleetctlYAML(tc.steps...)
			_, parseErr := scenarios.Parse("t.yaml", []byte(src))
			if (runErr == nil) != (parseErr == nil) {
				t.Errorf("run and validate disagree:\nrun: %v\nParse: %v\n%s", runErr, parseErr, src)
			}
			if refused := runErr != nil; refused != tc.refused {
				t.Errorf("run refused: %v (%v), want %v", refused, runErr, tc.refused)
			}
		})
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
