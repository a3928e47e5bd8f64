package sim

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/agentsystemd"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/triggers"
	"github.com/fleetsim/fleetsim/sim/trace"
)

// agent is a simulated member agent. Its state is the agent's own; the hub learns of it
// only through messages that cross the simulated network.
type agent struct {
	idx    int32
	name   string
	rec    *memberRecord
	period time.Duration
	// skew is added to the agent's clock: its heartbeats carry its own time.
	skew time.Duration
	// epoch changes whenever the agent (re)starts or stops heartbeating; events of an older
	// epoch are cancelled.
	epoch       uint32
	crashed     bool
	partitioned bool
	joined      bool
	healthy     bool
	// sent is when the heartbeat on its way (of the current epoch) was sent.
	sent time.Duration
	// beat is what the agent's last delivered heartbeat wrote into its member's
	// LastHeartbeat, as time since the start (beatAt); beatSet says there is one. Health
	// checks compare durations instead of times while the member still holds beatAt.
	// (Next to the fields every heartbeat reads: one cache line fewer.)
	beat    time.Duration
	beatAt  time.Time
	beatSet bool
	// systemd is the machine's simulated systemd (machines only).
	systemd *agentsystemd.SimSystemd
	// properties and resources are reported with the first heartbeat after joining.
	properties map[string]resource.Quantity
	resources  member.ResourceUsage
	// objects are the objects on the member cluster, by objectKey: what the agent applied
	// and what scenarios created or edited there directly (clusters only).
	objects map[string]*unstructured.Unstructured
	// fields records which field manager owns which field of objects (fieldmanagers.go).
	fields fieldOwners
	// since remembers when the agent first saw the drifts or diffs it reports, by work,
	// object and kind of finding.
	since agentk8s.Sightings
	// abandoned names the deleted Works whose placement was deleted with the Abandon
	// delete strategy: the agent drops its ownership of what they applied but deletes
	// nothing (what an AppliedWork's record tells the real agent).
	abandoned map[string]bool
}

// lastBeat is m's LastHeartbeat as time since the start, when it is the one this agent's
// last heartbeat wrote (always for the agent's own member, unless it was replaced).
func (a *agent) lastBeat(m *member.Member) (time.Duration, bool) {
	if a.beatSet && m.Agent.LastHeartbeat == a.beatAt {
		return a.beat, true
	}
	return 0, false
}

// notifyAgent lets the member's agent see a hub change after the sync delay.
func (s *Sim) notifyAgent(r *memberRecord) {
	if r.agent != nil {
		s.push(s.cfg.AgentSyncDelay, event{kind: evAgentSync, ref: r.agent.idx})
	}
}

// agentSync: the agent reads its InternalMemberCluster and joins or leaves.
func (s *Sim) agentSync(e *event) bool {
	a := s.agents[e.ref]
	if a.crashed || a.partitioned {
		return false // it cannot see the hub; it syncs again when it heals
	}
	r := s.store.members[a.name]
	if r == nil || r.agent != a || r.IMC == nil {
		return false
	}
	switch {
	case *r.IMC == membership.StateJoin && !a.joined:
		a.joined = true
		a.epoch++
		s.Record("agent-joining", a.name, "")
		s.sendHeartbeat(a, s.now)
		if a.systemd != nil {
			s.queueMachineAgent(a.name, 0)
		}
	case *r.IMC == membership.StateLeave && a.joined:
		a.joined = false
		a.epoch++
		s.Record("agent-leaving", a.name, "")
		s.sendMessage(a, "agent-left", func() {
			a.rec.Member.Agent.Joined = false
			s.store.status.Changed(a.rec.Member)
			s.hub.fire(triggers.MemberStatusChanged, a.name, "", a.name)
		})
	default:
		return false
	}
	return true
}

// sendHeartbeat schedules the arrival at the hub of a heartbeat sent at sent.
func (s *Sim) sendHeartbeat(a *agent, sent time.Duration) {
	arrive := sent + s.cfg.Network.Delay.Sample(s.rngNet)
	if arrive < s.now {
		arrive = s.now
	}
	a.sent = sent
	s.schedule(arrive, event{kind: evHeartbeat, ref: a.idx, epoch: a.epoch})
}

// sendMessage delivers a one-off agent message over the network (delay, loss, partition).
func (s *Sim) sendMessage(a *agent, kind string, deliver func()) {
	epoch := a.epoch
	s.atSubject(s.now+s.cfg.Network.Delay.Sample(s.rngNet), kind, a.name, func() {
		if a.epoch != epoch || a.partitioned || s.lost() {
			return
		}
		deliver()
	})
}

func (s *Sim) lost() bool {
	return s.cfg.Network.Loss > 0 && s.rngNet.Float64() < s.cfg.Network.Loss
}

// kindHeartbeat is the trace kind of a delivered heartbeat, prepared: the simulator
// records one per member per period.
var kindHeartbeat = trace.NewKind("heartbeat")

