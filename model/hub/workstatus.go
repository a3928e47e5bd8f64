package hub

import (
	"slices"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// ReceiveWorkStatus is the hub's status fan-in: it copies a member's report on the Work of
// one binding generation into the binding's Applied, Available and DiffReported conditions
// (a condition the report lacks is removed) and its failed, drifted and diffed placements.
// A report on another generation than the binding's is stale and ignored.
func ReceiveWorkStatus(st Store, env Env, bindingName string, gen int64, r placement.WorkReport) {
	b := st.Binding(bindingName)
	if b == nil || b.Generation != gen || !r.Reported() {
		return
	}
	nb := *b
	nb.Conditions = append([]condition.Timed(nil), b.Conditions...)
	changed := false
	var applied *condition.Condition
	if r.Applied.Type != "" {
		applied = &r.Applied
	}
	for _, rc := range []struct {
		typ string
		c   *condition.Condition
	}{{condition.TypeApplied, applied}, {condition.TypeAvailable, r.Available}, {condition.TypeDiffReported, r.DiffReported}} {
		if rc.c == nil {
			if _, had := condition.Find(nb.Conditions, rc.typ); had {
				condition.Remove(&nb.Conditions, rc.typ)
				changed = true
			}
			continue
		}
		statusChanged, any := condition.Update(&nb.Conditions, *rc.c, gen, env.Now())
		if statusChanged {
			env.Record("binding-condition", nb.Name, ConditionText(*rc.c))
		}
		changed = changed || any
	}
	// Failed placements alone wake nobody: they follow the conditions they explain. Drifts
	// and diffs can come and go while every condition stays True (Always with
	// FullComparison, ReportDiff), so a change in what drifted or differs wakes the
	// placement's status; a new observation time of the same drifts does not.
	if !sameDrifts(b.DriftedPlacements, r.Drifted) || !sameDiffs(b.DiffedPlacements, r.Diffed) {
		changed = true
	}
	nb.FailedPlacements = r.Failed
	nb.DriftedPlacements = r.Drifted
	nb.DiffedPlacements = r.Diffed
	st.PutBinding(nb)
	if changed {
		env.Fire(triggers.WorkStatusChanged, nb.Name, nb.Placement, nb.TargetCluster)
	}
}

func sameDrifts(a, b []placement.DriftedPlacement) bool {
	return slices.EqualFunc(a, b, func(x, y placement.DriftedPlacement) bool {
		return sameID(x.ResourceIdentifier, y.ResourceIdentifier) && x.FirstDriftedObservedTime.Equal(y.FirstDriftedObservedTime) &&
			x.TargetClusterObservedGeneration == y.TargetClusterObservedGeneration && slices.Equal(x.ObservedDrifts, y.ObservedDrifts)
	})
}

func sameDiffs(a, b []placement.DiffedPlacement) bool {
	return slices.EqualFunc(a, b, func(x, y placement.DiffedPlacement) bool {
		gx, gy := int64(-1), int64(-1)
		if x.TargetClusterObservedGeneration != nil {
			gx = *x.TargetClusterObservedGeneration
		}
		if y.TargetClusterObservedGeneration != nil {
			gy = *y.TargetClusterObservedGeneration
		}
		return sameID(x.ResourceIdentifier, y.ResourceIdentifier) && x.FirstDiffedObservedTime.Equal(y.FirstDiffedObservedTime) &&
			gx == gy && slices.Equal(x.ObservedDiffs, y.ObservedDiffs)
	})
}

func sameID(a, b placement.ResourceIdentifier) bool {
	if (a.Envelope == nil) != (b.Envelope == nil) || (a.Envelope != nil && *a.Envelope != *b.Envelope) {
		return false
	}
	a.Envelope, b.Envelope = nil, nil
	return a == b
}
