package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Condition types on a ClusterResourcePlacement (STATUS-CRP-ORDER), in progression order.
const (
	TypePlacementScheduled        = "ClusterResourcePlacementScheduled"
	TypePlacementRolloutStarted   = "ClusterResourcePlacementRolloutStarted"
	TypePlacementOverridden       = "ClusterResourcePlacementOverridden"
	TypePlacementWorkSynchronized = "ClusterResourcePlacementWorkSynchronized"
	TypePlacementApplied          = "ClusterResourcePlacementApplied"
	TypePlacementAvailable        = "ClusterResourcePlacementAvailable"
	TypePlacementDiffReported     = "ClusterResourcePlacementDiffReported"
	// TypePlacementStatusSynced, only on a NamespaceAccessible placement, says whether its
	// ClusterResourcePlacementStatus copy is up to date (ReasonStatusSyncSucceeded) or
	// cannot be written (ReasonStatusSyncFailed: the namespace does not exist).
	TypePlacementStatusSynced = "ClusterResourcePlacementStatusSynced"
)

// Reasons of TypePlacementStatusSynced.
const (
	ReasonStatusSyncSucceeded = "StatusSyncSucceeded"
	ReasonStatusSyncFailed    = "StatusSyncFailed"
)

// Placement-level reasons (STATUS-CRP-REASONS, Appendix A). The Scheduled reasons are the
// scheduler's (condition.ReasonSchedulingPolicyFulfilled and …Unfulfilled), copied from the
// policy snapshot, plus ReasonSchedulePending while the scheduler has not decided.
const (
	ReasonSchedulePending = "SchedulePending"
	// ReasonInvalidResourceSelectors: the selectors cannot be honoured (a reserved namespace,
	// a kind that is never placed); the placement reports nothing else until they are fixed
	// (TSG-SCHED-RESERVED-NS).
	ReasonInvalidResourceSelectors = "InvalidResourceSelectors"

	ReasonRolloutStartedUnknown = "RolloutStartedUnknown"
	// ReasonRolloutControlledByExternalController: an External placement's RolloutStarted is
	// Unknown because a staged update run, not the rollout controller, decides what each
	// cluster gets, and the clusters do not (yet) all hold one resource snapshot index that
	// has started everywhere (KubeFleet's current release).
	ReasonRolloutControlledByExternalController = "RolloutControlledByExternalController"
	// RolloutStarted True and False use condition.ReasonRolloutStarted and
	// condition.ReasonRolloutNotStartedYet.

	ReasonOverriddenPending   = "OverriddenPending"
	ReasonOverriddenFailed    = "OverriddenFailed"
	ReasonOverriddenSucceeded = "OverriddenSucceeded"
	ReasonNoOverrideSpecified = "NoOverrideSpecified"

	ReasonWorkSynchronizedUnknown = "WorkSynchronizedUnknown"
	ReasonWorkNotSynchronizedYet  = "WorkNotSynchronizedYet"
	ReasonWorkSynchronized        = "WorkSynchronized"

	ReasonApplyPending   = "ApplyPending"
	ReasonApplyFailed    = "ApplyFailed"
	ReasonApplySucceeded = "ApplySucceeded"

	ReasonResourceAvailableUnknown = "ResourceAvailableUnknown"
	ReasonResourceNotAvailableYet  = "ResourceNotAvailableYet"
	ReasonResourceAvailable        = "ResourceAvailable"

	ReasonDiffReportingPending            = "DiffReportingPending"
	ReasonDiffReportingIncompleteOrFailed = "DiffReportingIncompleteOrFailed"
	ReasonDiffReportingCompleted          = "DiffReportingCompleted"
)

// Per-cluster reasons this package writes itself. Every other per-cluster reason is copied
// from the binding; an Unknown per-cluster condition takes the placement-level Unknown
// reason of its type (RolloutStartedUnknown, OverriddenPending, …), as the documentation's External
// sample shows for RolloutStarted [ClusterStagedUpdateRun TSG › CRP status without Staged Update Run].
const (
	ReasonScheduled      = "Scheduled"
	ReasonScheduleFailed = "ScheduleFailed"
)

// Fixed messages.
const (
	// MessageExternalNoIndex and MessageExternalMixedIndexes explain an External placement's
	// RolloutStarted=Unknown/RolloutControlledByExternalController; MessageExternalClusterUnknown
	// (with a cluster name) too, when every cluster holds one index but one has not started.
	MessageExternalNoIndex        = "Rollout is controlled by an external controller and no resource snapshot name is observed across clusters, probably rollout has not started yet"
	MessageExternalMixedIndexes   = "Rollout is controlled by an external controller and different resource snapshot versions are observed across clusters"
	MessageExternalClusterUnknown = "Rollout is controlled by an external controller and cluster %s is in RolloutStarted Unknown state"
	// MessageExternalRolloutPending is an External placement's per-cluster RolloutStarted=Unknown
	// message: the run may roll out any index, not necessarily the latest.
	MessageExternalRolloutPending = "In the process of deciding whether to roll out some version of the resources or not"
	MessageSchedulePending        = "Scheduling has not completed"
	// MessageRolloutBlocked is the per-cluster RolloutStarted=False message for a binding the
	// rollout strategy keeps on an older resource snapshot [CRP Rollout Failure TSG › ClusterResourcePlacement status].
	MessageRolloutBlocked = "The rollout is being blocked by the rollout strategy"
	MessageNoOverride     = "No override rules are configured for the selected resources"
)

