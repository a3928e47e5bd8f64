//go:build fleetsim_mutants

package mutant

// Mutant is one planted bug: its switch's name (area.slip), the package it is in and the
// slip it plants, as a reader of reports/fuzz.md needs it.
type Mutant struct {
	Name, Package, Slip string
}

// All is the catalogue of mutants, in report order. Every name appears in exactly one
// place in the decision code, as `mutant.On("name")` (TestCatalogueMatchesSource); a
// mutant may guard more than one line of that one slip (the scheduler's slow and fast
// taint filters).
var All = []Mutant{
	// Scheduler: filters, scores, topology skew, PickN counts.
	{"scheduler.pickNOneExtra", "model/scheduler", "PickN picks one cluster more than numberOfClusters minus the kept ones (need off by one)"},
	{"scheduler.scaleInOneShort", "model/scheduler", "a PickN scale-in unschedules one cluster fewer than the surplus (off by one)"},
	{"scheduler.firstTaintIgnored", "model/scheduler", "the taint filter tests `i > 0` for the first untolerated taint, so a member's first taint is never seen"},
	{"scheduler.topologySkewOffByOne", "model/scheduler", "a DoNotSchedule topology constraint lets the skew reach maxSkew+1 (`>` against maxSkew+1)"},
	{"scheduler.affinityWeightSign", "model/scheduler", "a preferred cluster-affinity term without a property sorter subtracts its weight instead of adding it"},
	// Rollout: maxUnavailable, maxSurge, the unavailable period.
	{"rollout.maxUnavailablePlusOne", "model/rollout", "maxUnavailable is resolved one too high"},
	{"rollout.maxSurgePlusOne", "model/rollout", "one binding more than target + maxSurge may hold resources"},
	{"rollout.leavingNotSubtracted", "model/rollout", "ready bindings being deleted are not subtracted from those that may be disrupted"},
	{"rollout.failedLeftOutOfSurge", "model/rollout", "failed bindings are left out of the surge count (upstream's bug, fixed in fleetsim)"},
	{"rollout.deletingCountedReady", "model/rollout", "a Bound binding being deleted counts as ready whatever its conditions"},
	{"rollout.unavailablePeriodIgnored", "model/rollout", "an untrackable workload counts as ready at once, without waiting unavailablePeriodSeconds"},
	{"rollout.readyAnyGeneration", "model/rollout", "readiness ignores the Available condition's observedGeneration (a stale True counts)"},
	// Staged runs: order, approvals, maxConcurrency.
	{"staged.maxConcurrencyPlusOne", "model/staged", "a stage updates one cluster more at once than maxConcurrency (`>` for `>=`)"},
	{"staged.maxConcurrencyRoundsUp", "model/staged", "a percentage maxConcurrency rounds up instead of down"},
	{"staged.nextStageEarly", "model/staged", "a stage that has not succeeded does not stop the run: the next stage starts"},
	{"staged.beforeStageApprovalIgnored", "model/staged", "a before-stage approval does not hold the stage's clusters back"},
	{"staged.afterStageApprovalIgnored", "model/staged", "an after-stage approval does not hold the stage's success back"},
	{"staged.timedWaitSkipped", "model/staged", "an after-stage TimedWait completes at once"},
	// Eviction and disruption budgets.
	{"eviction.minAvailableOffByOne", "model/eviction", "a minAvailable budget allows one eviction more than available - minAvailable"},
	{"eviction.unavailableNotSubtracted", "model/eviction", "a maxUnavailable budget does not subtract the clusters already unavailable"},
	{"eviction.pickAllBudgetAccepted", "model/eviction", "a PickAll placement's budget with maxUnavailable or a percentage minAvailable is not refused as misconfigured"},
	{"eviction.notPropagatedEvicted", "model/eviction", "an eviction of a binding whose resources were not propagated yet is executed instead of blocked"},
	// Membership health.
	{"membership.heartbeatTimeoutIgnored", "model/membership", "a member whose heartbeats stopped stays Healthy (the timeout case missed)"},
	{"membership.leaveIgnoresBindings", "model/membership", "a leaving member is removed while bindings are still on it"},
	{"membership.unhealthyReportedHealthy", "model/membership", "a member whose agent reports it unhealthy is Healthy (the case missed)"},
	// Fleet units: Conflicts, MachineOf, Global, Replaces.
	{"units.conflictsOneDirection", "model/units", "Conflicts is checked in one direction only (A conflicts with B, not B with A)"},
	{"units.conflictsIgnoreGlobals", "model/units", "a unit may be scheduled next to a global unit it conflicts with"},
	{"units.machineOfIgnored", "model/units", "the MachineOf filter admits every machine"},
	{"units.replacesIgnored", "model/units", "a unit may be scheduled on a machine running a unit that replaces it"},
	{"units.globalMetadataIgnored", "model/units", "a global unit runs on machines whose metadata do not match its MachineMetadata"},
	{"units.globalIgnoresScheduled", "model/units", "a global unit runs next to a scheduled unit it conflicts with"},
}
