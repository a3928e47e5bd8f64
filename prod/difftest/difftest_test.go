package difftest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
)

// libraryScenarios are the KubeFleet library scenarios (scenarios/*.yaml but fleet-*.yaml,
// which prod/difftest/units plays with machines), discovered from the directory: a new
// library scenario joins the comparison without a change here.
func libraryScenarios(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(scenariosDir(), "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		if f := filepath.Base(p); !strings.HasPrefix(f, "fleet-") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no library scenario in %s", scenariosDir())
	}
	return out
}

// notCompared are the library scenarios the comparison cannot play, each with why; each
// names the scenarios that cover the same features on the test's servers. Nothing is left
// out for timing: the fleet's clock is a mock the test advances.
var notCompared = map[string]string{
	"region-outage.yaml": "200 clusters: one test API server with 200 agents (stand-ins or real member API servers) " +
		"is more than this machine plays within make test's budget; region-partition.yaml asks the same question on " +
		"12 clusters (a partition of a region by label selector during a maxUnavailable rollout, a group step) and is compared",
	"quickstart.yaml": "its members report properties and resources (a property-sorted placement), which neither " +
		"the stand-in agents nor agents on envtest (no nodes) report; its placements are covered without properties " +
		"by placement-types.yaml and affinity.yaml",
	"property-scheduling.yaml": "property sorters and property selectors need member properties and resources, " +
		"which neither the stand-in agents nor agents on envtest (no nodes) report; affinity.yaml and " +
		"topology-spread.yaml cover label-based scheduling",
	"tut-migrate-overrides.yaml": "its placement moves by a node-count property selector, a property which " +
		"neither the stand-in agents nor agents on envtest (no nodes) report; tut-migrate-affinity.yaml plays the same " +
		"migration by label and overrides.yaml the ResourceOverride",
}

// openDifferences are library scenarios on which the simulator and the hub are known to
// disagree today, each with the difference; they are not played by default so that
// `make test` guards the scenarios that agree, and each stays listed under "Open
// differences" in reports/difftest.md until it is closed (FLEETSIM_DIFFTEST_OPEN=1 plays
// them). None today: the last one (tsg-staged-run) was a race inside the scenario, which
// now states the order (docs/compatibility.md › Simulator vs production).
var openDifferences = map[string]string{}

// standInsCannot are the library scenarios the stand-in agents cannot play, with why:
// TestSimulatorAndRealAgentsAgree plays them with real agents.
func standInsCannot(p *Plan) string {
	if p.MemberEdits {
		return "it edits objects on member clusters (drift, takeover), which stand-in agents do not have"
	}
	return ""
}

// minCompareGap is how long the next phase must come after a phase for the state between
// them to be compared: the simulator's own delays (a trackable workload is available 30 s
// after it is applied) are settled by then.
const minCompareGap = time.Minute

// stablePhase and stableEnd are how long the hub's state must stay equal to the simulator's
// before the next phase is applied, and at the end: several decisions' time (a decision
// takes up to a second on a loaded machine), so that a change the hub has not processed yet
// cannot pass for the settled state.
const (
	stablePhase = time.Second
	stableEnd   = 5 * time.Second
)

