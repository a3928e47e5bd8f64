package units

import (
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
)

// libraryFiles are the library's scenarios of fleet units: every scenarios/fleet-*.yaml.
func libraryFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(scenariosDir(), "fleet-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scenarios/fleet-*.yaml in %s", scenariosDir())
	}
	return files
}

func scenariosDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scenarios")
}

func loadPlan(t *testing.T, path string) *Plan {
	t.Helper()
	sc, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func scenarioName(path string) string { return strings.TrimSuffix(filepath.Base(path), ".yaml") }

// TestSimulatorAndMachinesAgree plays every fleet-*.yaml scenario in the simulator and in
// production (the unit engine on a real API server, a real `fleet agent` on a real systemd
// per machine, one mock clock), and requires, at the end of every phase, the same units with
// the same desired state, target machine and machines whose systemd runs them.
func TestSimulatorAndMachinesAgree(t *testing.T) {
	// Each scenario has its own API server, sandboxes and clock, and spends most of its time
	// waiting for production to go quiet; scenariosAtOnce of them run together, whatever
	// -parallel says, to keep the test within a few minutes.
	slots := make(chan struct{}, scenariosAtOnce)
	var wg sync.WaitGroup
	for _, path := range libraryFiles(t) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			t.Run(scenarioName(path), func(t *testing.T) { runScenario(t, path) })
		}()
	}
	wg.Wait()
}

// scenariosAtOnce is how many scenarios TestSimulatorAndMachinesAgree plays at a time.
const scenariosAtOnce = 4

func runScenario(t *testing.T, path string) {
	plan := loadPlan(t, path)
	want, err := Simulate(plan)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	f := startProduction(t, plan)
	t.Logf("API server, engine and %d systemd sandboxes started in %s", len(plan.Machines), time.Since(began).Round(time.Millisecond))
	for i, ph := range plan.Phases {
		f.advance(ph.At)
		f.doPhase(ph)
		f.settle("after the phase at " + ph.At.String())
		end := PhaseEnd(plan, i)
		f.advance(end)
		f.settleFor("before comparing at "+end.String(), quietBeforeCompare)
		got := f.read()
		if d := cmp.Diff(want[i], got); d != "" {
			t.Errorf("phase at %s (%s), state at %s differs (-simulator +production):\n%s\nsimulator:\n%s\nproduction:\n%s",
				ph.At, ph.Describe(), end, d, indent(want[i].Summary()), indent(got.Summary()))
			continue
		}
		t.Logf("agree at %s after the phase at %s (%s):\n%s", end, ph.At, ph.Describe(), indent(got.Summary()))
	}
	t.Logf("%s: %d phases, %d clock steps, %s of scenario time in %s of wall time (loaded machine)",
		scenarioName(path), len(plan.Phases), f.steps, plan.Scenario.Duration, time.Since(began).Round(time.Second))
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// TestSimulateIsTheRunner: Simulate's final state of each scenario is what scenarios/runner
// reports for the file (the same simulator calls in the same order), and the file's own
// expectations pass, so the comparison is against what `fleetsim run` shows.
func TestSimulateIsTheRunner(t *testing.T) {
	for _, path := range libraryFiles(t) {
		t.Run(scenarioName(path), func(t *testing.T) {
			plan := loadPlan(t, path)
			states, err := Simulate(plan)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := runner.Run(plan.Scenario, runner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Passed {
				t.Errorf("the scenario's expectations fail in the runner: %+v", rep.Expectations)
			}
			fromRunner := State{Units: map[string]Unit{}}
			for _, u := range rep.Units {
				fromRunner.Units[u.Name] = Unit{Desired: u.DesiredState, Machine: u.Machine, Running: u.Running}
			}
			fromRunner.normalize()
			if d := cmp.Diff(fromRunner, states[len(states)-1]); d != "" {
				t.Errorf("final units (-runner +Simulate):\n%s", d)
			}
		})
	}
}

// TestNewPlan: machines join at their joinAt with their metadata (first value of each key);
// timeline steps keep file order within an instant, after the joins of that instant.
func TestNewPlan(t *testing.T) {
	sc, err := scenarios.Parse("t.yaml", []byte(`name: t
duration: 5m
members:
  - name: m{1..2}
    kind: Machine
    labels: {team: a}
    metadata: {region: east, disk: ssd}
  - name: late
    kind: Machine
    joinAt: 1m
timeline:
  - at: 1m
    fleetctl: {command: start, unit: a.service, file: "[Service]\nExecStart=/bin/true\n"}
  - at: 1m
    fail: {member: m1, mode: partition}
  - at: 2m
    heal: {member: m1}
  - at: 3m
    label: {member: m2, set: {disk: hdd}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(sc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ph := range p.Phases {
		got = append(got, ph.At.String()+": "+ph.Describe())
	}
	want := []string{
		"0s: machine m1 joins; machine m2 joins",
		"1m0s: machine late joins; line 12: fleetctl start a.service; line 14: partition m1",
		"2m0s: line 16: heal m1",
		"3m0s: line 18: metadata of m2 set map[disk:hdd] remove []",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("phases (-want +got):\n%s", d)
	}
	m, _ := p.Machine("m2")
	if d := cmp.Diff(map[string]string{"team": "a", "region": "east", "disk": "ssd"}, m.Metadata); d != "" {
		t.Errorf("m2's metadata (-want +got):\n%s", d)
	}
}

// TestNewPlanRefuses: what production is not told to do here is refused with the file, the
// line and the reason, not compared half-way.
func TestNewPlanRefuses(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"cluster", "name: t\nduration: 5m\nmembers:\n  - name: c1\n", "t.yaml:4: members of kind Cluster are not supported"},
		{"restartHub", "name: t\nduration: 5m\nmembers:\n  - name: m1\n    kind: Machine\ntimeline:\n  - at: 1m\n    restartHub: {}\n",
			"t.yaml:7: timeline action restartHub is not supported"},
		{"faults", "name: t\nduration: 5m\nmembers:\n  - name: m1\n    kind: Machine\nfaults:\n  meanTimeBetweenFailures: 1m\n  meanDuration: 10s\n",
			"t.yaml:6: random faults are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenarios.Parse("t.yaml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := NewPlan(sc); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewPlan = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
