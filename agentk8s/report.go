package agentk8s

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// ManifestResult is what happened to one manifest of a Work on the member.
type ManifestResult struct {
	Identifier placement.ResourceIdentifier
	// ApplyError is set when the apply failed; Reason is the condition reason then
	// (AppliedManifestFailedReason, ManifestsAlreadyOwnedByOthers, ...).
	ApplyError string
	Reason     string
	Tracking   Tracking
	// Available is meaningful for trackable manifests that applied.
	Available bool
	// ReportDiff: the manifest was only compared (apply strategy ReportDiff); DiffError is
	// set when the comparison failed.
	ReportDiff bool
	DiffError  string
	// Drifts and Diffs are the drifted and differing fields found (Decide).
	Drifts []placement.PatchDetail
	Diffs  []placement.PatchDetail
	// MemberGeneration is the generation of the object on the member, nil when none.
	MemberGeneration *int64
	// ObservedAt is when the agent looked; DriftSince and DiffSince when it first saw the
	// drifts or diffs it reports (the agent remembers them across checks).
	ObservedAt, DriftSince, DiffSince time.Time
	// BackReported is the object's status as the member holds it, wrapped with its
	// apiVersion and kind (BackReport), when the Work's report-back strategy is Mirror;
	// nil otherwise.
	BackReported map[string]any
}

// BackReport is what a member agent reports back for an object under the report-back
// strategy rs (strategy.reportBackStrategy): nil unless rs mirrors and the object exists on
// the member; otherwise the object's apiVersion, kind and status (absent when the object
// has none), as copied into a Work's manifestConditions[].backReportedStatus.observedStatus.
func BackReport(rs *placement.ReportBackStrategy, live *unstructured.Unstructured) map[string]any {
	if !rs.Mirrors() || live == nil {
		return nil
	}
	out := map[string]any{"apiVersion": live.GetAPIVersion(), "kind": live.GetKind()}
	if st, ok := live.Object["status"]; ok {
		out["status"] = runtime.DeepCopyJSONValue(st)
	}
	return out
}

// Manifest-level reasons and messages (WORK-API, AVAIL-*).
const (
	ReasonManifestApplyFailed     = "AppliedManifestFailedReason"
	ReasonManifestAvailable       = "ManifestAvailable"
	ReasonManifestNotAvailableYet = "ManifestNotAvailableYet"
	ReasonManifestNotTrackable    = "ManifestNotTrackable"
)

// Work-level DiffReported reasons (APPLY-REPORTDIFF).
const (
	ReasonAllWorkDiffReported    = "AllWorkHaveDiffReported"
	ReasonNotAllWorkDiffReported = "NotAllWorkHaveDiffReported"
	ReasonManifestDiffReported   = "ManifestDiffReported"
	ReasonManifestDiffFailed     = "ManifestDiffReportFailed"
)

// SummariseStrategy summarises the results of a work applied under an apply strategy type:
// a type that only reports (ReportDiff) reports DiffReported, the others Applied and
// Available (Summarise).
func SummariseStrategy(work string, applyType placement.ApplyType, results []ManifestResult) placement.WorkReport {
	if applyType.ReportsOnly() {
		return summariseDiff(work, results)
	}
	return Summarise(work, results)
}

func summariseDiff(work string, results []ManifestResult) placement.WorkReport {
	var r placement.WorkReport
	ok := true
	for _, m := range results {
		if m.DiffError != "" {
			ok = false
		}
	}
	addDetails(&r, results)
	c := condition.True(condition.TypeDiffReported, ReasonAllWorkDiffReported, "Diff reporting has been completed in all corresponding work objects")
	if !ok {
		c = condition.False(condition.TypeDiffReported, ReasonNotAllWorkDiffReported, fmt.Sprintf("Diff reporting failed in work object %s", work))
	}
	r.DiffReported = &c
	return r
}

// addDetails lists the drifted and diffed manifests (at most MaxFailedPlacements each).
func addDetails(r *placement.WorkReport, results []ManifestResult) {
	for _, m := range results {
		if len(m.Drifts) > 0 && len(r.Drifted) < placement.MaxFailedPlacements {
			g := int64(0)
			if m.MemberGeneration != nil {
				g = *m.MemberGeneration
			}
			r.Drifted = append(r.Drifted, placement.DriftedPlacement{ResourceIdentifier: m.Identifier.Copy(), ObservationTime: m.ObservedAt,
				FirstDriftedObservedTime: m.DriftSince, TargetClusterObservedGeneration: g, ObservedDrifts: m.Drifts})
		}
		if len(m.Diffs) > 0 && len(r.Diffed) < placement.MaxFailedPlacements {
			var g *int64
			if m.MemberGeneration != nil {
				v := *m.MemberGeneration
				g = &v
			}
			r.Diffed = append(r.Diffed, placement.DiffedPlacement{ResourceIdentifier: m.Identifier.Copy(), ObservationTime: m.ObservedAt,
				FirstDiffedObservedTime: m.DiffSince, TargetClusterObservedGeneration: g, ObservedDiffs: m.Diffs})
		}
	}
}

// Summarise turns manifest results of the named work into what the agent reports to the
// hub, which copies it into the binding's Applied and Available conditions and
// failed, drifted and diffed placements (STATUS-PER-CLUSTER-REASONS,
// STATUS-FAILED-PLACEMENTS). Available is nil when the work is not applied: later
// conditions are omitted.
func Summarise(work string, results []ManifestResult) placement.WorkReport {
	var r placement.WorkReport
	addDetails(&r, results)
	applied, available, untrackable := true, true, false
	for _, m := range results {
		switch {
		case m.ApplyError != "":
			applied = false
			reason := m.Reason
			if reason == "" {
				reason = ReasonManifestApplyFailed
			}
			addFailed(&r, m.Identifier, condition.False(condition.TypeApplied, reason, m.ApplyError))
		case m.Tracking == Untrackable:
			untrackable = true
		case m.Tracking == Trackable && !m.Available:
			available = false
			addFailed(&r, m.Identifier, condition.False(condition.TypeAvailable, ReasonManifestNotAvailableYet, "Manifest is trackable but not available yet"))
		}
	}
	if !applied {
		r.Applied = condition.False(condition.TypeApplied, condition.ReasonNotAllWorkApplied, fmt.Sprintf("Work object %s is not applied", work))
		return r
	}
	r.Applied = condition.True(condition.TypeApplied, condition.ReasonAllWorkApplied, "All corresponding work objects are applied")
	var a condition.Condition
	switch {
	case !available:
		a = condition.False(condition.TypeAvailable, condition.ReasonNotAllWorkAvailable, fmt.Sprintf("Work object %s is not available", work))
	case untrackable:
		a = condition.True(condition.TypeAvailable, condition.ReasonWorkNotTrackable, fmt.Sprintf("The availability of work object %s is not trackable", work))
	default:
		a = condition.True(condition.TypeAvailable, condition.ReasonAllWorkAvailable, "All corresponding work objects are available")
	}
	r.Available = &a
	return r
}

func addFailed(r *placement.WorkReport, id placement.ResourceIdentifier, c condition.Condition) {
	if len(r.Failed) < placement.MaxFailedPlacements {
		r.Failed = append(r.Failed, placement.FailedPlacement{ResourceIdentifier: id, Condition: c})
	}
}
