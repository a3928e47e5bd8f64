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

// awaitedReports are, per placement, the bindings whose Work the hub wrote and whose
// member has not reported on it since. The reports of one rollout step arrive spread over
// the members' apply times and the API server's latency; a rollout that fanned them in
// 20 ms after the first took a few, held the placement's lock while it wrote them and the
// placement's status, and kept the rest waiting for the next one. A report wakes the
// rollout reportBatchDelay later only when no other report of its placement is awaited,
// else reportWindow later: one decision then serves the step's reports, and the last
// report is decided on without a decision before it in the way. A Work whose report does
// not come within awaitLimit is no longer awaited (a member down, a Work the agent found
// unchanged).
type awaitedReports struct {
	mu         sync.Mutex
	works      map[string]map[string]time.Time // placement → binding → when its Work was written
	lastPruned time.Time
}

// awaitLimit is how long after its Work is written a report is awaited.
const awaitLimit = 10 * time.Second

// expect notes that binding's Work, of placement, was written at: its member's report is
// awaited.
func (a *awaitedReports) expect(placement, binding string, at time.Time) {
	if placement == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.works == nil {
		a.works = map[string]map[string]time.Time{}
	}
	if at.Sub(a.lastPruned) > awaitLimit {
		// Placements deleted, or whose members never reported, leave nothing behind.
		for p := range a.works {
			a.prune(p, at)
		}
		a.lastPruned = at
	}
	if a.works[placement] == nil {
		a.works[placement] = map[string]time.Time{}
	}
	a.works[placement][binding] = at
}

// arrived notes binding's report, and tells whether another report of placement is still
// awaited at now.
func (a *awaitedReports) arrived(placement, binding string, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.works[placement] == nil {
		return false
	}
	delete(a.works[placement], binding)
	return a.prune(placement, now) > 0
}

// prune forgets placement's Works written more than awaitLimit before now and returns how
// many are left. The caller holds mu.
func (a *awaitedReports) prune(placement string, now time.Time) int {
	set := a.works[placement]
	for b, at := range set {
		if now.Sub(at) > awaitLimit {
			delete(set, b)
		}
	}
	if len(set) == 0 {
		delete(a.works, placement)
	}
	return len(set)
}
