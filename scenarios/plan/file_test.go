package plan

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
)

const goodPlan = `name: p
question: q?
repetitions: 2
x: members
hub: {qps: 50, apiLatency: 1ms}
parameters:
  period: 30s
sweep:
  members: [2, 4]
  hub.burst: [100, 200]
scenario: |
  name: s
  duration: 5m
  members:
    - name: m-{1..{{.members}}}
      heartbeatPeriod: {{.period}}
`

func TestParseGood(t *testing.T) {
	pl, err := Parse("p.yaml", []byte(goodPlan))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(pl.Points()); got != 4 {
		t.Fatalf("points = %d, want 4", got)
	}
	var labels []string
	for _, pt := range pl.Points() {
		labels = append(labels, pl.Label(pt))
	}
	want := []string{"members=2, hub.burst=100", "members=2, hub.burst=200", "members=4, hub.burst=100", "members=4, hub.burst=200"}
	if d := cmp.Diff(want, labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	sc, err := pl.Scenario(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Members) != 1 || len(sc.Members[0].Names) != 4 || sc.Members[0].HeartbeatPeriod.String() != "30s" {
		t.Errorf("members = %+v", sc.Members)
	}
	got := *sc.Hub
	want2 := scenarios.Hub{Line: 5, Workers: 8, QPS: 50, Burst: 200, CallsPerDecision: 10, DecisionTime: 10_000_000}
	if d := cmp.Diff(want2, got); d != "" {
		t.Errorf("hub (-want +got):\n%s", d)
	}
	if pl.RunCount() != 8 {
		t.Errorf("runs = %d", pl.RunCount())
	}
}

func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, text string
		want       scenarios.Error
	}{
		{"unknown key", "name: p\nscenaro: x\n", scenarios.Error{Line: 2, Field: "scenaro"}},
		{"no name", "question: q\n", scenarios.Error{Line: 1, Field: "name"}},
		{"bad repetitions", "name: p\nrepetitions: 0\nscenario: x\n", scenarios.Error{Line: 2, Field: "repetitions"}},
		{"empty sweep", "name: p\nsweep:\n  members: []\nscenario: x\n", scenarios.Error{Line: 3, Field: "sweep.members"}},
		{"bad hub sweep", "name: p\nsweep:\n  hub.qps: [0]\nscenario: x\n", scenarios.Error{Line: 3, Field: "sweep.hub.qps[0]"}},
		{"unknown hub key", "name: p\nsweep:\n  hub.foo: [1]\nscenario: x\n", scenarios.Error{Line: 3, Field: "sweep.hub.foo"}},
		{"x not swept", "name: p\nx: y\nsweep:\n  a: [1]\nscenario: x\n", scenarios.Error{Line: 2, Field: "x"}},
		{"x not numeric", "name: p\nsweep:\n  a: [big]\nscenario: x\n", scenarios.Error{Line: 3, Field: "sweep.a"}},
		{"bad hub latency", "name: p\nhub:\n  apiLatency: fast\nscenario: x\n", scenarios.Error{Line: 3, Field: "hub.apiLatency"}},
		{"template syntax", "name: p\nscenario: |\n  name: s\n  duration: {{.d\n", scenarios.Error{Line: 4, Field: "scenario"}},
		{"template missing parameter", "name: p\nscenario: |\n  name: s\n  duration: 1m\n  seed: {{.nope}}\n", scenarios.Error{Line: 5, Field: "scenario"}},
		{"invalid scenario", "name: p\nsweep:\n  d: [0s]\nscenario: |\n  name: s\n  duration: {{.d}}\n", scenarios.Error{Line: 5, Field: "scenario"}},
		{"missing scenario file", "name: p\nscenarioFile: nope.yaml\n", scenarios.Error{Line: 2, Field: "scenarioFile"}},
		{"yaml syntax", "name: p\n  bad: [\n", scenarios.Error{Line: 2}},
		{"phase backwards", "name: p\nphases:\n  a: {from: 5m, to: 1m}\nscenario: x\n", scenarios.Error{Line: 3, Field: "phases.a"}},
		{"phase bad time", "name: p\nphases:\n  a:\n    from: soon\n    to: 1m\nscenario: x\n", scenarios.Error{Line: 4, Field: "phases.a.from"}},
		{"small unknown parameter", "name: p\nsweep:\n  a: [1]\nsmall:\n  sweep: {b: [1]}\nscenario: x\n", scenarios.Error{Line: 5, Field: "small.sweep.b"}},
		{"small bad repetitions", "name: p\nsmall:\n  repetitions: -1\nscenario: x\n", scenarios.Error{Line: 3, Field: "small.repetitions"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "plan.yaml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			var se *scenarios.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *scenarios.Error", err)
			}
			if se.Path != path || se.Line != tc.want.Line || se.Field != tc.want.Field {
				t.Errorf("got %s:%d field %q (%s), want line %d field %q", se.Path, se.Line, se.Field, se.Reason, tc.want.Line, tc.want.Field)
			}
		})
	}
}

func TestSmall(t *testing.T) {
	text := goodPlan + "small:\n  sweep: {members: [1], period: [5s]}\n  repetitions: 1\n"
	full, err := Parse("p.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	small, err := ParseWith("p.yaml", []byte(text), ParseOptions{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	if full.RunCount() != 8 || small.RunCount() != 2 {
		t.Errorf("runs: full %d, small %d; want 8 and 2", full.RunCount(), small.RunCount())
	}
	sc, err := small.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sc.Members[0].Names); n != 1 || sc.Members[0].HeartbeatPeriod.String() != "5s" {
		t.Errorf("small scenario: %d members beating every %s", n, sc.Members[0].HeartbeatPeriod)
	}
}
