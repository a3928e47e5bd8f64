package invariants

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/condition"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
)

// ---- (5) convergence ----

// Converged: once inputs stop changing and every fault has healed (and workloads are
// available again), every rolling-update placement has converged:
//
//   - every live binding (Scheduled or Bound, not deleting) is Bound, on the latest
//     resource snapshot, Applied True and ready (ROLL-ALGORITHM) at its generation;
//   - the binding's Work exists at the binding's generation with the manifests of the
//     binding's resource snapshot (no override is used by the test);
//   - no Unscheduled binding is left (the rollout deletes them within budget).
//
// The one exception is the stall the spec requires (ROLL-STUCK-STRICT, DC-1): when the
// ready bindings do not exceed N − maxUnavailable, nothing may be disrupted, so an in-place
// update cannot start (maxSurge never helps in place, ROLL-MAXSURGE) and Unscheduled
// bindings cannot be removed. Then live bindings may stay on an older snapshot, but each
// must still be Bound and ready, and say RolloutStarted=False/RolloutNotStartedYet.
func Converged(r Reader, now time.Time) error {
	var problems []string
	for _, name := range r.PlacementNames() {
		p, snap := rollingPlacement(r, name)
		if p == nil {
			continue
		}
		latest := ""
		if r := p.LatestResources(); r != nil {
			latest = r.Name
		}
		bs := invCopies(r.Bindings(name))
		period := invPeriod(p.CRP.Spec.Strategy)
		n := invTarget(snap, bs)
		mu, _ := invRolling(p.CRP.Spec.Strategy)
		minAvailable := n - invScale(mu, n, "25%")
		ready := 0
		for i := range bs {
			if b := &bs[i]; (b.State == placement.Bound || b.State == placement.Unscheduled) && invReady(b, now, period) {
				ready++
			}
		}
		blocked := n > 0 && ready-minAvailable <= 0
		for i := range bs {
			b := &bs[i]
			where := fmt.Sprintf("placement %s binding %s on %s", name, b.Name, b.TargetCluster)
			if b.State == placement.Unscheduled {
				if !blocked {
					problems = append(problems, where+": still Unscheduled")
				}
				continue
			}
			if !b.Live() {
				continue
			}
			switch {
			case b.State != placement.Bound:
				problems = append(problems, fmt.Sprintf("%s: %s, not Bound", where, b.State))
			case !condition.IsTrue(b.Conditions, condition.TypeApplied, b.Generation) || !invReady(b, now, period):
				problems = append(problems, fmt.Sprintf("%s: not applied and available at generation %d: %s", where, b.Generation, invBindingConditions(b)))
			case !workMatches(r, p, b):
				problems = append(problems, fmt.Sprintf("%s: its Works do not carry generation %d of %s: %+v", where, b.Generation, b.ResourceSnapshotName, invWorkText(r.Works(b.Name))))
			case b.ResourceSnapshotName != latest && !blocked:
				problems = append(problems, fmt.Sprintf("%s: on %s, not the latest %s (ready %d, N %d, minAvailable %d)", where, b.ResourceSnapshotName, latest, ready, n, minAvailable))
			case b.ResourceSnapshotName != latest:
				if c, ok := condition.Find(b.Conditions, condition.TypeRolloutStarted); !ok || c.Status != metav1.ConditionFalse || c.Reason != condition.ReasonRolloutNotStartedYet {
					problems = append(problems, fmt.Sprintf("%s: held on %s by the strategy (ready %d, N %d, minAvailable %d) but RolloutStarted is %s/%s", where, b.ResourceSnapshotName, ready, n, minAvailable, c.Status, c.Reason))
				}
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("invariant converged: at %s:\n  %s", now.UTC().Format(time.RFC3339), strings.Join(problems, "\n  "))
	}
	return nil
}

func invBindingConditions(b *placement.Binding) string {
	var sb strings.Builder
	for _, c := range b.Conditions {
		fmt.Fprintf(&sb, "%s=%s/%s@%d ", c.Type, c.Status, c.Reason, c.ObservedGeneration)
	}
	return sb.String()
}

// workMatches: the binding's Works are at its generation and its part Works, in part order,
// carry its resource snapshot's manifests (a snapshot pruned by the history limit is not
// compared).
func workMatches(r Reader, p *mhub.Placement, b *placement.Binding) bool {
	ws := r.Works(b.Name)
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if w.Generation != b.Generation {
			return false
		}
	}
	snap := p.ResourceSnapshotByName(b.ResourceSnapshotName)
	return snap == nil || resources.Hash(partManifests(b.Placement, ws)) == snap.Hash
}

// partManifests concatenates the manifests of a binding's part Works in part order.
func partManifests(placementName string, ws []*mhub.Work) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for sub := 0; ; sub++ {
		i := slices.IndexFunc(ws, func(w *mhub.Work) bool { return w.Name == resources.WorkName(placementName, sub) })
		if i < 0 {
			return out
		}
		out = append(out, ws[i].Manifests...)
	}
}

func invWorkText(ws []*mhub.Work) string {
	if len(ws) == 0 {
		return "no work"
	}
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("work %s generation %d, %d manifest(s), hash %s", w.Name, w.Generation, len(w.Manifests), resources.Hash(w.Manifests)))
	}
	return strings.Join(parts, "; ")
}
