// Package eviction owns the decisions about ClusterResourcePlacementEviction and
// ClusterResourcePlacementDisruptionBudget (KubeFleet spec §17, EVICT-* and PDB-*): the two
// v1beta1 types, their API validation (ValidateEviction, ValidateEvictionUpdate,
// ValidateBudget), the budget accounting (Allowed) and the one-shot reconcile of an eviction
// (Decide), which returns the Valid and Executed conditions and the binding to delete. It
// performs no I/O and reads no clock; the driver writes the conditions and deletes the binding.
//
// # Reconcile once
//
// An eviction is reconciled once and is then terminal: invalid, valid and executed, or valid
// and not executed (EVICT-SEMANTICS). Decide returns the zero Decision for an eviction already
// reconciled, even if the placement or binding appeared or changed since: to retry, delete
// and re-create the eviction. Validation runs in the spec's order (placement missing,
// placement deleting, PickFixed, no binding on the cluster, more than one binding), then the
// execution rules in the spec's order (binding deleting, binding failed or ReportDiff,
// binding not present, no budget, misconfigured budget, budget accounting). See Decide.
//
// # Budget accounting
//
// available = bindings of the placement (every state, deleting included) whose Available
// condition is True at their generation; total = bindings of the placement. With
// maxUnavailable: allowed = ceil(maxUnavailable of N) − (total − available); with
// minAvailable: allowed = available − ceil(minAvailable of N); N is the PickN policy's
// numberOfClusters and an integer is absolute. The eviction executes iff allowed > 0.
// Involuntary disruptions (failed workloads, scheduler removals, deleted bindings) are not
// guarded but count against the budget, through available and total.
//
// # Open points of the spec, and what this package does
//
//  1. minAvailable 0 with nothing available. The accounting formula gives
//     allowed = 0 − 0 = 0 and would block, but the API says minAvailable 0 means a voluntary
//     disruption is allowed at any time (PDB-API). We follow the API: a minAvailable that
//     comes to 0 (0, "0", "0%", or a percentage of numberOfClusters 0) protects nothing and
//     allowed = total, exactly as with no budget. The eviction still waits for the binding
//     to be Bound: the budget never overrides the earlier rules.
//  2. Re-picking after an eviction. An executed eviction deletes the binding and nothing else.
//     It does not stop the scheduler from picking the same cluster again, and for PickAll it
//     will while the cluster stays eligible: that is the documented behaviour
//     (EVICT-SEMANTICS, [Eviction and Placement Disruption Budget › Overview; Eviction and Placement Disruption Budget › ClusterResourcePlacementEviction]), and not this package's decision. Taint the
//     cluster (NoSchedule, not tolerated by the placement) before creating the eviction;
//     the how-to does exactly that (DC-15; it says PickAll but shows PickN with
//     numberOfClusters 1, and the eviction executes either way).
//
// Further choices where the spec is silent:
//   - A budget the API would have rejected (both or neither field set, a negative integer, a
//     string outside the IntOrString pattern) cannot be interpreted and blocks the eviction
//     with the misconfigured message, whatever the placement type.
//   - A string of digits ("2") is the integer 2, as the IntOrString pattern allows; only a
//     value ending in "%" is a percentage. So minAvailable "2" is fine for PickAll.
//   - The reported numbers count every binding of the placement, as the spec's formula says,
//     including bindings being deleted and Unscheduled ones still holding their cluster.
//   - An empty placement type is PickAll, the API default. A budget on a PickFixed placement
//     is a no-op (Allowed returns 0, not misconfigured): the eviction is invalid anyway.
//   - Decide fills Available, Total and Allowed for every valid eviction, consulted or not,
//     so drivers and explanations can always show them; with no budget Allowed = total.
//   - Bindings are matched to the eviction by target cluster only; the caller passes the
//     placement's bindings. Nil entries are skipped. The result does not depend on their
//     order.
package eviction
