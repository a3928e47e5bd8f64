package units

import (
	"time"

	"github.com/fleetsim/fleetsim/model/member"
)

// MachinePresence is what the registry holds about one machine, before the machine TTL is
// applied: its metadata and when its agent last beat. The simulator builds it from a member
// ([PresenceOfMember]), production from a Machine object (apis/convert); [MachinePresence.Alive]
// is the one TTL rule both apply.
type MachinePresence struct {
	ID       string
	Metadata map[string]string
	// Reported is false until the machine's agent has reported once; LastHeartbeat means
	// nothing before that.
	Reported bool
	// LastHeartbeat is when the registry last heard from the machine's agent.
	LastHeartbeat time.Time
	// Leaving is true once the machine is being removed from the registry.
	Leaving bool
}

// PresenceOfMember returns the presence of a member of kind Machine: ID = Name, Metadata =
// Labels, Reported = its agent has reported, Leaving = it was asked to leave.
func PresenceOfMember(m *member.Member) MachinePresence {
	return MachinePresence{ID: m.Name, Metadata: m.Labels, Reported: m.Agent.Present, LastHeartbeat: m.Agent.LastHeartbeat, Leaving: m.Leaving}
}

// Expires returns when p's presence lapses under the machine TTL ttl (ttl <= 0 means
// [DefaultMachineTTL]): its last heartbeat plus ttl. It is the zero time for a machine that
// is not present at all: its agent never reported, or it is leaving.
func (p MachinePresence) Expires(ttl time.Duration) time.Time {
	if !p.Reported || p.Leaving {
		return time.Time{}
	}
	if ttl <= 0 {
		ttl = DefaultMachineTTL
	}
	return p.LastHeartbeat.Add(ttl)
}

// Alive reports whether p is alive at now: present, and its last heartbeat less than ttl old
// (so at [MachinePresence.Expires] it is already lost). This is fleet's rule: a machine key
// expires agent_ttl after the last beat, with no grace period beyond that.
func (p MachinePresence) Alive(now time.Time, ttl time.Duration) bool {
	exp := p.Expires(ttl)
	return !exp.IsZero() && now.Before(exp)
}

// MachinesAt returns the engine's view of the machines at now, in the order given: each
// presence's ID and metadata, alive by [MachinePresence.Alive].
func MachinesAt(ps []MachinePresence, now time.Time, ttl time.Duration) []MachineState {
	out := make([]MachineState, 0, len(ps))
	for _, p := range ps {
		out = append(out, MachineState{ID: p.ID, Metadata: p.Metadata, Alive: p.Alive(now, ttl)})
	}
	return out
}
