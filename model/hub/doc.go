// Package hub owns the hub's controllers, written once: membership, placement (policy and
// resource snapshots), scheduler, rollout, work generator, eviction and staged update runs.
// Each reconcile reads its inputs from a Store, makes the pure decision of its model package
// (membership, placement, resources, scheduler, rollout, override, eviction, staged, status)
// and writes the plan back, reporting what it did through an Env (events, triggers from the
// shared triggers table, timed requeues, notifications to member agents).
//
// The simulator implements Store and Env over its in-memory store and event queue; the
// production hub implements them over the Kubernetes API. Nothing here reads a clock or does
// I/O of its own, so both worlds run the same reconcilers.
package hub
