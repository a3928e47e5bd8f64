// Package staged owns the decisions of KubeFleet's staged updates, the rollouts of
// placements whose strategy type is External: the v1beta1 ClusterStagedUpdateStrategy,
// ClusterStagedUpdateRun and ClusterApprovalRequest types with their API validation, and
// Decide, one reconcile of a run as a pure function.
//
// Decide reads the run, its strategy, its placement, the placement's bindings, the members'
// labels, the resource snapshot indexes that exist, the override snapshots per cluster, the
// run's approval requests, the other runs and the time, and returns a Plan: the run's new
// status, binding updates and deletions, approval requests to create or accept, and when to
// look again. It reads no clock and performs no I/O, and its result does not depend on the
// order of any input slice.
//
// A run initializes once: it snapshots the strategy, records the latest policy snapshot
// index, the observed cluster count and the placement's apply strategy, puts every
// scheduled cluster in exactly one stage (ordered by the integer value of the stage's
// sortingLabelKey, then by name), lists the Unscheduled clusters in the deletion stage, and
// checks that concurrent runs of the placement use an identical strategy. It then runs the
// stages in order, one cluster at a time: Started, binding updated to the run's resource
// snapshot, Succeeded once the binding is Applied and Available at its new generation.
// When every cluster of a stage succeeded, the stage stops progressing and its after-stage
// tasks (a TimedWait counted from that instant, an Approval through a ClusterApprovalRequest)
// run in parallel; the stage succeeds when all have completed, and the next one starts at
// the same instant. The deletion stage deletes the Unscheduled bindings last. A cluster that
// is not done after five minutes makes the run report itself stuck. A deleted placement, a
// placement no longer External, a new policy snapshot, a changed cluster count or set, or a
// binding changed by someone else during the wait fails the run for good.
//
// Decide moves a run as far as it can at one instant: the reconcile that sees the last task
// of a stage complete also starts the next stage and its first cluster, and a stage whose
// tasks are already complete succeeds in the reconcile that sees its last cluster succeed.
// This reproduces the timestamps of the documentation's samples (STAGE-TIMING-1).
package staged