// TestSimulatorAndHubAgree runs every library scenario in the simulator, then on a real API
// server with the production hub and stand-in agents, phase by phase on a mock clock, and
// requires the hub to reach the simulator's state (bindings, placement statuses, member
// conditions, Works, staged runs, approvals, evictions) after every phase.
// FLEETSIM_DIFFTEST_ONLY=a.yaml,b.yaml narrows it to some scenarios.
func TestSimulatorAndHubAgree(t *testing.T) {
	// Parallel with TestSimulatorAndRealAgentsAgree: both tests' scenarios share -parallel's
	// slots, so neither test's last long scenario leaves slots idle while the other waits.
	t.Parallel()
	for _, file := range selected(t, libraryScenarios(t)) {
		t.Run(strings.TrimSuffix(file, ".yaml"), func(t *testing.T) {
			if why, ok := notCompared[file]; ok {
				t.Logf("not compared: %s", why)
				return
			}
			if why, ok := openDifferences[file]; ok && os.Getenv("FLEETSIM_DIFFTEST_OPEN") == "" {
				t.Logf("NOT PROVEN: an open difference (reports/difftest.md; FLEETSIM_DIFFTEST_OPEN=1 plays it): %s", why)
				return
			}
			if slices.Contains(withRealAgents, file) && os.Getenv("FLEETSIM_DIFFTEST_REAL_ALL") == "" && os.Getenv("FLEETSIM_DIFFTEST_ONLY") == "" {
				// The whole package runs (make test): the real agents play it.
				t.Logf("played with real agents in this run (TestSimulatorAndRealAgentsAgree)")
				return
			}
			plan := loadPlan(t, file)
			if why := standInsCannot(plan); why != "" {
				t.Logf("played with real agents only (TestSimulatorAndRealAgentsAgree): %s", why)
				return
			}
			// Each scenario has its own API server and hub; several at a time (-parallel:
			// GOMAXPROCS by default, 3 in make test) keep the test within minutes.
			t.Parallel()
			runScenario(t, plan, false)
		})
	}
}

// selected narrows files to FLEETSIM_DIFFTEST_ONLY's list when it is set.
func selected(t *testing.T, files []string) []string {
	only := os.Getenv("FLEETSIM_DIFFTEST_ONLY")
	if only == "" {
		return files
	}
	var out []string
	for _, f := range strings.Split(only, ",") {
		if !slices.Contains(files, f) {
			t.Fatalf("FLEETSIM_DIFFTEST_ONLY names %s, which is not among %v", f, files)
		}
		out = append(out, f)
	}
	return out
}

// withRealAgents are the library scenarios played with real member agents in `make test`;
// the stand-in comparison leaves them out when the whole package runs (the real agents'
// comparison is the stricter one). `make difftest-real` (FLEETSIM_DIFFTEST_REAL_ALL=1) plays
// every library scenario with real agents (reports/difftest.md). One scenario of each of the
// other families (topology-spread-repick, taints-tolerations, override-placement-scope,
// rollout-example-2, envelopes) was played here too on 2026-11-29: the package took 2,711 s
// instead of 1,950 s in .ci/run and the other real-server packages beside it slowed by half
// again (prod/hub 1,839 s against 721 s), over the 45-minute budget on two cores, so they
// are played by `make difftest-real` only until a real-agent fleet is cheaper.
var withRealAgents = []string{
	"placement-types.yaml", // placement types; members joining, leaving and replaced
	"staged-update.yaml",   // staged runs
	"eviction.yaml",        // eviction and disruption budgets
	"apply-drift.yaml",     // apply strategies
}

// TestSimulatorAndRealAgentsAgree is TestSimulatorAndHubAgree with real member agents
// (agentk8s/member, as `fleet member` runs them) instead of stand-ins: what they apply on
// their API servers and report must lead the hub to the simulator's state.
func TestSimulatorAndRealAgentsAgree(t *testing.T) {
	t.Parallel() // with TestSimulatorAndHubAgree
	files := withRealAgents
	if os.Getenv("FLEETSIM_DIFFTEST_REAL_ALL") != "" {
		files = libraryScenarios(t)
	}
	for _, file := range selected(t, files) {
		t.Run(strings.TrimSuffix(file, ".yaml"), func(t *testing.T) {
			if why, ok := notCompared[file]; ok {
				t.Logf("not compared: %s", why)
				return
			}
			t.Parallel() // at most -parallel (GOMAXPROCS) fleets at a time
			runScenario(t, loadPlan(t, file), true)
		})
	}
}

