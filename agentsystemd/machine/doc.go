// Package machine is `fleet agent`'s loop: it registers its Machine on the hub,
// heartbeats in the Machine's status, works out which units this machine should run (units
// the engine scheduled here, and global units that run here: agentsystemd.DesiredOn, which
// the simulator's agents call too), runs agentsystemd.Reconcile against the machine's real
// systemd (package agentsystemd/dbus) and publishes what systemd then reports.
//
// A round runs every Interval, at once when a Unit changes on the hub (a watch), and when
// systemd reports a property change of one of the agent's units. The heartbeat, with the unit
// states, is written every MachineTTL/3 and whenever the states change.
package machine
