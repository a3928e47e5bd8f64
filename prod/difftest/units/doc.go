// Package units owns the differential test of fleet units on machines: every library
// scenario of CoreOS fleet units (scenarios/fleet-*.yaml, found by name, so a new one joins
// on its own) is run in the simulator (package sim) and in production, and the two must agree
// after every phase.
//
// Production is the real thing at every layer a unit crosses: a real kube-apiserver and etcd
// as the hub's store, the unit engine of `fleet hub` (prod/engine) under a controller-runtime
// manager, and one `fleet agent` (agentsystemd/machine) per machine, each driving a real
// systemd of its own (a systemd-nspawn sandbox started by agentsystemd/machine/dbus/sdtest,
// which keeps systemd out of the host's cgroup root) over D-Bus. The engine and every agent
// share one clock.Mock: the test moves it forward, so a 30 s machine TTL or a 15 minute
// scenario costs a few minutes of wall time at most.
//
// NewPlan reads a scenario into phases (the actions of one instant: machines joining, fleetctl
// commands, crash, partition, heal and metadata changes), refusing what production cannot be
// told to do. Simulate plays a plan in the simulator and returns the State just before each
// next phase and at the end. The test plays the same phases on the production side: the
// fleetctl commands go through model/units.ApplyCommand, as the simulator's do, and are
// written as Unit objects; a crash stops the machine's agent and empties its systemd (a
// rebooted machine's /run is empty); a partition stops only the agent, so its units keep
// running; a heal starts the agent again. After every clock step the test waits until
// production is quiet (no object written and no systemd state changed for a while; after a
// step that fires the agents' tickers, each agent has made a round) and, at each phase's
// end, compares once: each unit's desired state, its target machine and the machines whose
// systemd really runs it. It never retries until the two happen to agree.
package units
