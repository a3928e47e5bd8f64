package fuzz

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
)

// TestInMemoryEqualsRendered: every library scenario builds its campaign runs in memory,
// and for random schedules (any target, seed, fault kinds and count, with the convergence
// check) the in-memory scenario is the one the rendered file parses to, lines and fields
// included, or both fail alike; run tolerantly, as a campaign runs it, it gives the same
// trace hash and events.
func TestInMemoryEqualsRendered(t *testing.T) {
	targets := libraryTargets(t)
	for _, tg := range targets {
		if tg.mem == nil {
			t.Errorf("%s: campaign runs are rendered and parsed, not built in memory", tg.Path)
		}
	}
	if t.Failed() {
		return
	}
	runs := 0
	rapid.Check(t, func(rt *rapid.T) {
		tg := rapid.SampledFrom(targets).Draw(rt, "target")
		seed := rapid.Uint64().Draw(rt, "seed")
		kinds := rapid.SliceOfNDistinct(rapid.SampledFrom(Kinds), 1, len(Kinds), rapid.ID[Kind]).Draw(rt, "kinds")
		faults := tg.draw(rand.New(rand.NewPCG(seed, 7)), kinds, rapid.IntRange(1, 8).Draw(rt, "maxFaults"))
		members := tg.convergent(faults, tg.Duration, nil)
		data, err := tg.renderFor(seed, faults, tg.Duration, nil, members)
		if err != nil {
			rt.Fatal(err)
		}
		want, werr := scenarios.Parse(tg.Path, data)
		got, gerr := tg.mem.build(seed, faults, tg.Duration, members)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			rt.Fatalf("the rendered file parses with error %v, the in-memory scenario with %v\n%s", werr, gerr, data)
		}
		if werr != nil {
			return
		}
		if diff := cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
			rt.Fatalf("in memory differs from the rendered file (-rendered +in memory):\n%s\n%s", diff, data)
		}
		wr, werr := runner.Run(want, runner.Options{TolerateStepErrors: true})
		gr, gerr := runner.Run(got, runner.Options{TolerateStepErrors: true})
		if werr != nil || gerr != nil {
			rt.Fatalf("runs: rendered %v, in memory %v", werr, gerr)
		}
		type run struct {
			TraceHash string
			Events    uint64
		}
		if diff := cmp.Diff(run{wr.TraceHash, wr.Events}, run{gr.TraceHash, gr.Events}); diff != "" {
			rt.Fatalf("runs differ (-rendered +in memory):\n%s", diff)
		}
		runs++
	})
	if runs == 0 {
		t.Error("no schedule parsed: nothing was compared")
	}
}