// stage is one link of the rollout chain: its binding (per-cluster) type, its placement
// type, and the Appendix A texts. Placement-level formats take the cluster count N.
type stage struct {
	clusterType, placementType string

	trueReason, trueFormat       string
	falseReason, falseFormat     string
	unknownReason, unknownFormat string
	// clusterUnknown is the per-cluster Unknown message.
	clusterUnknown string
}

var (
	rolloutStarted = stage{
		clusterType: condition.TypeRolloutStarted, placementType: TypePlacementRolloutStarted,
		trueReason: condition.ReasonRolloutStarted, trueFormat: "All %d cluster(s) start rolling out the latest resource",
		falseReason: condition.ReasonRolloutNotStartedYet, falseFormat: "The rollout is being blocked by the rollout strategy in %d cluster(s)",
		unknownReason: ReasonRolloutStartedUnknown, unknownFormat: "There are still %d cluster(s) in the process of deciding whether to roll out the latest resources or not",
		clusterUnknown: "In the process of deciding whether to roll out the latest resources or not",
	}
	overridden = stage{
		clusterType: condition.TypeOverridden, placementType: TypePlacementOverridden,
		trueReason: ReasonOverriddenSucceeded, trueFormat: "The selected resources are successfully overridden in %d cluster(s)",
		falseReason: ReasonOverriddenFailed, falseFormat: "Failed to override resources in %d cluster(s)",
		unknownReason: ReasonOverriddenPending, unknownFormat: "There are still %d cluster(s) in the process of overriding the selected resources if there is any override defined",
		clusterUnknown: "In the process of overriding the selected resources if there is any override defined",
	}
	workSynchronized = stage{
		clusterType: condition.TypeWorkSynchronized, placementType: TypePlacementWorkSynchronized,
		trueReason: ReasonWorkSynchronized, trueFormat: "Works(s) are succcesfully created or updated in %d target cluster(s)' namespaces",
		falseReason: ReasonWorkNotSynchronizedYet, falseFormat: "There are %d cluster(s) which have not finished creating or updating work(s) yet",
		unknownReason: ReasonWorkSynchronizedUnknown, unknownFormat: "There are still %d cluster(s) in the process of creating or updating the work object(s) in the hub cluster",
		clusterUnknown: "In the process of creating or updating the work object(s) in the hub cluster",
	}
	applied = stage{
		clusterType: condition.TypeApplied, placementType: TypePlacementApplied,
		trueReason: ReasonApplySucceeded, trueFormat: "The selected resources are successfully applied to %d cluster(s)",
		falseReason: ReasonApplyFailed, falseFormat: "Failed to apply resources to %d cluster(s), please check the `failedPlacements` status",
		unknownReason: ReasonApplyPending, unknownFormat: "There are still %d cluster(s) in the process of applying the resources on the member cluster",
		clusterUnknown: "In the process of applying the resources on the member cluster",
	}
	available = stage{
		clusterType: condition.TypeAvailable, placementType: TypePlacementAvailable,
		trueReason: ReasonResourceAvailable, trueFormat: "The selected resources in %d cluster(s) are available now",
		falseReason: ReasonResourceNotAvailableYet, falseFormat: "The selected resources in %d cluster(s) are still not available yet",
		unknownReason: ReasonResourceAvailableUnknown, unknownFormat: "There are still %d cluster(s) in the process of checking the availability of the selected resources",
		// Appendix A's text ends with a space; kept for exact-string compatibility.
		clusterUnknown: "The availability of the selected resources is unknown yet ",
	}
	diffReported = stage{
		clusterType: condition.TypeDiffReported, placementType: TypePlacementDiffReported,
		trueReason: ReasonDiffReportingCompleted, trueFormat: "Diff reporting in %d cluster(s) has been completed",
		falseReason: ReasonDiffReportingIncompleteOrFailed, falseFormat: "Diff reporting in %d clusters is still in progress or has failed",
		unknownReason: ReasonDiffReportingPending, unknownFormat: "There are still %d cluster(s) in the process of checking for configuration differences",
		clusterUnknown: "Diff reporting has just started; its status is not yet to be known",
	}

	applyChain      = []stage{rolloutStarted, overridden, workSynchronized, applied, available}
	reportDiffChain = []stage{rolloutStarted, overridden, workSynchronized, diffReported}
)

// ConditionTypes returns the per-cluster (binding) condition types after Scheduled for an
// apply strategy type, in progression order: RolloutStarted, Overridden, WorkSynchronized,
// then Applied and Available, or DiffReported for a type that only reports (ReportDiff).
func ConditionTypes(applyType placement.ApplyType) []string {
	chain := chainFor(applyType)
	out := make([]string, len(chain))
	for i, s := range chain {
		out[i] = s.clusterType
	}
	return out
}

func chainFor(applyType placement.ApplyType) []stage {
	if applyType.ReportsOnly() {
		return reportDiffChain
	}
	return applyChain
}

// PlacementConditionType maps a per-cluster condition type (Scheduled, RolloutStarted, …)
// to its placement-level name (ClusterResourcePlacementScheduled, …).
func PlacementConditionType(clusterType string) string {
	return "ClusterResourcePlacement" + clusterType
}

// unknown is an Unknown condition; condition only builds True and False.
func unknown(typ, reason, message string) condition.Condition {
	return condition.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: reason, Message: message}
}
