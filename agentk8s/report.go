package agentk8s

import (
	"fmt"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/hub"
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
}

// Manifest-level reasons and messages (WORK-API, AVAIL-*).
const (
	ReasonManifestApplyFailed     = "AppliedManifestFailedReason"
	ReasonManifestAvailable       = "ManifestAvailable"
	ReasonManifestNotAvailableYet = "ManifestNotAvailableYet"
	ReasonManifestNotTrackable    = "ManifestNotTrackable"
)

// Summarise turns manifest results of the named work into what the agent reports to the
// hub, which copies it into the binding's Applied and Available conditions and
// failedPlacements (STATUS-PER-CLUSTER-REASONS, STATUS-FAILED-PLACEMENTS). Available is nil
// when the work is not applied: later conditions are omitted.
func Summarise(work string, results []ManifestResult) hub.WorkReport {
	var r hub.WorkReport
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

func addFailed(r *hub.WorkReport, id placement.ResourceIdentifier, c condition.Condition) {
	if len(r.Failed) < placement.MaxFailedPlacements {
		r.Failed = append(r.Failed, placement.FailedPlacement{ResourceIdentifier: id, Condition: c})
	}
}