// recordHeartbeat folds a delivered heartbeat into the trace (observers do not see
// heartbeats), as trace.Record(now, "heartbeat", name, "") does.
func (s *Sim) recordHeartbeat(name string) {
	s.trace.RecordKind(s.now, kindHeartbeat, name, "")
}

// heartbeat is the arrival of one heartbeat at the hub; it also schedules the next one.
func (s *Sim) heartbeat(e *event) bool {
	a := s.agents[e.ref]
	if e.epoch != a.epoch || a.crashed || !a.joined {
		return false
	}
	if a.partitioned || s.lost() {
		s.trace.Record(s.now, "heartbeat-lost", a.name, "")
	} else {
		s.recordHeartbeat(a.name)
		s.deliverHeartbeat(a, a.sent)
	}
	next := a.sent + a.period
	if j := s.cfg.HeartbeatJitter; j > 0 {
		next += time.Duration(s.rngMem.Int64N(int64(j)))
	}
	s.sendHeartbeat(a, next)
	return true
}

// steadyHeartbeat is deliverHeartbeat for the common case, a healthy cluster member that
// stays healthy: only its heartbeat's age can change its eligibility, so the two
// eligibility checks become two comparisons of durations. It reports false, having
// changed nothing, when the member is not in that case.
func (s *Sim) steadyHeartbeat(a *agent, r *memberRecord, m *member.Member, sent time.Duration) bool {
	if !m.Agent.Present || !m.Agent.Joined || !m.Agent.HealthKnown || !m.Agent.Healthy || !a.healthy ||
		m.Leaving || m.Kind == member.KindMachine || !r.HealthyReported {
		return false
	}
	old, ok := a.lastBeat(m)
	if !ok {
		return false
	}
	// CheckEligibility with Leaving false, Present, Joined, HealthKnown and Healthy: eligible
	// exactly when the heartbeat is no older than the timeout. now - LastHeartbeat is
	// s.now - beat, both times being the start plus a duration.
	timeout := s.cfg.Eligibility.HeartbeatTimeout
	beat := sent + a.skew
	wasEligible := s.now-old <= timeout
	isEligible := s.now-beat <= timeout
	agentTime := s.cfg.Start.Add(beat)
	m.Agent.LastHeartbeat = agentTime
	s.store.status.Changed(m)
	a.beat, a.beatAt = beat, agentTime
	if wasEligible != isEligible {
		s.hub.fire(triggers.MemberStatusChanged, a.name, "", a.name)
	}
	if !wasEligible && isEligible {
		s.hub.memberChanged(a.name, triggers.MemberBecameEligible)
	}
	return true
}

// deliverHeartbeat writes the agent's status into its member, in place: heartbeats never
// copy member objects. The hub reconciles the member only when something it reports on
// changed; otherwise the heartbeat is a timestamp update.
func (s *Sim) deliverHeartbeat(a *agent, sent time.Duration) {
	s.heartbeats++
	r := a.rec
	m := r.Member
	if s.steadyHeartbeat(a, r, m, sent) {
		return
	}
	now := s.Now()
	wasEligible := m.CheckEligibility(now, s.cfg.Eligibility).OK()
	// A machine counts as alive to fleet's engine only within its TTL of the last beat.
	wasAliveMachine := m.Kind == member.KindMachine && m.Agent.Present && now.Sub(m.Agent.LastHeartbeat) < s.cfg.MachineTTL
	first := !m.Agent.Present || !m.Agent.Joined
	agentTime := s.cfg.Start.Add(sent + a.skew)
	healthChanged := first || m.Agent.Healthy != a.healthy
	m.Agent.Present, m.Agent.Joined, m.Agent.HealthKnown = true, true, true
	if healthChanged {
		m.Agent.Healthy = a.healthy
		m.Agent.HealthTransition = agentTime
	}
	m.Agent.LastHeartbeat = agentTime
	s.store.status.Changed(m)
	a.beat, a.beatAt, a.beatSet = sent+a.skew, agentTime, true
	if first {
		m.Properties = a.properties
		m.Resources = a.resources
		s.store.memberSpecChanged()
	}
	isEligible := m.CheckEligibility(now, s.cfg.Eligibility).OK()
	if healthChanged || wasEligible != isEligible || !r.HealthyReported {
		s.hub.fire(triggers.MemberStatusChanged, a.name, "", a.name)
	}
	if !wasEligible && isEligible {
		s.hub.memberChanged(a.name, triggers.MemberBecameEligible)
	}
	if m.Kind == member.KindMachine && !wasAliveMachine {
		// The machine is back for fleet: the engine may place units on it again (it retries
		// unscheduled units), and its agent reconciles.
		s.queueEngine(s.cfg.HubDelay)
		s.queueMachineAgent(a.name, s.cfg.AgentSyncDelay)
	}
}