// runScenario runs a scenario in the simulator, then on a real hub phase by phase, and
// requires the hub to reach the simulator's state after every phase.
func runScenario(t *testing.T, plan *Plan, real bool) {
	want, err := Simulate(plan)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f := startFleet(t, real, plan.Scenario.Propagation)
	t.Logf("API server and hub started in %s", time.Since(start).Round(time.Millisecond))
	for i, ph := range plan.Phases {
		phaseStart := time.Now()
		f.advanceTo(SimStart.Add(ph.At))
		f.doPhase(ph)
		// What the phase wakes happens at its instant (the agents see new Works at the
		// phase's time, as the simulated members do) before the clock moves on.
		f.quiet()
		// The simulator's state is taken just before the next phase; the hub's at the
		// second before it (the API stores times in seconds), the clock having passed
		// every timer due by then.
		compareAt := plan.Scenario.Duration
		if i+1 < len(plan.Phases) {
			compareAt = plan.Phases[i+1].At - time.Second
		}
		if compareAt > ph.At {
			f.advanceTo(SimStart.Add(compareAt))
		}
		if i+1 < len(plan.Phases) && plan.Phases[i+1].At-ph.At < minCompareGap {
			// The simulator is still mid-way (its agents and hub take time to apply and
			// report): the next phase follows first, and the state after it is compared.
			t.Logf("the phase at %s is followed %s later by the next: compared after that one", ph.At, plan.Phases[i+1].At-ph.At)
			continue
		}
		var done []string
		for _, a := range ph.Actions {
			done = append(done, a.String())
		}
		stable, what := stablePhase, fmt.Sprintf("phase at %s (%s); the simulator's state just before %s", ph.At, strings.Join(done, "; "), nextAt(plan, i))
		if i == len(plan.Phases)-1 {
			stable = stableEnd
		}
		f.settle(what, want[i], stable)
		if real {
			f.checkMembersHoldTheirPlacements()
		}
		t.Logf("agreed after the phase at %s, in %s:\n%s", ph.At, time.Since(phaseStart).Round(time.Millisecond), indent(want[i].Summary()))
	}
}

func nextAt(p *Plan, i int) string {
	if i+1 < len(p.Phases) {
		return p.Phases[i+1].At.String()
	}
	return "the end (" + p.Scenario.Duration.String() + ")"
}

func loadPlan(t *testing.T, file string) *Plan {
	t.Helper()
	sc, err := scenarios.Load(filepath.Join(scenariosDir(), file))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func scenariosDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "scenarios")
}

