package invariants

// Rollout invariants (1) and (2): the rolling-update budgets maxUnavailable and maxSurge,
// checked on every step in which the rollout changed a placement's bindings.

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/model/placement"
)

// ---- (1) maxUnavailable ----

// invMaxUnavailable: the rollout never makes more clusters unavailable than maxUnavailable
// allows. Precisely: in every event in which the rollout changed a placement's bindings
// (raised a generation: bound or updated in place; or deleted an Unscheduled binding),
//
//	ready(after) ≥ min(N − maxUnavailable, ready(before))
//
// where ready counts Bound and Unscheduled bindings that are ready in ROLL-ALGORITHM's
// sense at the event's time, and N and maxUnavailable are ROLL-TARGET-N and
// ROLL-MAXUNAVAILABLE (percentages of N rounded up) for the state before the event.
// Readiness lost to crashes, partitions, scripted unavailability, apply failures and
// evictions happens in other events and is not the rollout's doing; a rollout may still
// proceed while such losses leave fewer than N − maxUnavailable ready, but then it must not
// take away any ready binding.
func (ro *Rollout) maxUnavailable(r Reader, d *diff, now time.Time) error {
	for _, name := range sortedKeys(d.placements) {
		pd := d.placements[name]
		if !d.rollout(pd) {
			continue
		}
		p, snap := rollingPlacement(r, name)
		if p == nil {
			continue
		}
		before := ro.beforeOf(name)
		after := invCopies(r.Bindings(name))
		n := invTarget(snap, before)
		mu, _ := invRolling(p.CRP.Spec.Strategy)
		maxU := invScale(mu, n, "25%")
		period := invPeriod(p.CRP.Spec.Strategy)
		count := func(bs []placement.Binding) (int, []string) {
			k, names := 0, []string(nil)
			for i := range bs {
				b := &bs[i]
				if (b.State == placement.Bound || b.State == placement.Unscheduled) && invReady(b, now, period) {
					k++
					names = append(names, b.TargetCluster)
				}
			}
			return k, names
		}
		rb, rbNames := count(before)
		ra, raNames := count(after)
		if want := min(n-maxU, rb); ra < want {
			return fmt.Errorf("invariant maxUnavailable: placement %s: the rollout left %d ready cluster(s) %v, fewer than min(N−maxUnavailable = %d−%d, ready before = %d %v); it updated %v and deleted %v",
				name, ra, raNames, n, maxU, rb, rbNames, pd.bumped, invNames(pd.deleted))
		}
		ro.Stats.RolloutEvents++
		for _, bn := range pd.bumped {
			if old := ro.before[bn]; old.State == placement.Bound && invReady(&old, now, period) {
				ro.Stats.InPlaceUpdates++
			}
		}
		ro.Stats.RolloutDeletes += len(pd.deleted)
	}
	return nil
}

func invNames(bs []placement.Binding) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// ---- (2) maxSurge ----

// invMaxSurge: the rollout never brings in a new cluster beyond N + maxSurge. Precisely: in
// every event in which the rollout bound k Scheduled bindings (Scheduled → Bound) of a
// placement,
//
//	holding(before) + k ≤ N + maxSurge
//
// where holding counts the bindings whose resources are on their cluster: Bound, or
// Unscheduled after having been Bound (BIND-STATES: resources stay until the rollout
// deletes the binding), whether or not their apply or availability failed (ROLL-MAXSURGE:
// "at most N + maxSurge clusters hold resources"; fleetsim counts failed ones too, unlike
// upstream's canBeReady); N and maxSurge (a percentage of N rounded up) are taken before
// the event. Scheduled bindings hold nothing yet and do not count. In-place updates never
// add a cluster and are not counted (ROLL-MAXSURGE, ROLL-INPLACE). A placement above the
// cap after a scale-in is no violation; binding a new cluster there would be.
func (ro *Rollout) maxSurge(r Reader, d *diff, _ time.Time) error {
	for _, name := range sortedKeys(d.placements) {
		pd := d.placements[name]
		if len(pd.newlyBound) == 0 {
			continue
		}
		p, snap := rollingPlacement(r, name)
		if p == nil {
			continue
		}
		before := ro.beforeOf(name)
		n := invTarget(snap, before)
		_, ms := invRolling(p.CRP.Spec.Strategy)
		surge := invScale(ms, n, "25%")
		var holders []string
		for i := range before {
			if invHolds(&before[i]) {
				holders = append(holders, before[i].TargetCluster)
			}
		}
		k := len(pd.newlyBound)
		ro.Stats.NewlyBound += k
		if len(holders)+k > n+surge {
			return fmt.Errorf("invariant maxSurge: placement %s: the rollout bound %d new cluster(s) %v while %d cluster(s) %v already held it; N %d + maxSurge %d allows %d",
				name, k, pd.newlyBound, len(holders), holders, n, surge, n+surge)
		}
		if len(holders)+k == n+surge {
			ro.Stats.BindsAtSurgeCap++
		}
	}
	return nil
}
