// Package whatif previews a change to a fleet: it starts the simulator from a scenario that
// holds the fleet's current state (as `fleetsim snapshot` writes it, with `initial:`
// bindings), lets it settle, applies the change (KubeFleet manifests to create or update,
// or timeline steps: deletes, member taints, labels, leaves and failures, a staged run
// started), runs on, and reports per placement the clusters added, kept and removed with
// the scheduler's reasons, per cluster the manifests it will receive as a diff against what
// it holds now, the rollout's timeline (time to Available, peak unavailable, budget waits)
// and the invariants the change breaks.
//
// The prediction is the simulator's, so it holds exactly as far as the simulator and the
// production hub agree (prod/difftest) and the snapshot captured the fleet (fleetsim
// snapshot lists what it could not).
package whatif
