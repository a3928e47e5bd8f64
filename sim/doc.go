// Package sim is the discrete-event simulator: a virtual clock, one seeded random source per
// component, a queue of pending events, an in-memory hub store, the hub's controllers
// (membership, policy snapshots, scheduler, rollout) driven through the same pure decisions
// as production, simulated member agents (join, heartbeats, leave) and fault injection
// (crash, partition, heal, clock skew, network delay and loss, hub restart).
//
// Everything runs on one goroutine. Events are ordered by (virtual time, sequence number);
// every processed event is folded into the trace hash, so the same scenario, seed and binary
// give the same hash on any GOMAXPROCS.
//
// Time: components read time from Clock, a clock.Clock whose Now is the loop's virtual time.
// The loop does not call clock.Mock.Set per event because Mock.Set yields for a real
// millisecond each call, which would make a day of 5,000 members (7.2 M events) take hours.
package sim
