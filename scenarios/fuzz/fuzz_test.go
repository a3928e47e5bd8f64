package fuzz

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/rollout"
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
)

func load(t *testing.T, name string, until time.Duration) *Target {
	t.Helper()
	path := filepath.Join("..", "..", "scenarios", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := Prepare(path, data, until)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestPlantedBugFoundShrunkReplayed plants a rollout bug (maxUnavailable exceeded by one),
// checks that a campaign finds it, shrinks it, and that the written file replays it.
func TestPlantedBugFoundShrunkReplayed(t *testing.T) {
	tg := load(t, "rollout-example-2.yaml", 0)
	restore := rollout.PlantBugForTest(1)
	defer restore()
	opts := Options{Seed: 7, Runs: 20, Parallel: 2}
	sum, err := Campaign([]*Target{tg}, opts)
	if err != nil {
		t.Fatal(err)
	}
	f := sum.Failure
	if f == nil {
		t.Fatalf("the planted bug was not found in %d runs", sum.Runs)
	}
	t.Logf("run %d: %d of %d faults, end %s; written file:\n%s", f.Run, f.Faults, f.OriginalFaults, f.End, f.Scenario)
	if !f.Replays {
		t.Errorf("the failure says it does not replay under fleetsim run")
	}
	if f.Invariant != "rolloutBudgets" {
		t.Errorf("invariant = %s (%s), want rolloutBudgets", f.Invariant, f.Detail)
	}
	if f.Faults > f.OriginalFaults {
		t.Errorf("shrinking grew the faults: %d > %d", f.Faults, f.OriginalFaults)
	}
	end, _ := time.ParseDuration(f.End)
	if end >= tg.Duration {
		t.Errorf("shrinking did not end the run earlier: %s", f.End)
	}
	// Same seed, same failure, whatever the parallelism.
	opts.Parallel = 1
	again, err := Campaign([]*Target{tg}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f.Scenario, again.Failure.Scenario); diff != "" {
		t.Errorf("a second campaign with the same seed found another failure (-first +second):\n%s", diff)
	}
	// The written file replays the violation, and passes once the bug is gone.
	sc, err := scenarios.Parse("replay.yaml", []byte(f.Scenario))
	if err != nil {
		t.Fatalf("the written file does not parse: %v\n%s", err, f.Scenario)
	}
	if diff := cmp.Diff([]string{"rolloutBudgets"}, sc.Always); diff != "" {
		t.Errorf("always (-want +got):\n%s", diff)
	}
	rep, err := runner.Run(sc, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || rep.Invariants[0].Passed {
		t.Errorf("the written file does not replay the violation:\n%s", f.Scenario)
	}
	restore()
	rep, err = runner.Run(sc, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Invariants[0].Passed {
		t.Errorf("without the planted bug the written file still fails: %s", rep.Invariants[0].Detail)
	}
	if !strings.Contains(f.Scenario, "fleetsim run") {
		t.Errorf("the written file does not say how to replay it")
	}
}

// TestShardsCoverTheCampaign: two shards together run exactly the runs of one unsharded
// campaign, with the same seeds and outcomes, and their merged summary equals it.
func TestShardsCoverTheCampaign(t *testing.T) {
	tg := load(t, "taints-tolerations.yaml", 0)
	type run struct {
		seed uint64
		hash string
	}
	collect := func(shard, shards int) (map[int]run, *Summary) {
		var mu sync.Mutex
		got := map[int]run{}
		sum, err := Campaign([]*Target{tg}, Options{Seed: 3, Runs: 12, Parallel: 2, Shard: shard, Shards: shards,
			OnRun: func(i int, seed uint64, h string) { mu.Lock(); got[i] = run{seed, h}; mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		return got, sum
	}
	whole, wsum := collect(0, 1)
	a, asum := collect(0, 2)
	b, bsum := collect(1, 2)
	union := map[int]run{}
	for i, r := range a {
		union[i] = r
	}
	for i, r := range b {
		if _, dup := union[i]; dup {
			t.Errorf("run %d ran in both shards", i)
		}
		union[i] = r
	}
	if len(whole) != 12 {
		t.Errorf("the unsharded campaign ran %d runs, want 12", len(whole))
	}
	if diff := cmp.Diff(whole, union, cmp.AllowUnexported(run{})); diff != "" {
		t.Errorf("shards differ from the unsharded campaign (-whole +shards):\n%s", diff)
	}
	m, err := Merge([]*Summary{asum, bsum}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != wsum.Runs || m.Events != wsum.Events || m.Digest != wsum.Digest || !cmp.Equal(m.Faults, wsum.Faults) {
		t.Errorf("merged = %d runs, %d events, digest %x, faults %v; unsharded = %d, %d, %x, %v",
			m.Runs, m.Events, m.Digest, m.Faults, wsum.Runs, wsum.Events, wsum.Digest, wsum.Faults)
	}
	if _, err := Merge([]*Summary{asum}, nil); err == nil {
		t.Error("merging one of two shards succeeded")
	}
}

// TestConvergent: convergence is checked for clusters the schedule faulted whose faults
// ended recoveryTime before the end, and never for members the scenario itself fails.
func TestConvergent(t *testing.T) {
	tg := load(t, "quickstart.yaml", 0)
	end := tg.Duration
	faults := []Fault{
		{Kind: Crash, Member: "east-1", At: time.Minute, End: 2 * time.Minute},
		{Kind: Skew, Member: "east-2", At: time.Minute, End: end - time.Minute},                               // too late
		{Kind: Partition, Member: "west-2", At: time.Minute, End: 2 * time.Minute},                            // the scenario fails west-2
		{Kind: Label, Member: "west-1", Key: "fuzz-label", Value: "x", At: time.Minute, End: 2 * time.Minute}, // not a health fault
	}
	if diff := cmp.Diff([]string{"east-1"}, tg.convergent(faults, end, nil)); diff != "" {
		t.Errorf("convergent (-want +got):\n%s", diff)
	}
	data, err := tg.render(1, faults, end, nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse("c.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Expect) != 2 || sc.Expect[0].Member == nil || sc.Expect[0].Member.Name != "east-1" {
		t.Errorf("convergence expectations = %+v, want Joined and Healthy of east-1", sc.Expect)
	}
	sum, err := Campaign([]*Target{tg}, Options{Seed: 11, Runs: 6, Converge: true, Kinds: []Kind{Crash, Partition}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ConvergenceChecks == 0 || sum.Violations != 0 {
		t.Errorf("campaign: %d members checked converged, %d violations; want some and none", sum.ConvergenceChecks, sum.Violations)
	}
}

// TestConvergenceBlamesOnlyFaults: a member the scenario makes unhealthy by itself (its
// heartbeat period outlasts the health timeout) is not a convergence violation of the
// faults injected on it: the same seed's run without injected faults shows it unhealthy
// too, so it is left out; members healthy all along there are still checked.
func TestConvergenceBlamesOnlyFaults(t *testing.T) {
	data, err := os.ReadFile("testdata/slow-heartbeat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := Prepare("testdata/slow-heartbeat.yaml", data, 0)
	if err != nil {
		t.Fatal(err)
	}
	const seed = 5
	unsteady, err := tg.unsteady(seed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]bool{"slow": true}, unsteady); diff != "" {
		t.Errorf("members unhealthy without injected faults (-want +got):\n%s", diff)
	}
	// A crash of each member, healed long before the end.
	faults := []Fault{
		{Kind: Crash, Member: "fast-1", At: 10 * time.Minute, End: 12 * time.Minute},
		{Kind: Crash, Member: "slow", At: 11 * time.Minute, End: 13 * time.Minute},
	}
	type verdict struct {
		Invariant string
		Checked   int // members checked converged
	}
	check := func(skip map[string]bool) verdict {
		o, _, err := tg.run(seed, faults, tg.Duration, nil, false, true, skip)
		if err != nil {
			t.Fatal(err)
		}
		return verdict{o.invariant, o.converge / 2}
	}
	// Without the reference run (every faulted member checked), slow's own Unknown is
	// blamed on the crash: the false positive.
	if diff := cmp.Diff(verdict{Converged, 2}, check(map[string]bool{})); diff != "" {
		t.Errorf("every faulted member checked (-want +got):\n%s", diff)
	}
	// As campaigns run it: slow is looked at again without faults and left out; fast-1
	// recovered.
	if diff := cmp.Diff(verdict{"", 1}, check(nil)); diff != "" {
		t.Errorf("a campaign's run (-want +got):\n%s", diff)
	}
	// The written file leaves slow out too.
	out, err := tg.render(seed, faults, tg.Duration, nil, true, unsteady)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse("w.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	var checked []string
	for _, e := range sc.Expect {
		checked = append(checked, e.Member.Name+" "+e.Member.Condition.Type)
	}
	if diff := cmp.Diff([]string{"fast-1 Joined", "fast-1 Healthy"}, checked); diff != "" {
		t.Errorf("convergence expectations written (-want +got):\n%s", diff)
	}
	// A campaign of crashes, partitions and skews finds nothing to blame.
	sum, err := Campaign([]*Target{tg}, Options{Seed: 1, Runs: 40, Parallel: 2, Converge: true, Kinds: []Kind{Crash, Partition, Skew}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failure != nil || sum.ConvergenceChecks == 0 {
		t.Errorf("campaign: %d members checked converged, failure %+v; want some checked and none", sum.ConvergenceChecks, sum.Failure)
	}
}
