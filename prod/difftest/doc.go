// Package difftest owns the differential test of the simulator against the production hub:
// the same scenario file (scenarios/*.yaml) is run in the discrete-event simulator (package
// sim) and, on a real kube-apiserver and etcd, by the production hub (prod/hub) with
// stand-in or real member agents, and both must reach the same State after every phase:
// bindings, placement statuses, member conditions, Works (by name, with their manifests
// after overrides), staged update runs, approval requests and evictions.
//
// NewPlan reads a scenario into the ordered actions both sides can perform (members joining,
// apply, delete, label, taint, untaint, fail, heal, approve, workload behaviours and edits on
// members), refusing scenarios that use what the production side cannot express (faults,
// machines, properties, a lossy network, clock skew, a hub restart). Simulate runs a plan in
// the simulator and returns the State just before each phase's successor (the last at the
// end); ReadHub reads the same State from an API server.
//
// Time: the hub and every agent of a test fleet share one mock clock, starting at the
// simulator's start. The test advances it from phase to phase in steps: to each timer's
// deadline in order, at most half the heartbeat window at a time, waiting after each step
// for the agents to heartbeat and the hub to settle; so a one-hour staged wait costs
// seconds. At the second before the next phase the hub must hold the simulator's State, and
// keep it for a moment (it never retries until it happens to agree). Agents poll in wall
// time (latency only) and stamp heartbeats and reports with the mock clock.
//
// testenv.StandInAgent plays every member's agent in TestSimulatorAndHubAgree, reporting per
// the scenario's workload steps (the simulator's own rule); TestSimulatorAndRealAgentsAgree
// plays scenarios with real member agents (agentk8s/member) on member API servers of their
// own, with the member's workload controllers played by the test, and also checks that each
// member holds what the hub reports applied there.
package difftest
