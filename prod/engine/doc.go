// Package engine runs CoreOS fleet's engine in `fleet hub`: the shared scheduling decision
// (model/units.Schedule: least-loaded, every [X-Fleet] option, global units, machine loss after
// the TTL) over the Unit and Machine objects of fleet.fleetsim.io, under the fenced engine
// lease of model/units.
//
// The engine is one decision over every unit (the trigger table's UnitEngine controller with
// scope AllUnits). Watches of Units and Machines classify each change with model/triggers
// (UnitChanged, MachineChanged, MachineHeartbeat) and wake the engine when the table says so;
// a heartbeat wakes nothing, since a machine is lost when its TTL runs out, and the engine
// looks again at the moment the next live machine would expire.
//
// The lease is a coordination.k8s.io Lease (default fleet-system/fleetsim-unit-engine) that
// stores model/units.Lease: holder, token (spec.leaseTransitions) and expiry. It is acquired
// and renewed with the shared Acquire/Renew and written with the resourceVersion read, so two
// engines never both win a tenure. Before each scheduling write the engine reads the Lease
// again from the API server and checks the plan's fence with units.Admit; the Unit's status
// records the token it was written under (status.fenceToken), and every write carries the
// resourceVersion the decision read, so a decision on stale objects is never applied.
// The engine runs only in the elected hub replica (it needs leader election); the lease
// fences a replica that lost the election while paused.
//
// What a pass decides is model/units.Rounds, the round the simulator's engine makes too:
// liveness by the machine TTL, the schedule, and when the next machine would be lost. This
// package keeps the I/O: the watches, the lease, the reads and the fenced writes. The
// conversions between the API objects and the model are in apis/convert.
package engine
