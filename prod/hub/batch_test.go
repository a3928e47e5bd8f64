package hub

import (
	"testing"

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
