package hub

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fleetsim/fleetsim/model/triggers"
)

// maxBatchDelay bounds how long a placement-wide decision waits for its placement's
// outstanding fan-ins: under a steady stream of reports its status still moves this often.
const maxBatchDelay = 2 * time.Second

// fanInBatch holds back the placement-wide decisions that members' reports wake until the
// placement's queued fan-ins are done. A placement-wide decision takes the placement's
// lock exclusively (rule 3 of consistency.go), so one that ran after each report would
// stop the other reports' fan-ins while it reads every binding and writes the placement's
// status: a hundred reports arriving together took a hundred such stops. Held back, the
// fan-ins run side by side and one decision follows them.
type fanInBatch struct {
	mu          sync.Mutex
	outstanding map[string]map[string]bool              // placement → bindings whose fan-in is queued or running
	placementOf map[string]string                       // binding → its placement in outstanding
	deferred    map[string]map[triggers.Controller]bool // placement → controllers to wake once they are done
}

// queued notes a fan-in queued for a binding of placement.
func (b *fanInBatch) queued(placement, binding string) {
	if placement == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.outstanding == nil {
		b.outstanding, b.placementOf = map[string]map[string]bool{}, map[string]string{}
	}
	if old, ok := b.placementOf[binding]; ok && old != placement {
		b.forget(old, binding) // a binding belongs to one placement; keep no stale entry
	}
	b.placementOf[binding] = placement
	if b.outstanding[placement] == nil {
		b.outstanding[placement] = map[string]bool{}
	}
	b.outstanding[placement][binding] = true
}

// hold says how long to wait before waking placement-wide controller c for placement:
// maxBatchDelay while fan-ins of the placement are outstanding (done wakes it sooner),
// else rolloutBatchDelay.
func (b *fanInBatch) hold(c triggers.Controller, placement string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.outstanding[placement]) == 0 {
		return rolloutBatchDelay
	}
	if b.deferred == nil {
		b.deferred = map[string]map[triggers.Controller]bool{}
	}
	if b.deferred[placement] == nil {
		b.deferred[placement] = map[triggers.Controller]bool{}
	}
	b.deferred[placement][c] = true
	return maxBatchDelay
}

// done notes a binding's fan-in finished, whatever placement it turned out to have (none
// once the binding and its Work are gone), and returns the placement and the controllers
// held back for it when this was its last outstanding fan-in.
func (b *fanInBatch) done(binding string) (string, []triggers.Controller) {
	b.mu.Lock()
	defer b.mu.Unlock()
	placement, ok := b.placementOf[binding]
	if !ok {
		return "", nil
	}
	if !b.forget(placement, binding) {
		return "", nil
	}
	out := slices.Sorted(maps.Keys(b.deferred[placement])) // woken in one order, run after run
	delete(b.deferred, placement)
	return placement, out
}

// forget drops binding from placement's outstanding fan-ins and reports whether none is
// left. The caller holds mu.
func (b *fanInBatch) forget(placement, binding string) bool {
	delete(b.placementOf, binding)
	set := b.outstanding[placement]
	delete(set, binding)
	if len(set) > 0 {
		return false
	}
	delete(b.outstanding, placement)
	return true
}
