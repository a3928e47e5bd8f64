// Package units owns the pure decisions about CoreOS-fleet units: their desired states and
// the transitions between them, where the engine schedules them, where global units run,
// which units run twice, and the engine lease with its fencing token. It reads no clock,
// does no I/O and never depends on the order of its inputs or on map iteration.
// The unit file itself (parsing, hashing, names, [X-Fleet] options) is package
// [github.com/fleetsim/fleetsim/model/unitfile].
//
// # Units and desired states
//
// A [Unit] is a name, a file, its hash, its resolved [X-Fleet] options and a desired state:
// inactive, loaded or launched ([State]). Everything but the desired state is immutable:
// [Submit] of a different file under an existing name is an [*ImmutableError] naming both
// hashes. [Transition] applies the documentation's fleetctl table (submit → inactive, load → loaded,
// start → launched, stop → loaded, unload → inactive, destroy → none) with its valid previous
// states; [Apply] adds the implicit submit of load and start. Templates ("web@.service")
// can only be inactive; [Instantiate] makes an instance unit from one.
//
// # Scheduling
//
// [Schedule] is the engine's decision: given the machines, the units with their current
// machines and the lease, it returns a [Plan] of unschedule and schedule writes, each with a
// reason, and the units it could not place, each with a reason. It is organised as filter
// plugins, one per [X-Fleet] option that restricts placement (MachineID, MachineMetadata,
// MachineOf, Conflicts, Replaces; see [Filters]), and one score, least-loaded: the fewest
// units, global units included, then the smaller machine ID. Rejections read like
// "machine 3a1b… does not match MachineMetadata region=us-east (it has region=eu-west)".
//
// Global units are never scheduled; each agent runs them if the machine matches their
// MachineMetadata and nothing there conflicts with them ([GlobalTargets], [GlobalsOn]).
// Scheduled units win over global ones: a global unit never runs where a unit it conflicts
// with is scheduled, and a unit is never scheduled where a global unit it conflicts with
// runs.
//
// # Upstream bugs fixed here (see docs/compatibility.md)
//
//   - Map-order scheduling. Upstream ranged over a Go map, so which of two conflicting units
//     was evicted, and whether a MachineOf follower landed in the same pass as its leader,
//     was random. Here units are processed by name, machines by ID. Of two scheduled units
//     that conflict on one machine, the one with the greater name is unscheduled (and
//     rescheduled elsewhere in the same decision if a machine fits).
//   - Followers a pass late. Rounds repeat until nothing changes, so a MachineOf follower is
//     placed in the same decision as its leader, and is unscheduled and placed again in the
//     same decision when its leader moves or is unscheduled.
//   - Replaces without constraint checks. Upstream moved the replaced unit to the least-loaded
//     other machine without checking the replaced unit's own MachineID, MachineMetadata,
//     Conflicts or MachineOf. Here the replaced unit is placed like any other unit: on the
//     least-loaded machine that passes all its filters (never the machine of the unit that
//     replaces it), or it stays unscheduled with the reason.
//   - Circular Replaces. Upstream ignored only pairs replacing each other; here every
//     Replaces relation on a cycle of any length among the units is ignored, as the documentation
//     says ("a circular replacement between multiple units is not allowed"). So is one on a
//     cycle through MachineOf: a unit that replaces a unit it follows, directly or through
//     other followers, would displace itself (unit.ParseXFleet only rejects the direct
//     case); honouring it would move units back and forth forever.
//   - No fencing. Upstream's lease index was not checked on writes, so an ex-leader paused
//     past its lease could still schedule units. Here [Lease.Token] grows with every new
//     tenure, a plan carries the token it was decided under ([Plan.Fence]), and the store
//     refuses writes whose token is not the current lease's ([Admit]).
//   - Unvalidated desired states: [ParseState] accepts only the three states.
//
// # Machine loss and partitions
//
// A machine that is not alive (its presence lapsed after the machine TTL:
// [MachinePresence.Alive]) loses its units: they are unscheduled ("went away") and
// rescheduled elsewhere in the same decision, as fleet does. There is no grace period beyond
// the TTL and no make-before-break.
//
// # The engine's round
//
// [Rounds] is one round of the engine as both engines run it, the simulator's and `fleet
// hub`'s: the machines' liveness at the round's time, the schedule on them, the machines lost,
// and when the next alive machine would lapse ([RoundPlan.LookAgain]), the moment the engine
// must look again although nothing else changed. [PlanRound] is the same round as a pure
// function. Reading the registry, the lease and the writes are the drivers'.
//
// fleet does not fence machines either. A machine that is merely partitioned from the
// registry keeps running its units until it reconnects and its agent finds them scheduled
// elsewhere and stops them. Until then the same unit runs twice: once on the partitioned
// machine and once where it was rescheduled. [Duplicates] finds such units in the reported
// unit states, for reports and invariants. Applications that must not run twice need their
// own lock, as upstream advised.
//
// # Choices where the documents are silent or disagree
//
//   - An operation whose target is the unit's desired state already is a no-op, not an error
//     (re-submitting the same file, stop of a loaded unit, unload of an inactive one).
//     Otherwise the documentation's valid previous states are enforced, so load of a launched unit
//     is an error ("use stop").
//   - Inactive global units count nowhere: they neither run nor add load.
//   - Two conflicting global units: the one with the smaller name runs.
//   - A unit that lands on a machine running a unit it replaces displaces it; the replacing
//     unit does not seek out the replaced unit's machine (least-loaded still decides).
//   - Schedule reports an unplaced unit's reason quoting at most three machines.
//   - A machine absent from the input and a machine present but not alive are both "went
//     away", with different reasons.
//   - MachineID matches the full ID or the 8-character short ID, as upstream's code did.
//   - Reasons name machines by their full ID (fleetctl shortens them for display).
//   - Duplicate entries in the input (a machine ID or unit name given twice) are collapsed:
//     the first after sorting wins (for machines, an alive entry).
//
// # Cost
//
// One decision sorts its input, matches each distinct Conflicts glob against the sorted
// unit names once, and keeps the alive machines ordered by (load, ID), so placing a unit
// costs the machines it has to skip plus a few binary searches. Rounds repeat only while
// something changes; followers of followers and displaced units need a round or two more.
// A safety bound on rounds guards against a configuration that never settles; none is
// known after the cycle rule above, and a unit left over by it would be reported
// unschedulable with "scheduling did not settle". Once a decision settles, every alive
// machine rejects each unit left unplaced, so its reason is rendered from the first three.
//
// [Engine] keeps a decision between decisions and returns the same plan as [Schedule] for
// the same input, but a change reschedules only what it affects: a machine lost, back or
// relabelled and a unit's desired state change are applied in place; the keep pass checks
// only the units of machines that changed, and an unplaced unit is tried only on machines
// that changed since it last found none. Adding or removing units or machines re-indexes
// (O(units + machines)). [Engine.Sync] takes a whole input and reports the differences.
package units
