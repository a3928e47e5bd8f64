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
// one-pick-per-cycle loop, but one decision makes every pick it can. Each filter and score
// plugin is one entry of the plugin table (plugins.go), which every stage reads, from the
// filter of one member to the columnar fast paths below; scheduler.go runs the stages, and
// every file says in its first comment which one concern it holds.
//
// Results never depend on the order of the members or bindings given: every tie is broken
// by name. A Scheduler reuses its scratch memory between decisions so that deciding over
// thousands of members allocates nothing per member; it is not safe for concurrent use.
//
// A Scheduler keeps a fleet index between decisions (fleet.go): each member's label values
// and property values in dense columns, and which members carry taints. Every decision
// first brings it up to date from the members it is given, re-reading only members whose
// label, property or resource maps were replaced or whose taints changed (the stores
// replace those maps rather than write them in place; a caller that writes in place calls
// Forget). The decision then compiles its selectors once, selects the members a required
// term matches as a set operation over the columns, filters only those by eligibility and
// taints, scores candidates from the columns, and ranks them by packed integer keys. It
// touches the other members only to report why they were filtered, up to MaxDecisions.
// internal/reference keeps the decision as it was before the index, as the oracle the
// property tests compare with.
//
// Stores can tell a Scheduler what changed instead of letting it look (types.go):
// Input.MembersVersion and Input.BindingsVersion skip the index sync and recall steady
// PickAll decisions; Input.Status, a member.StatusFeed the store tells of every agent
// status write, lets the Scheduler keep each member's status as a column (status.go):
// it re-reads only the members the feed names, and keeps each member's eligibility
// between decisions while the time stays within the window of cut-offs that decided it.
// A PickN decision keeps, per policy, what it derives from the index alone (pickncache.go:
// the members the static filters admit, the required terms selecting them and their taints
// tolerated, their affinity scores, their ranking order and their groups of topology
// domains), so it meets its candidates already ranked; a candidate that holds no binding
// is then a position in that order, not a memo (ranked.go), and only the picked and
// reported ones are looked at. All of it
// is derived state: property tests rebuild it from scratch after random changes and
// compare, and compare every decision with internal/reference.
package scheduler
