// Package invariants holds the fleet invariants a scenario's `always` list names, checked
// against any implementation of the hub's store (the simulator's, or a production hub's
// through the same model/hub.Store interface): they read only what the store holds plus
// the bindings the last step created, and are written from the spec independently of the
// decision code in model/, so that a mistake there is not repeated by the check.
//
// The rollout budget checks, which compare the state after an event with a copy from
// before it, still live with the simulator (sim/rollout_invariants.go, `rolloutBudgets`).
package invariants
