package staged

import (
	"fmt"
	"strconv"
)

// Condition types of runs, stages, clusters, after-stage tasks and approval requests
// (STAGED-CONDITIONS, STAGED-AFTER-STAGE-TASKS).
const (
	// Run: Initialized, Progressing, Succeeded. Stage: Progressing, Succeeded.
	TypeInitialized = "Initialized"
	TypeProgressing = "Progressing"
	TypeSucceeded   = "Succeeded"
	// Cluster: Started, Succeeded.
	TypeStarted = "Started"
	// After-stage tasks.
	TypeApprovalRequestCreated  = "ApprovalRequestCreated"
	TypeApprovalRequestApproved = "ApprovalRequestApproved"
	TypeWaitTimeElapsed         = "WaitTimeElapsed"
	// Approval requests.
	TypeApproved         = "Approved"
	TypeApprovalAccepted = "ApprovalAccepted"
)

// Reasons (STAGED-CONDITIONS, Appendix A).
const (
	ReasonUpdateRunInitializedSuccessfully = "UpdateRunInitializedSuccessfully"
	ReasonUpdateRunInitializedFailed       = "UpdateRunInitializedFailed"
	// ReasonUpdateRunStarted is Progressing=True once execution starts (the documentation's reason).
	ReasonUpdateRunStarted = "UpdateRunStarted"
	// ReasonUpdateRunProgressing is Progressing=True again after a stuck cluster finished.
	ReasonUpdateRunProgressing = "UpdateRunProgressing"
	ReasonUpdateRunStuck       = "UpdateRunStuck"
	// ReasonUpdateRunStopped is Progressing=False while spec.state is Stop.
	ReasonUpdateRunStopped = "UpdateRunStopped"
	// MessageStopped explains a stopped run.
	MessageStopped = "the update run is stopped: no further cluster or stage starts until spec.state is Run"
	// ReasonUpdateRunWaiting is upstream vocabulary that this package never reports: the
	// documentation's samples keep Progressing=True/UpdateRunStarted while a stage waits for its
	// after-stage tasks.
	ReasonUpdateRunWaiting   = "UpdateRunWaiting"
	ReasonUpdateRunFailed    = "UpdateRunFailed"
	ReasonUpdateRunSucceeded = "UpdateRunSucceeded"

	ReasonStageUpdatingStarted   = "StageUpdatingStarted"
	ReasonStageUpdatingWaiting   = "StageUpdatingWaiting"
	ReasonStageUpdatingFailed    = "StageUpdatingFailed"
	ReasonStageUpdatingSucceeded = "StageUpdatingSucceeded"

	ReasonClusterUpdatingStarted   = "ClusterUpdatingStarted"
	ReasonClusterUpdatingFailed    = "ClusterUpdatingFailed"
	ReasonClusterUpdatingSucceeded = "ClusterUpdatingSucceeded"

	ReasonAfterStageTaskApprovalRequestCreated  = "AfterStageTaskApprovalRequestCreated"
	ReasonAfterStageTaskApprovalRequestApproved = "AfterStageTaskApprovalRequestApproved"
	ReasonAfterStageTaskWaitTimeElapsed         = "AfterStageTaskWaitTimeElapsed"
	ReasonApprovalRequestApprovalAccepted       = "ApprovalRequestApprovalAccepted"

	// ReasonRolloutStartedUnknown is the per-cluster RolloutStarted=Unknown reason of an
	// External placement whose cluster no run has updated yet.
	ReasonRolloutStartedUnknown = "RolloutStartedUnknown"
)

// Messages (STAGED-INIT, STAGED-FAIL, STAGED-EXEC, STAGED-CRP-EXTERNAL).
const (
	MessageInitialized = "ClusterStagedUpdateRun initialized successfully"
	// MessageAborted is the Progressing=False message of a failed run.
	MessageAborted = "The stages are aborted due to a non-recoverable error"
	// MessageRolloutStartedUnknown is the per-cluster RolloutStarted=Unknown message.
	MessageRolloutStartedUnknown = "In the process of deciding whether to roll out the latest resources or not"
	// MessageRolloutStarted starts a binding's RolloutStarted=True message; a run appends
	// ", resourceSnapshotIndex: I, clusterStagedUpdateRun: R".
	MessageRolloutStarted = "Detected the new changes on the resources and started the rollout process"

	// PrefixCannotContinue starts every failure message.
	PrefixCannotContinue = "cannot continue the ClusterStagedUpdateRun: "
	// PrefixInitClientError: the run cannot initialize, or cannot go on, because of what a
	// user did (the placement, the strategy or the index it names).
	PrefixInitClientError = PrefixCannotContinue + "failed to initialize the clusterStagedUpdateRun: failed to process the request due to a client error: "
	// PrefixUnexpected: the hub's state is not what the run wrote or planned (preemption by
	// a concurrent run, a status that does not match its snapshot).
	PrefixUnexpected = PrefixCannotContinue + "unexpected behavior which cannot be handled by the controller: "
	// PrefixSchedulingChanged: the scheduling decision changed after initialization.
	PrefixSchedulingChanged = PrefixCannotContinue + "the scheduling decision changed after the clusterStagedUpdateRun was initialized: "

	// DetailPlacementNotFound is the detail when the placement is gone.
	DetailPlacementNotFound = "parent clusterResourcePlacement not found"
)

// RolloutStartedMessage is the binding's RolloutStarted=True message written by run.
func RolloutStartedMessage(index int, run string) string {
	return fmt.Sprintf("%s, resourceSnapshotIndex: %d, clusterStagedUpdateRun: %s", MessageRolloutStarted, index, run)
}

// StuckMessage is the run's Progressing=False/UpdateRunStuck message.
func StuckMessage(cluster, stage string) string {
	return fmt.Sprintf("The updateRun is stuck waiting for cluster %s in stage %s to finish updating, please check crp status for potential errors", cluster, stage)
}

func itoa(i int) string { return strconv.Itoa(i) }
