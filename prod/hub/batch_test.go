package hub

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/triggers"
)

// TestFanInBatch pins when the placement-wide decisions that reports wake go: at once
// (after rolloutBatchDelay) with no fan-in of the placement outstanding, else held back
// until the last outstanding fan-in of the placement is done, at most maxBatchDelay.
func TestFanInBatch(t *testing.T) {
	var b fanInBatch
	if got := b.hold(triggers.Rollout, "p"); got != rolloutBatchDelay {
		t.Errorf("hold with nothing outstanding = %v, want %v", got, rolloutBatchDelay)
	}
	b.queued("p", "p-east")
	b.queued("p", "p-west")
	b.queued("q", "q-east")
	if got := b.hold(triggers.Rollout, "p"); got != maxBatchDelay {
		t.Errorf("hold with two fan-ins outstanding = %v, want %v", got, maxBatchDelay)
	}
	if got := b.hold(triggers.StagedUpdate, "p"); got != maxBatchDelay {
		t.Errorf("hold of a second controller = %v, want %v", got, maxBatchDelay)
	}
	if _, got := b.done("p-east"); got != nil {
		t.Errorf("done(p-east) with p-west outstanding = %v, want none", got)
	}
	p, got := b.done("p-west")
	if p != "p" {
		t.Errorf("done(p-west) placement = %q, want p", p)
	}
	want := []triggers.Controller{triggers.Rollout, triggers.StagedUpdate}
	if diff := cmp.Diff(want, got, cmp.Transformer("sort", func(cs []triggers.Controller) map[triggers.Controller]bool {
		m := map[triggers.Controller]bool{}
		for _, c := range cs {
			m[c] = true
		}
		return m
	})); diff != "" {
		t.Errorf("done(p-west), the last of p (-want +got):\n%s", diff)
	}
	if _, got := b.done("p-west"); got != nil {
		t.Errorf("done(p-west) again = %v, want none: what was held went once", got)
	}
	if got := b.hold(triggers.Rollout, "q"); got != maxBatchDelay {
		t.Errorf("hold on q, its fan-in still outstanding = %v, want %v", got, maxBatchDelay)
	}
	// A fan-in whose binding and Work are gone by the time it runs still ends: its
	// placement's decisions are not held back for ever.
	if _, got := b.done("q-east"); got == nil {
		t.Errorf("done(q-east) = none, want the rollout held back for q")
	}
	if got := b.hold(triggers.Rollout, "q"); got != rolloutBatchDelay {
		t.Errorf("hold on q after its last fan-in = %v, want %v", got, rolloutBatchDelay)
	}
}

// TestAwaitedReports pins which report is the last one awaited for its placement: only
// Works the hub wrote count, each until its report arrives or awaitLimit passes, and
// placements do not count each other's.
func TestAwaitedReports(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var a awaitedReports
	a.expect("p", "p-east", t0)
	a.expect("p", "p-west", t0)
	a.expect("p", "p-north", t0.Add(time.Second))
	a.expect("q", "q-east", t0)
	steps := []struct {
		placement, binding string
		at                 time.Time
		want               bool
	}{
		{"p", "p-east", t0.Add(500 * time.Millisecond), true},  // p-west, p-north awaited
		{"p", "p-east", t0.Add(600 * time.Millisecond), true},  // a second report changes nothing
		{"p", "p-west", t0.Add(700 * time.Millisecond), true},  // p-north awaited
		{"p", "p-south", t0.Add(800 * time.Millisecond), true}, // a report the hub did not await
		{"p", "p-north", t0.Add(900 * time.Millisecond), false},
		{"r", "r-east", t0.Add(time.Second), false},                   // no Work of r written
		{"q", "q-west", t0.Add(awaitLimit + time.Millisecond), false}, // q-east no longer awaited
	}
	for _, s := range steps {
		if got := a.arrived(s.placement, s.binding, s.at); got != s.want {
			t.Errorf("arrived(%s, %s) at +%v = %v, want %v", s.placement, s.binding, s.at.Sub(t0), got, s.want)
		}
	}
	// Writing again much later prunes what no report ever came for.
	a.expect("s", "s-east", t0.Add(3*awaitLimit))
	if diff := cmp.Diff(map[string]map[string]time.Time{"s": {"s-east": t0.Add(3 * awaitLimit)}}, a.works); diff != "" {
		t.Errorf("awaited after a late expect (-want +got):\n%s", diff)
	}
}
