// Package rollout owns the RollingUpdate rollout decision of a placement: given the
// placement's strategy, its bindings, the latest resource snapshot, the override snapshots
// each cluster must get, the apply strategy and the time, Decide returns a Plan of bindings
// to bind (Scheduled → Bound, or Bound updated in place), Unscheduled bindings to delete,
// RolloutStarted conditions to write, when to look again and the budget numbers behind every
// choice. It performs no I/O and reads no clock; Now is an input. Placements whose strategy
// type is External are left alone (a staged update run drives them) and get an empty Plan.
//
// The decision follows the spec's ROLL-ALGORITHM (upstream KubeFleet's rollout controller):
//
//   - the target N is numberOfClusters (PickN), the number of cluster names (PickFixed) or
//     the number of clusters holding a live (Scheduled or Bound, not deleting) binding
//     (PickAll); maxUnavailable and maxSurge default to 25% and percentages of N round up;
//   - a binding is ready when its Available condition is True at its generation and either
//     its reason is not WorkNotTrackable or it turned True at least unavailablePeriodSeconds
//     (default 60) ago (a ReportDiff binding is also ready once DiffReported is True at its
//     generation, since that apply type reports no Available condition);
//   - maxToRemove = (ready − ready-and-being-deleted) − (N − maxUnavailable) bounds the
//     Unscheduled bindings deleted plus the Bound bindings updated in place, Unscheduled
//     ones first; Bound bindings that failed to apply are updated outside that budget, as
//     they are unavailable already;
//   - maxToAdd = N + maxSurge − (Bound and Unscheduled bindings that have not failed) bounds
//     the Scheduled bindings bound. Surge only ever brings in newly scheduled clusters: an
//     in-place update never counts against it and never adds a cluster.
//
// Drivers apply Bind before Delete, so a cluster moving elsewhere gets its new bindings
// written before old ones disappear (ROLL-EXAMPLE-2).
//
// # Deterministic choices
//
// Upstream picks "some" candidates in list order, which comes from the API server and is
// not deterministic (the docs say which cluster updates first is non-deterministic). Here
// every pick is made by target cluster name ascending, then binding name: Unscheduled
// bindings to delete, then stale Bound bindings to update, then Scheduled bindings to bind.
// Every list in a Plan is sorted the same way, and the Plan never depends on the order of
// the bindings given.
//
// # Fixed upstream bugs
//
//  1. A rollout can shrink to zero. Upstream, with a target of 0 (PickN numberOfClusters 0,
//     or PickAll once every cluster is unscheduled), Unscheduled bindings that are not
//     ready can never be deleted, because deletions are only allowed against ready ones.
//     Here, when N is 0 nothing needs to stay available, so every Unscheduled binding is
//     deleted (and any stale Bound one updated) at once.
//  2. One binding being deleted no longer stalls the placement. Upstream, a binding with a
//     deletion timestamp makes the whole placement wait until it is gone. Here it is just
//     counted: it still holds resources (it counts against maxSurge unless it failed) and,
//     if it was ready, it is about to become unavailable (it is subtracted from the ready
//     bindings that may be disrupted). Every other binding is still rolled within budget.
//     The one exception is a Scheduled binding for the very cluster the deleting binding is
//     leaving: binding it would put new works next to ones being cleaned up, so that single
//     cluster waits for the deletion to finish.
//
// When the placement has no resource snapshot yet, Scheduled bindings wait (their
// RolloutStarted condition becomes Unknown) and Bound bindings are left as they are;
// Unscheduled bindings are still deleted within budget.
package rollout
