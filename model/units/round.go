package units

import (
	"slices"
	"time"
)

// RoundInput is everything one round of the unit engine reads: the registry's machines and
// units as the engine just read them, the lease it holds, and the time. The engine's driver
// gathers it; the round reads no clock.
type RoundInput struct {
	// Now is the driver's clock at the round; machine liveness is judged at Now.
	Now time.Time
	// MachineTTL is fleet's agent_ttl (<= 0 means [DefaultMachineTTL]).
	MachineTTL time.Duration
	// Machines is every machine the registry knows, alive or not.
	Machines []MachinePresence
	// Units is every unit in the registry with the machine it is scheduled to (see
	// [Input.Units]).
	Units []Job
	// Lease is the engine lease the driver holds for this round; it stamps the plan.
	Lease Lease
}

// RoundPlan is one round's decision: what to write, what expired, and when to look again.
type RoundPlan struct {
	// Plan is [Schedule]'s plan for the units on the machines as alive at Now, under Lease:
	// the writes, each with its reason, fenced by Plan.Fence (the store admits them with
	// [Admit]), and the units left without a machine, each with its reason. A lost
	// machine's units are unscheduled from it and placed elsewhere in this same plan.
	Plan Plan
	// Lost lists, sorted, the registered machines that are not alive at Now (silent past
	// the TTL, leaving, or never reported): the unit states their agents published expire
	// with them.
	Lost []string
	// LookAgain is when to make a round again even if nothing changes: the moment the
	// first alive machine's presence lapses (at which its units move), unless it beats
	// first. Zero if no machine is alive. A driver may look a little later (timer slack),
	// never earlier to any effect, and also on its own schedule (renewing its lease).
	LookAgain time.Time
}

// Rounds makes the unit engine's rounds, keeping the scheduling decision between them (an
// [Engine]) so that a round reschedules only what changed since the last. The zero value is
// ready; the first round is a whole decision. Each round's result is [PlanRound]'s for the
// same input, whatever rounds came before.
//
// Both engines drive it: the simulator's (sim/units.go, reconcileEngine) and `fleet hub`'s
// (prod/engine, Engine.Reconcile). They keep only their I/O: reading the registry, the
// lease, writing the plan, and waking at LookAgain.
//
// A Rounds is not safe for concurrent use.
type Rounds struct {
	kept *Engine
}

// Decide makes one round: the machines' liveness at in.Now by the TTL
// ([MachinePresence.Alive]), the scheduling decision on them ([Schedule]), the machines
// lost, and the next time a machine would be lost.
func (r *Rounds) Decide(in RoundInput) RoundPlan {
	sched := Input{Machines: MachinesAt(in.Machines, in.Now, in.MachineTTL), Units: in.Units}
	if r.kept == nil {
		r.kept = NewEngine(sched)
	} else {
		// Sync reports what changed since the last round (a machine lost, a unit
		// submitted); Schedule then reschedules only what that affects.
		r.kept.Sync(sched)
	}
	out := RoundPlan{Plan: r.kept.Schedule(in.Lease)}
	alive := map[string]bool{}
	for _, m := range sched.Machines {
		alive[m.ID] = alive[m.ID] || m.Alive
	}
	for _, m := range sched.Machines {
		if !alive[m.ID] {
			out.Lost = append(out.Lost, m.ID)
		}
	}
	slices.Sort(out.Lost)
	out.Lost = slices.Compact(out.Lost)
	for _, p := range in.Machines {
		if !p.Alive(in.Now, in.MachineTTL) {
			continue
		}
		if exp := p.Expires(in.MachineTTL); out.LookAgain.IsZero() || exp.Before(out.LookAgain) {
			out.LookAgain = exp
		}
	}
	return out
}

// PlanRound is one round of the unit engine as a pure function of in: what [Rounds.Decide]
// returns for in, without a decision kept from earlier rounds.
func PlanRound(in RoundInput) RoundPlan {
	var r Rounds
	return r.Decide(in)
}
