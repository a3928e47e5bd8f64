// Package status owns the aggregation of a ClusterResourcePlacement's status: given the
// placement's generation and strategy, the latest policy snapshot's Scheduled condition and
// cluster decisions, the placement's bindings (with the conditions the rollout controller,
// the work generator and the member agent wrote on them), the latest resource snapshot, the
// selected resources, the previous status and the time, Placement returns the status a
// driver writes: the placement-level conditions, one placementStatuses entry per selected
// cluster, the entries of clusters a policy wants but could not get, selectedResources and
// observedResourceIndex. It performs no I/O and reads no clock. KubectlColumns renders the
// printer columns from a status.
//
// # Conditions (spec §18 STATUS-*, Appendix A)
//
// ClusterResourcePlacementScheduled copies the policy snapshot's Scheduled condition
// (reason and message are the scheduler's). The rollout chain follows it: RolloutStarted,
// Overridden, WorkSynchronized, then Applied and Available (ClientSideApply,
// ServerSideApply) or DiffReported (ReportDiff). The chain is gated: it stops after the first
// link that is not True, at the placement level and for each cluster. Scheduled does not
// gate: a PickN placement short of clusters is Scheduled=False and still reports the chain
// for the clusters it has.
//
// Per cluster, Scheduled=True/Scheduled reads "Successfully scheduled resources for placement
// in "<cluster>" (affinity score: A, topology spread score: T): <decision reason>", the newer,
// quoted form of DC-17. The chain copies the binding's conditions (type, status, reason,
// message). A condition that is missing, Unknown, or written for an older binding generation
// is Unknown with the Appendix A per-cluster message and the placement-level Unknown reason of
// its type (RolloutStartedUnknown, OverriddenPending, WorkSynchronizedUnknown, ApplyPending,
// ResourceAvailableUnknown, DiffReportingPending). A selected cluster without a live binding
// yet is RolloutStarted=Unknown.
//
// A binding still on an older resource snapshot than the latest has not rolled out the
// latest resources: a RolloutStarted=False written for its generation is shown as
// RolloutNotStartedYet "The rollout is being blocked by the rollout strategy"
// (ROLL-STUCK-STRICT); any other RolloutStarted is Unknown "In the process of deciding whether
// to roll out the latest resources or not". Each entry's observedResourceIndex is the latest
// index once the cluster has a binding.
//
// Under External (STAGED-CRP-EXTERNAL, as KubeFleet's current release reports it) a staged
// update run picks each cluster's index: an entry shows its binding's conditions as they are,
// with the binding's own index as observedResourceIndex, and a RolloutStarted not yet decided
// reads "… roll out some version of the resources or not". While the selected clusters
// observe no index or different ones, the placement's RolloutStarted is Unknown
// RolloutControlledByExternalController, with no observedResourceIndex, no selected resources
// and nothing after it; when they all observe one index the placement reports that index and
// its resources, and stays Unknown with that reason while a cluster's RolloutStarted is.
//
// The placement-level link is False when any cluster is False there (N = the False ones),
// else Unknown when any is Unknown (N = the Unknown ones), else True (N = every selected
// cluster). Available=True/WorkNotTrackable counts as True. Overridden=True reads
// NoOverrideSpecified when every cluster says so, OverriddenSucceeded otherwise. Messages are
// Appendix A's, the newer wording where the documentation has two ("… applied to N cluster(s)",
// "… in N cluster(s) are available now", "… in N target cluster(s)' namespaces").
//
// applicableClusterResourceOverrides and applicableResourceOverrides come from the binding
// once its RolloutStarted is True; failedPlacements (at most 100) once its Applied or
// Available is False.
//
// # Choices where the documents are silent or disagree
//
//   - No selected cluster (PickAll matching nothing, PickN whose only placement was
//     evicted): only Scheduled is reported, as newer upstream does; the older taint how-to
//     sample [Using Taints and Tolerations › Example MemberCluster with taint] showed the chain True for 0 clusters with legacy condition names.
//     This is what leaves AVAILABLE empty after an eviction [Evicting Resources and Setting up Disruption Budgets].
//   - Scheduling pending (no Scheduled condition on the snapshot, an Unknown one, or one
//     decided for an older placement generation): Scheduled=Unknown/SchedulePending
//     "Scheduling has not completed" and nothing else, no placementStatuses.
//   - Unfilled slots (SCHED-DECISIONS-STATUS): for PickN and PickFixed, min(wanted −
//     selected, unselected decisions) entries without clusterName, each
//     Scheduled=False/ScheduleFailed "<cluster> is not selected: <reason>", in the
//     scheduler's decision order, after the selected clusters. With no unselected decision
//     there is no entry (ROLL-STUCK-STRICT's sample lists only its two clusters).
//   - Entries are sorted by cluster name; upstream's order follows the snapshot.
//   - lastTransitionTime is kept from the previous status when a condition's status is
//     unchanged (per type, per cluster; unfilled entries by position), as condition.Set
//     does; a condition that reappears after being gated away gets Now.
package status
