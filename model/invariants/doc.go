// Package invariants holds the fleet invariants, checked against any implementation of the
// hub's store (Reader: every model/hub.Store is one, so the simulator's store and the
// production hub's decision state, read from its informer cache, both are). They are
// written from the spec independently of the decision code in model/ (they never call the
// scheduler, the rollout or the eviction decisions), so that a mistake there is not
// repeated by the check.
//
//   - Checks, by the names a scenario's `always` list accepts: state checks that read the
//     store after a step plus the bindings the step created (one binding per cluster,
//     PickN within its limit, no new binding on an untolerated taint, bindings only on
//     known members).
//   - Rollout: the rollout budgets (maxUnavailable, maxSurge, tolerated and known picks,
//     eviction budgets), which compare the state after a step with a copy of the state
//     before it (`rolloutBudgets` in scenarios).
//   - Converged: once faults stop, every rolling-update placement has converged.
//
// The simulator checks them after every event (sim.WatchRollout, sim.CheckInvariant), so
// fuzz campaigns do; `fleet hub --check-invariants` checks them after every decision.
package invariants
