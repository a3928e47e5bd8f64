// Package scheduler owns the placement scheduling decision: given a placement's latest policy
// snapshot, the fleet's members, the placement's bindings and the time, it returns a Plan of
// bindings to create, update and unschedule, the per-cluster decisions with their scores and
// reasons, and the Scheduled condition. It performs no I/O and reads no clock.
//
// The decision runs KubeFleet's framework stages: batch (how many to pick), filter
// (ClusterEligibility, SamePlacementAntiAffinity, TaintToleration, ClusterAffinity,
// TopologySpreadConstraints with DoNotSchedule), score (affinity weights and property
// sorters, topology spread scores), sort (topology score, affinity score, then the greater
// name) and a bind step that only plans. Under topology spread constraints clusters are
// picked one at a time with scores recomputed after each pick, exactly as upstream's
// one-pick-per-cycle loop, but one decision makes every pick it can.
//
// Results never depend on the order of the members or bindings given: every tie is broken
// by name. A Scheduler reuses its scratch memory between decisions so that deciding over
// thousands of members allocates nothing per member; it is not safe for concurrent use.
package scheduler
