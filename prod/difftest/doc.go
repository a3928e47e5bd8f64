// Package difftest owns the differential test of the simulator against the production hub:
// the same scenario file (scenarios/*.yaml) is run in the discrete-event simulator (package
// sim) and, on a real kube-apiserver and etcd, by the production hub (prod/hub) with
// stand-in member agents, and both must end in the same bindings and placement statuses.
//
// NewPlan reads a scenario into the ordered actions both sides can perform (members joining,
// apply, delete, label, taint, untaint), refusing scenarios that use what the production
// side cannot express (faults, machines, properties, a lossy network, ...). Simulate runs a
// plan in the simulator and returns the State after each phase (the actions of one instant)
// and at the end; ReadHub reads the same State from an API server. The test applies the
// phases to the real hub one by one and waits after each until the hub's State equals the
// simulator's, so the hub settles before the next phase, as the simulated time between
// steps lets the simulator settle. testenv.StandInAgent plays every member's agent in
// TestSimulatorAndHubAgree; TestSimulatorAndRealAgentsAgree plays some scenarios with real
// member agents (agentk8s/member) on member API servers of their own, and also checks that
// each member holds what the hub reports applied there.
package difftest
