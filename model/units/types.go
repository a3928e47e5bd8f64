package units

import (
	"time"

	"github.com/fleetsim/fleetsim/model/member"
)

// DefaultMachineTTL is fleet's agent_ttl: a machine whose last heartbeat is this old is gone.
const DefaultMachineTTL = 30 * time.Second

// MachineState is the engine's view of one machine.
type MachineState struct {
	// ID is the machine ID: normally 32 hex digits (/etc/machine-id), but any string works.
	ID string
	// Metadata is the machine's single-valued metadata (key → value).
	Metadata map[string]string
	// Alive is false once the machine's presence lapsed (its last heartbeat is older than
	// the machine TTL). Units on a machine that is not alive are rescheduled; see
	// [MachinesFromMembers] for the rule.
	Alive bool
}

// MachinesFromMembers returns the machine view of the fleet's members of kind Machine (other
// kinds are skipped): ID = Name, Metadata = Labels, and Alive by [MachinePresence.Alive] of
// [PresenceOfMember]: the agent has reported, the machine is not leaving and its last
// heartbeat is less than ttl old at now (ttl <= 0 means [DefaultMachineTTL]).
func MachinesFromMembers(members []*member.Member, now time.Time, ttl time.Duration) []MachineState {
	var out []MachineState
	for _, m := range members {
		if m == nil || m.Kind != member.KindMachine {
			continue
		}
		out = append(out, MachineState{ID: m.Name, Metadata: m.Labels, Alive: PresenceOfMember(m).Alive(now, ttl)})
	}
	return out
}

// Job is one unit as the engine sees it: the unit and the machine it is currently scheduled
// to ("" if unscheduled). fleet's engine calls this a job.
type Job struct {
	Unit    *Unit
	Machine string
}

// Input is everything one scheduling decision reads.
type Input struct {
	// Machines is every machine the registry knows, alive or not.
	Machines []MachineState
	// Units is every unit in the registry, once each, with its current target machine.
	// Global units are included too: they count towards load and take part in conflicts.
	Units []Job
	// Lease is the engine lease under which the decision is made; its token stamps the plan.
	Lease Lease
}

// Action is one registry write: schedule Unit to Machine, or unschedule it from Machine.
type Action struct {
	Unit    string
	Machine string
	Reason  string
}

// Unplaced is a unit that wants a machine (desired state loaded or launched) and has none
// once the plan is applied, with the reason.
type Unplaced struct {
	Unit   string
	Reason string
}

// Plan is the outcome of one scheduling decision. Apply it by writing every Unschedule,
// then every Schedule, each stamped with Fence. A unit that moves appears in both.
type Plan struct {
	// Fence is the stamp for the plan's writes: the lease the decision was made under.
	Fence FencedWrite
	// Unschedule lists units to take off their current machine, sorted by unit name.
	Unschedule []Action
	// Schedule lists units to assign to a machine, sorted by unit name.
	Schedule []Action
	// Unschedulable lists units left without a machine, sorted by unit name. It includes
	// active units with invalid names or options and active templates. Global units
	// appear only when invalid: they are never scheduled (see [GlobalTargets]).
	Unschedulable []Unplaced
}

// Empty reports whether the plan writes nothing.
func (p Plan) Empty() bool { return len(p.Unschedule) == 0 && len(p.Schedule) == 0 }

// Plugin names: the scheduling filters, one per [X-Fleet] option that restricts placement,
// and the score. Filters run in this order; the first that rejects a machine gives the
// reason.
const (
	PluginMachineID       = "MachineID"
	PluginMachineMetadata = "MachineMetadata"
	PluginMachineOf       = "MachineOf"
	PluginConflicts       = "Conflicts"
	PluginReplaces        = "Replaces"
	// PluginLeastLoaded is the score: fewest units (global units included), then the
	// smaller machine ID.
	PluginLeastLoaded = "LeastLoaded"
)

// Filters returns the names of the filter plugins in the order they run.
func Filters() []string {
	names := make([]string, len(filters))
	for i, f := range filters {
		names[i] = f.name
	}
	return names
}

// Apply returns the jobs after the plan is applied: each scheduled unit's Machine set, each
// unscheduled one's cleared. The input is not modified.
func (p Plan) Apply(jobs []Job) []Job {
	to := make(map[string]string, len(p.Schedule)+len(p.Unschedule))
	for _, a := range p.Unschedule {
		to[a.Unit] = ""
	}
	for _, a := range p.Schedule {
		to[a.Unit] = a.Machine
	}
	out := make([]Job, len(jobs))
	for i, j := range jobs {
		out[i] = j
		if j.Unit == nil {
			continue
		}
		if m, ok := to[j.Unit.Name]; ok {
			out[i].Machine = m
		}
	}
	return out
}
