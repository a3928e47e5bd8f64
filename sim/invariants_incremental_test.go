package sim

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// rsmCrossCheck makes rsmRun run the full rollout check next to the incremental one after
// every event (invTracker.full) and verify the incremental copy of the state each time.
var rsmCrossCheck bool

// TestIncrementalRolloutAgreesWithFull: over the rollout state machine's random fleets,
// placements and faults, the incremental rollout check (only the placements whose bindings
// an event changed) finds exactly what the full check finds after every event, and its copy
// of the state equals a full copy after every event; the named invariants agree with their
// full checks too, and the member invariants read through the member view agree with the
// same checks reading the store.
func TestIncrementalRolloutAgreesWithFull(t *testing.T) {
	rsmCrossCheck = true
	defer func() { rsmCrossCheck = false }()
	rapid.Check(t, func(rt *rapid.T) {
		sc := rsmDraw(rt)
		tr, err := rsmRun(sc)
		if err != nil && (strings.Contains(err.Error(), "incremental") || strings.Contains(err.Error(), "the full one")) {
			rt.Fatalf("%v\n\nscenario:\n%s\nlast events:\n  %s", err, sc, strings.Join(tr.recent(40), "\n  "))
		}
		if err != nil {
			rt.Fatalf("a run failed an invariant (both checks agreed): %v\nscenario:\n%s", err, sc)
		}
	})
}
