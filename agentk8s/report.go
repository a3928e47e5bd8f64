package agentk8s

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Manifest-level reasons and messages of KubeFleet's work applier (WORK-API, AVAIL-*): a
// manifest condition's reason is what became of the manifest. The apply failure and
// not-yet-available reasons keep the older agent's spellings, as KubeFleet's does.
const (
	ReasonManifestApplied          = "Applied"
	MessageManifestApplied         = "Manifest has been applied successfully"
	ReasonManifestApplyFailed      = "ManifestApplyFailed"
	ReasonManifestAvailable        = "Available"
	MessageManifestAvailable       = "Manifest is available"
	ReasonManifestNotAvailableYet  = "ManifestNotAvailableYet"
	MessageManifestNotAvailableYet = "Manifest is not yet available; Fleet will check again later"
	ReasonManifestNotTrackable     = "NotTrackable"
	MessageManifestNotTrackable    = "Manifest's availability is not trackable; Fleet assumes that the applied manifest is available"
	ReasonManifestNoDiffFound      = "NoDiffFound"
	MessageManifestNoDiffFound     = "No diff has been found between the hub cluster and the member cluster"
	ReasonManifestFoundDiff        = "FoundDiff"
	MessageManifestFoundDiff       = "Diff has been found between the hub cluster and the member cluster"
	ReasonManifestDiffFailed       = "Failed"
)

// Work-level reasons and messages of KubeFleet's work applier (WORK-API). Whether a
// manifest's availability could be tracked keeps the older reason, WorkNotTrackable
// (condition.ReasonWorkNotTrackable), which the hub's rollout reads on bindings too.
const (
	ReasonWorkAllManifestsApplied         = "AllManifestsApplied"
	ReasonWorkNotAllManifestsApplied      = "SomeManifestsAreNotApplied"
	ReasonWorkAllManifestsAvailable       = "AllManifestsAvailable"
	ReasonWorkNotAllManifestsAvailable    = "SomeManifestsAreNotAvailable"
	ReasonWorkAllManifestsDiffReported    = "AllManifestsDiffReported"
	ReasonWorkNotAllManifestsDiffReported = "SomeManifestsHaveNotReportedDiff"
)

// The member agent's Joined and Healthy reasons on its InternalMemberCluster (MEMBER-*),
// as KubeFleet's member agent writes them.
const (
	ReasonMemberJoined    = "InternalMemberClusterJoined"
	ReasonMemberLeft      = "InternalMemberClusterLeft"
	ReasonMemberHealthy   = "InternalMemberClusterHealthy"
	ReasonMemberUnhealthy = "InternalMemberClusterUnhealthy"
)

// SummariseStrategy summarises the results of a work applied under an apply strategy type:
// a type that only reports (ReportDiff) reports DiffReported, the others Applied and
// Available (Summarise).
func SummariseStrategy(work string, applyType placement.ApplyType, results []ManifestResult) placement.WorkReport {
	if applyType.ReportsOnly() {
		return summariseDiff(results)
	}
	return Summarise(work, results)
}

// ManifestConditions are the conditions of one manifest in the Work's status: DiffReported
// under ReportDiff; else Applied and, once applied, Available.
func ManifestConditions(m ManifestResult) []condition.Condition {
	switch {
	case m.ReportDiff && m.DiffError != "":
		return []condition.Condition{condition.False(condition.TypeDiffReported, ReasonManifestDiffFailed, m.DiffError)}
	case m.ReportDiff && len(m.Diffs) > 0:
		return []condition.Condition{condition.True(condition.TypeDiffReported, ReasonManifestFoundDiff, MessageManifestFoundDiff)}
	case m.ReportDiff:
		return []condition.Condition{condition.True(condition.TypeDiffReported, ReasonManifestNoDiffFound, MessageManifestNoDiffFound)}
	case m.ApplyError != "":
		reason := m.Reason
		if reason == "" {
			reason = ReasonManifestApplyFailed
		}
		return []condition.Condition{condition.False(condition.TypeApplied, reason, m.ApplyError)}
	}
	applied := condition.True(condition.TypeApplied, ReasonManifestApplied, MessageManifestApplied)
	switch {
	case m.Tracking == Untrackable:
		return []condition.Condition{applied, condition.True(condition.TypeAvailable, ReasonManifestNotTrackable, MessageManifestNotTrackable)}
	case m.Tracking == Trackable && !m.Available:
		return []condition.Condition{applied, condition.False(condition.TypeAvailable, ReasonManifestNotAvailableYet, MessageManifestNotAvailableYet)}
	}
	return []condition.Condition{applied, condition.True(condition.TypeAvailable, ReasonManifestAvailable, MessageManifestAvailable)}
}

