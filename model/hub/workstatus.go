package hub

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// WorkStatus is what a member agent last reported on one Work of a binding, by Work name:
// the Work's own conditions (agentk8s.Summarise), which BindingReport folds into the
// binding's.
type WorkStatus struct {
	Work   string
	Report placement.WorkReport
}

// BindingReport folds the reports on a binding's Works (one per resource snapshot part
// and one per envelope) into the binding's conditions as KubeFleet's work generator does
// (WORK-SYNC, STATUS-PER-CLUSTER-REASONS), looking at the Works in name order:
//
//   - Applied: True AllWorkHaveBeenApplied when every Work's Applied is True; else False
//     NotAllWorkHaveBeenApplied naming the first Work that is not (or has not reported).
//   - Available, once applied: False NotAllWorkAreAvailable naming the first Work not
//     available; else True WorkNotTrackable naming a Work whose availability could not be
//     tracked; else True AllWorkAreAvailable.
//   - DiffReported (ReportDiff): True AllWorkHaveDiffReported when every Work reported its
//     diff; else False NotAllWorkHaveDiffReported naming the first that did not.
//
// Failed, drifted and diffed manifests are those of every Work in order, at most
// placement.MaxFailedPlacements of each. A report that is not Reported() counts as a Work
// not applied (or whose diff is not reported).
func BindingReport(works []WorkStatus) placement.WorkReport {
	ws := slices.Clone(works)
	slices.SortFunc(ws, func(a, b WorkStatus) int { return strings.Compare(a.Work, b.Work) })
	var out placement.WorkReport
	diffMode := false
	for _, w := range ws {
		if w.Report.DiffReported != nil {
			diffMode = true
		}
		for _, f := range w.Report.Failed {
			if len(out.Failed) < placement.MaxFailedPlacements {
				out.Failed = append(out.Failed, f)
			}
		}
		for _, d := range w.Report.Drifted {
			if len(out.Drifted) < placement.MaxFailedPlacements {
				out.Drifted = append(out.Drifted, d)
			}
		}
		for _, d := range w.Report.Diffed {
			if len(out.Diffed) < placement.MaxFailedPlacements {
				out.Diffed = append(out.Diffed, d)
			}
		}
	}
	isTrue := func(c *condition.Condition) bool { return c != nil && c.Status == metav1.ConditionTrue }
	if diffMode {
		c := condition.True(condition.TypeDiffReported, condition.ReasonAllWorkDiffReported, "Diff reporting has been completed in all corresponding work objects")
		for _, w := range ws {
			if !isTrue(w.Report.DiffReported) {
				c = condition.False(condition.TypeDiffReported, condition.ReasonNotAllWorkDiffReported, fmt.Sprintf("Diff reporting failed in work object %s", w.Work))
				break
			}
		}
		out.DiffReported = &c
		return out
	}
	for _, w := range ws {
		if a := w.Report.Applied; a.Type == "" || a.Status != metav1.ConditionTrue {
			out.Applied = condition.False(condition.TypeApplied, condition.ReasonNotAllWorkApplied, fmt.Sprintf("Work object %s is not applied", w.Work))
			return out
		}
	}
	out.Applied = condition.True(condition.TypeApplied, condition.ReasonAllWorkApplied, "All corresponding work objects are applied")
	a := condition.True(condition.TypeAvailable, condition.ReasonAllWorkAvailable, "All corresponding work objects are available")
	untracked := ""
	for _, w := range ws {
		if !isTrue(w.Report.Available) {
			a = condition.False(condition.TypeAvailable, condition.ReasonNotAllWorkAvailable, fmt.Sprintf("Work object %s is not available", w.Work))
			untracked = ""
			break
		}
		if w.Report.Available.Reason == condition.ReasonWorkNotTrackable && untracked == "" {
			untracked = w.Work
		}
	}
	if untracked != "" {
		a = condition.True(condition.TypeAvailable, condition.ReasonWorkNotTrackable, fmt.Sprintf("The availability of work object %s is not trackable", untracked))
	}
	out.Available = &a
	return out
}

// ReceiveWorkStatus is the hub's status fan-in: it folds the member's reports on the Works
// of one binding generation (BindingReport) into the binding's Applied, Available and
// DiffReported conditions (a condition the fold lacks is removed) and its failed, drifted
// and diffed placements. Reports on another generation than the binding's are stale and
// ignored, and so is a fold of Works none of which has been reported on yet.
func ReceiveWorkStatus(st Store, env Env, bindingName string, gen int64, works []WorkStatus) {
	b := st.Binding(bindingName)
	if b == nil || b.Generation != gen || !slices.ContainsFunc(works, func(w WorkStatus) bool { return w.Report.Reported() }) {
		return
	}
	r := BindingReport(works)
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
