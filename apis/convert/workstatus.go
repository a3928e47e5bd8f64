package convert

import (
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetsim/fleetsim/agentk8s"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// WorkStatusToModel reads what the member agent reported in a Work's status into the hub's
// fan-in report. ok is false while the agent has not reported on the Work's current
// generation (no Applied condition, or under ReportDiff no DiffReported condition, observing
// it): the hub then has nothing to copy. Failed manifests are those with a False Applied
// condition, or else a False Available one; drifted and diffed manifests those with drift
// or diff details. The envelope of each comes from the Work's envelope annotation by
// ordinal.
func WorkStatusToModel(w *v1beta1.Work, envelopes []*placement.NamespacedName) (r placement.WorkReport, ok bool) {
	current := func(typ string) *condition.Condition {
		c := meta.FindStatusCondition(w.Status.Conditions, typ)
		if c == nil || c.ObservedGeneration != w.Generation {
			return nil
		}
		u := untimed(*c)
		return &u
	}
	applied, diff := current(condition.TypeApplied), current(condition.TypeDiffReported)
	if applied == nil && diff == nil {
		return placement.WorkReport{}, false
	}
	if applied != nil {
		r.Applied = *applied
		r.Available = current(condition.TypeAvailable)
	}
	r.DiffReported = diff
	for _, mc := range w.Status.ManifestConditions {
		id := placement.ResourceIdentifier{Group: mc.Identifier.Group, Version: mc.Identifier.Version, Kind: mc.Identifier.Kind,
			Name: mc.Identifier.Name, Namespace: mc.Identifier.Namespace}
		if o := mc.Identifier.Ordinal; o >= 0 && o < len(envelopes) && envelopes[o] != nil {
			e := *envelopes[o]
			id.Envelope = &e
		}
		if d := mc.DriftDetails; d != nil && len(r.Drifted) < placement.MaxFailedPlacements {
			r.Drifted = append(r.Drifted, placement.DriftedPlacement{ResourceIdentifier: id.Copy(), ObservationTime: d.ObservationTime.Time,
				FirstDriftedObservedTime: d.FirstDriftedObservedTime.Time, TargetClusterObservedGeneration: d.ObservedInMemberClusterGeneration,
				ObservedDrifts: patchDetailsToModel(d.ObservedDrifts)})
		}
		if d := mc.DiffDetails; d != nil && len(r.Diffed) < placement.MaxFailedPlacements {
			r.Diffed = append(r.Diffed, placement.DiffedPlacement{ResourceIdentifier: id.Copy(), ObservationTime: d.ObservationTime.Time,
				FirstDiffedObservedTime: d.FirstDiffedObservedTime.Time, TargetClusterObservedGeneration: copyPtr(d.ObservedInMemberClusterGeneration),
				ObservedDiffs: patchDetailsToModel(d.ObservedDiffs)})
		}
		var failed *metav1.Condition
		if c := meta.FindStatusCondition(mc.Conditions, condition.TypeApplied); c != nil && c.Status == metav1.ConditionFalse {
			failed = c
		} else if c := meta.FindStatusCondition(mc.Conditions, condition.TypeAvailable); c != nil && c.Status == metav1.ConditionFalse {
			failed = c
		}
		if failed == nil || len(r.Failed) >= placement.MaxFailedPlacements {
			continue
		}
		r.Failed = append(r.Failed, placement.FailedPlacement{ResourceIdentifier: id, Condition: untimed(*failed)})
	}
	return r, true
}

// resourceOf is the resource (plural, lower case) of an identifier's kind, the
// identifier.resource of a manifest condition: the plural the API server's discovery uses
// for every built-in kind (apimachinery's guess, which the built-ins follow), which a custom
// resource's CRD may name otherwise.
func resourceOf(id placement.ResourceIdentifier) string {
	if id.Kind == "" {
		return ""
	}
	plural, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: id.Group, Version: id.Version, Kind: id.Kind})
	return plural.Resource
}