func summariseDiff(results []ManifestResult) placement.WorkReport {
	var r placement.WorkReport
	reported := 0
	for _, m := range results {
		if m.DiffError == "" {
			reported++
		}
	}
	addDetails(&r, results)
	c := condition.True(condition.TypeDiffReported, ReasonWorkAllManifestsDiffReported, "All the specified manifests have reported diff")
	if reported < len(results) {
		c = condition.False(condition.TypeDiffReported, ReasonWorkNotAllManifestsDiffReported,
			fmt.Sprintf("Failed to report diff on all manifests (%d of %d manifests have reported diff)", reported, len(results)))
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

// Summarise turns manifest results of the named work into the Work's conditions as
// KubeFleet's work applier writes them (WORK-API), with the manifests that failed, drifted
// or differ: Applied (AllManifestsApplied, or SomeManifestsAreNotApplied with the count),
// and once applied Available (AllManifestsAvailable; WorkNotTrackable when an available
// manifest's availability cannot be tracked; SomeManifestsAreNotAvailable with the count).
// Available is nil when the work is not applied. The hub folds the reports of a binding's
// Works into the binding's conditions (model/hub.BindingReport).
func Summarise(work string, results []ManifestResult) placement.WorkReport {
	var r placement.WorkReport
	addDetails(&r, results)
	applied, available, untrackable := 0, 0, false
	for _, m := range results {
		cs := ManifestConditions(m)
		switch {
		case m.ApplyError != "":
			addFailed(&r, m.Identifier, cs[0])
			continue
		case len(cs) > 1 && cs[1].Status != metav1.ConditionTrue:
			addFailed(&r, m.Identifier, cs[1])
		default:
			available++
		}
		applied++
		if m.Tracking == Untrackable {
			untrackable = true
		}
	}
	n := len(results)
	if applied < n {
		r.Applied = condition.False(condition.TypeApplied, ReasonWorkNotAllManifestsApplied,
			fmt.Sprintf("Failed to apply all manifests (%d of %d manifests are applied)", applied, n))
		return r
	}
	r.Applied = condition.True(condition.TypeApplied, ReasonWorkAllManifestsApplied, "All the specified manifests have been applied")
	var a condition.Condition
	switch {
	case available < n:
		a = condition.False(condition.TypeAvailable, ReasonWorkNotAllManifestsAvailable,
			fmt.Sprintf("Some manifests are not available (%d of %d manifests are available)", available, n))
	case untrackable:
		a = condition.True(condition.TypeAvailable, condition.ReasonWorkNotTrackable, "Some of the applied manifests cannot be tracked for availability")
	default:
		a = condition.True(condition.TypeAvailable, ReasonWorkAllManifestsAvailable, "All of the applied manifests are available")
	}
	r.Available = &a
	return r
}

func addFailed(r *placement.WorkReport, id placement.ResourceIdentifier, c condition.Condition) {
	if len(r.Failed) < placement.MaxFailedPlacements {
		r.Failed = append(r.Failed, placement.FailedPlacement{ResourceIdentifier: id, Condition: c})
	}
}
