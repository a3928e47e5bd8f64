package invariants

// Rollout invariant (5): a PickN placement is within numberOfClusters once the scheduler
// has unscheduled clusters of it.

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/model/placement"
)

// pickNScaledIn: in a step in which the scheduler turned live bindings of a PickN
// placement Unscheduled (a scale-in, or clusters that no longer fit), the placement holds
// at most numberOfClusters live bindings afterwards: the scheduler unschedules the whole
// surplus in one decision. (pickNWithinLimit checks the steps that pick; a scale-in of the
// snapshot alone, before the scheduler acts, is no violation.)
func (ro *Rollout) pickNScaledIn(r Reader, d *diff, _ time.Time) error {
	for _, name := range sortedKeys(d.placements) {
		pd := d.placements[name]
		if len(pd.unscheduled) == 0 {
			continue
		}
		snap := latest(r, name)
		if snap == nil || snap.Policy.Type() != placement.PickN {
			continue
		}
		live := 0
		for _, b := range r.Bindings(name) {
			if b.Live() {
				live++
			}
		}
		if live > int(snap.NumberOfClusters) {
			return fmt.Errorf("invariant pickNScaledIn: PickN placement %s holds %d live clusters after the scheduler unscheduled %v, more than numberOfClusters %d", name, live, pd.unscheduled, snap.NumberOfClusters)
		}
	}
	return nil
}

// PickNSettled: once a run is over (nothing left to react to), no PickN placement holds
// more live bindings than numberOfClusters. It catches a scale-in that unscheduled too few
// clusters, or none: a step that unschedules nothing never triggers pickNScaledIn.
func PickNSettled(r Reader) error {
	for _, name := range r.PlacementNames() {
		p := r.Placement(name)
		snap := latest(r, name)
		if p == nil || p.Deleting || snap == nil || snap.Policy.Type() != placement.PickN {
			continue
		}
		live := 0
		for _, b := range r.Bindings(name) {
			if b.Live() {
				live++
			}
		}
		if live > int(snap.NumberOfClusters) {
			return fmt.Errorf("invariant pickNSettled: PickN placement %s holds %d live clusters at the end, more than numberOfClusters %d", name, live, snap.NumberOfClusters)
		}
	}
	return nil
}