// WorkStatusFromResults is the status a member agent writes for a Work after applying its
// manifests under the apply strategy type applyType: one manifest condition per manifest
// (Applied, and Available where it applied; DiffReported under ReportDiff) with its drift or
// diff details, and the Work's Applied and Available (or DiffReported) conditions as
// agentk8s.SummariseStrategy decides them, all observing the Work's generation. Conditions
// whose status did not change keep base's lastTransitionTime.
func WorkStatusFromResults(w *v1beta1.Work, applyType placement.ApplyType, results []agentk8s.ManifestResult, now time.Time) v1beta1.WorkStatus {
	var out v1beta1.WorkStatus
	timed := func(old []metav1.Condition, c condition.Condition) metav1.Condition {
		mc := metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message,
			ObservedGeneration: w.Generation, LastTransitionTime: metav1.Time{Time: now}}
		if o := meta.FindStatusCondition(old, c.Type); o != nil && o.Status == c.Status {
			mc.LastTransitionTime = o.LastTransitionTime
		}
		return mc
	}
	at := func(t time.Time) metav1.Time {
		if t.IsZero() {
			t = now
		}
		return metav1.Time{Time: t}
	}
	for i, m := range results {
		var old []metav1.Condition
		if i < len(w.Status.ManifestConditions) {
			old = w.Status.ManifestConditions[i].Conditions
		}
		mc := v1beta1.ManifestCondition{Identifier: v1beta1.WorkResourceIdentifier{Ordinal: i, Group: m.Identifier.Group,
			Version: m.Identifier.Version, Kind: m.Identifier.Kind, Resource: resourceOf(m.Identifier), Namespace: m.Identifier.Namespace,
			Name: m.Identifier.Name}}
		for _, c := range agentk8s.ManifestConditions(m) {
			mc.Conditions = append(mc.Conditions, timed(old, c))
		}
		if len(m.Drifts) > 0 {
			var g int64
			if m.MemberGeneration != nil {
				g = *m.MemberGeneration
			}
			mc.DriftDetails = &v1beta1.DriftDetails{ObservationTime: at(m.ObservedAt), FirstDriftedObservedTime: at(m.DriftSince),
				ObservedInMemberClusterGeneration: g, ObservedDrifts: patchDetailsFromModel(m.Drifts)}
		} else if len(m.Diffs) > 0 {
			mc.DiffDetails = &v1beta1.DiffDetails{ObservationTime: at(m.ObservedAt), FirstDiffedObservedTime: at(m.DiffSince),
				ObservedInMemberClusterGeneration: copyPtr(m.MemberGeneration), ObservedDiffs: patchDetailsFromModel(m.Diffs)}
		}
		if m.BackReported != nil {
			if raw, err := json.Marshal(m.BackReported); err == nil {
				mc.BackReportedStatus = &v1beta1.BackReportedStatus{ObservedStatus: runtime.RawExtension{Raw: raw}, ObservationTime: at(m.ObservedAt)}
				if i < len(w.Status.ManifestConditions) {
					// An unchanged status keeps its observation time, so an unchanged
					// object writes nothing.
					if old := w.Status.ManifestConditions[i].BackReportedStatus; old != nil && sameJSON(old.ObservedStatus.Raw, raw) {
						mc.BackReportedStatus.ObservationTime = old.ObservationTime
					}
				}
			}
		}
		out.ManifestConditions = append(out.ManifestConditions, mc)
	}
	sum := agentk8s.SummariseStrategy(w.Name, applyType, results)
	if sum.Applied.Type != "" {
		out.Conditions = append(out.Conditions, timed(w.Status.Conditions, sum.Applied))
	}
	for _, c := range []*condition.Condition{sum.Available, sum.DiffReported} {
		if c != nil {
			out.Conditions = append(out.Conditions, timed(w.Status.Conditions, *c))
		}
	}
	return out
}
