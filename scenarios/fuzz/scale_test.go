package fuzz

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScaleFault: a scale re-applies a PickN placement of the scenario, as last applied
// before the fault, with numberOfClusters one or two below or one above, and nothing else
// changed; a run with it passes every invariant.
func TestScaleFault(t *testing.T) {
	tg := load(t, "placement-types.yaml", 0)
	if len(tg.pickN) == 0 {
		t.Fatal("placement-types.yaml: no PickN placement found")
	}
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[int64]bool{}
	for range 40 {
		f, ok := tg.drawOne(r, Scale, new(int))
		if !ok {
			t.Fatal("no scale drawn from a scenario with a PickN placement")
		}
		var ref pickNRef
		for _, v := range tg.pickN {
			if v.name == f.Placement && v.at <= f.At {
				ref = v
			}
		}
		got, _ := pickNCount(f.Resource)
		seen[got-ref.n] = true
		if d := got - ref.n; d != 1 && d != -1 && d != -2 && (got != 0 || d > 0) {
			t.Errorf("scale of %s at %s: numberOfClusters %d from %d", f.Placement, f.At, got, ref.n)
		}
		// Nothing but the count changes.
		back := withNumberOfClusters(f.Resource, ref.n)
		if diff := cmp.Diff(ref.object, back); diff != "" {
			t.Errorf("scale of %s changed more than numberOfClusters (-before +after):\n%s", f.Placement, diff)
		}
	}
	for _, d := range []int64{-2, -1, 1} {
		if !seen[d] {
			t.Errorf("40 draws never changed the count by %d (seen %v)", d, seen)
		}
	}
	f, _ := tg.drawOne(rand.New(rand.NewPCG(3, 4)), Scale, new(int))
	out, data, err := tg.run(7, []Fault{f}, tg.Duration, nil, true, false, nil)
	if err != nil {
		t.Fatalf("the run with a scale: %v", err)
	}
	if out.invariant != "" {
		t.Errorf("the run with a scale fails %s: %s", out.invariant, out.detail)
	}
	if !strings.Contains(string(data), "# fuzz fault 1: scale") {
		t.Errorf("the rendered scenario has no scale step:\n%s", data)
	}
}
