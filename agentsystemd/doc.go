// Package agentsystemd is the decision core of the fleet agent that runs on a systemd machine
// (CoreOS fleet's agent). The simulator and the production agent share it.
//
// It owns:
//
//   - the agent's inputs: DesiredUnit (what the registry schedules to this machine, with a
//     TargetState of inactive, loaded or launched) and CurrentUnit (what is on this machine:
//     the hash of the unit file on disk and systemd's LOAD/ACTIVE/SUB states);
//   - the desired set, DesiredOn: from the registry's machines and units (model/units), the
//     units this machine runs, those the engine scheduled here and the global units that
//     run here, each with its target state;
//   - the reconcile decision, Decide: desired and current units → an ordered Plan of Tasks
//     (stop, unload, load, daemon-reload, start), each with a reason a person can read;
//   - the execution rule, Apply: run a plan's tasks in order and stop at the first failure;
//   - the agent's memory across rounds, Memory: per unit, the target state and content it has
//     acted on (Acted), which Decide reads (start once per desired-state change) and which is
//     fleet's current state of the unit;
//   - unit state reporting: ReportState and ReportStates (what the agent publishes for each
//     unit), fleet's current state (CurrentState: what the agent acted on, with systemd's view
//     when it has not acted yet), and ReportChanged and DiffReports, which decide what must be
//     published again or removed;
//   - SimSystemd, a deterministic in-memory systemd that runs Tasks and reports CurrentUnits.
//     The discrete-event simulator drives it, and the tests use it.
//
// It does no I/O: no D-Bus, no files, no clock, no goroutines, no randomness. The production
// driver (D-Bus via go-systemd, unit files under /run/fleet/units) implements the Systemd
// interface, and the simulator uses SimSystemd. Timing (the 5 s reconcile tick, the 1 s systemd
// poll, the 24 s republish period) belongs to the drivers.
//
// # Plan order
//
// Decide emits tasks in five phases. Each phase is sorted by unit name. A unit has at most one
// task per phase.
//
//  1. stop: units that are started but should not be (not desired, target inactive, target
//     loaded), and started units whose unit file is about to be rewritten;
//  2. unload: remove the unit file (and its link) of units that are not desired or have target
//     inactive;
//  3. load: write the unit file and link it, for desired units whose file is missing, whose
//     hash differs from the desired one, or that systemd does not know (load state not-found);
//  4. daemon-reload: exactly one, if and only if phase 2 or 3 is not empty or a unit reports
//     NeedDaemonReload (a previous round failed between a file change and its reload);
//  5. start: units with target launched that are not started (inactive or failed) or that
//     were stopped in phase 1 to be rewritten.
//
// # Differences from upstream fleet (see docs/compatibility.md)
//
//   - Upstream ordered tasks Unload, Load, ReloadUnitFiles, Stop, Start, with its unload stopping
//     the unit internally, and sorted them with an unstable sort. Here stop is its own first phase,
//     so a unit is always stopped before its file is removed or rewritten. Because Apply stops at
//     the first failure, a failed stop also prevents the unload (upstream issue #1216), and the stop
//     no longer races the daemon-reload that follows the removal (issue #1000). The order within a
//     phase is by name, so plans are deterministic.
//   - Decisions read systemd's state, and the agent's memory only for what it cannot tell:
//     whether it already acted on a unit's target state. As upstream, the reported current
//     state is the acted-on state (a failed unit stays launched), and a failed unit is started
//     once per desired-state change, not in every round. Unlike upstream, a unit systemd lost
//     (not-found) or whose file changed is loaded again, and after an agent restart, when the
//     memory is empty, a unit already in its target state in systemd needs no task: nothing is
//     reloaded or restarted needlessly (a failed one is started once).
//   - A start that cannot succeed is not planned: a masked unit is never started, and a unit
//     whose current file systemd rejected (load state error or bad-setting) is started only
//     when this plan rewrites the file. Otherwise, since Apply stops at the first failure, such
//     a unit would block every start after it in every round. Its state report shows the problem.
//   - DiffReports removes only this machine's states. Upstream's RemoveUnitState deleted the
//     unit's state for every machine (issues #723, #1172).
package agentsystemd