// TestSimulateIsTheRunner checks the simulator side of the translation: Simulate's final
// state of each scenario above is what scenarios/runner reports for the file
// (placements' clusters, conditions and per-cluster conditions; members' conditions), and
// the file's own expectations pass.
func TestSimulateIsTheRunner(t *testing.T) {
	for _, file := range libraryScenarios(t) {
		t.Run(strings.TrimSuffix(file, ".yaml"), func(t *testing.T) {
			sc, err := scenarios.Load(filepath.Join(scenariosDir(), file))
			if err != nil {
				t.Fatal(err)
			}
			plan, err := NewPlan(sc)
			if _, ok := notCompared[file]; ok && err != nil {
				return // NewPlan refuses it (TestNewPlanRefuses)
			}
			if err != nil {
				t.Fatal(err)
			}
			states, err := Simulate(plan)
			if err != nil {
				t.Fatal(err)
			}
			final := states[len(states)-1]
			rep, err := runner.Run(plan.Scenario, runner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Passed {
				t.Errorf("the scenario's expectations fail in the runner: %+v", rep.Expectations)
			}
			type placementView struct {
				Clusters   []string
				Conditions Conditions
				PerCluster []ClusterStatus
			}
			fromRunner, fromSimulate := map[string]placementView{}, map[string]placementView{}
			for _, p := range rep.Placements {
				v := placementView{Clusters: p.Clusters, Conditions: Conditions{}}
				for _, c := range p.Conditions {
					v.Conditions[c.Type] = condition(c.Status, c.Reason)
				}
				for _, cs := range p.PlacementStatuses {
					x := ClusterStatus{Cluster: cs.ClusterName, Conditions: Conditions{}, FailedPlacements: len(cs.FailedPlacements)}
					for _, c := range cs.Conditions {
						x.Conditions[c.Type] = condition(c.Status, c.Reason)
					}
					v.PerCluster = append(v.PerCluster, x)
				}
				fromRunner[p.Name] = v
			}
			for name, p := range final.Placements {
				v := placementView{Conditions: p.Conditions}
				for _, b := range final.Bindings {
					if b.Placement == name && !b.Deleting && (b.State == "Scheduled" || b.State == "Bound") {
						v.Clusters = append(v.Clusters, b.Cluster)
					}
				}
				for _, cs := range p.Clusters {
					cs.Overrides = nil
					v.PerCluster = append(v.PerCluster, cs)
				}
				fromSimulate[name] = v
			}
			sortClusters := cmpopts.SortSlices(func(a, b ClusterStatus) bool {
				return a.Cluster+fmt.Sprint(a.Conditions) < b.Cluster+fmt.Sprint(b.Conditions)
			})
			if d := cmp.Diff(fromRunner, fromSimulate, cmpopts.EquateEmpty(), sortClusters); d != "" {
				t.Errorf("placements (-runner +Simulate):\n%s", d)
			}
			members := map[string]Conditions{}
			for _, m := range rep.Members {
				cs := Conditions{}
				for _, c := range m.Conditions {
					cs[c.Type] = condition(c.Status, c.Reason)
				}
				members[m.Name] = cs
			}
			if d := cmp.Diff(members, final.Members, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("members (-runner +Simulate):\n%s", d)
			}
		})
	}
}

// TestNewPlanRefuses: scenarios using what stand-in agents and a real hub cannot reproduce
// are refused, not compared half-way.
func TestNewPlanRefuses(t *testing.T) {
	for file, want := range map[string]string{
		"quickstart.yaml":          "member properties are not supported",
		"property-scheduling.yaml": "not supported",
		"fleet-global.yaml":        "machines are not supported",
	} {
		sc, err := scenarios.Load(filepath.Join(scenariosDir(), file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewPlan(sc); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewPlan(%s) = %v, want an error saying %q", file, err, want)
		}
	}
	sc, err := scenarios.Parse("skew.yaml", []byte(`name: skew
duration: 10m
members:
  - name: east
timeline:
  - at: 1m
    skew: {member: east, offset: 2m}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPlan(sc); err == nil || !strings.Contains(err.Error(), "timeline action skew is not supported") {
		t.Errorf("NewPlan(skew) = %v, want skew refused", err)
	}
}

// TestGroupStepsPickTheSimulatorsMembers: a partition by label selector and a label step by
// name pattern are played on the members the simulator picked when the step ran, and the
// partition's end, `for` later, heals the same members.
func TestGroupStepsPickTheSimulatorsMembers(t *testing.T) {
	plan := loadPlan(t, "region-partition.yaml")
	if _, err := Simulate(plan); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, ph := range plan.Phases {
		for _, a := range ph.Actions {
			if a.Picked != nil {
				got[ph.At.String()+" "+strings.SplitN(a.String(), ": ", 2)[1]] = a.Members()
			}
		}
	}
	eu, us := []string{"eu-1", "eu-2", "eu-3", "eu-4"}, []string{"us-1", "us-2", "us-3", "us-4"}
	want := map[string][]string{
		"10m0s partition selector region=eu for 10m0s":          eu,
		"20m0s the partition of [eu-1 eu-2 eu-3 eu-4] ends":     eu,
		"12m0s label members us-* set map[tier:edge] remove []": us,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("members picked per group step (-want +got):\n%s", d)
	}
	var healed []string
	for _, ph := range plan.Phases {
		for _, a := range ph.Actions {
			if a.PartitionEnd {
				for _, m := range a.Members() {
					healed = append(healed, a.On(m).Heal.Member)
				}
			}
		}
	}
	if d := cmp.Diff(eu, healed); d != "" {
		t.Errorf("the partition's end heals (-want +got):\n%s", d)
	}
}
