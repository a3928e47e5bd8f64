package invariants

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	mhub "github.com/fleetsim/fleetsim/model/hub"
)

// HeartbeatTimeoutName is the `always` name of HeartbeatWatch's check.
const HeartbeatTimeoutName = "memberHeartbeatTimeout"

// HeartbeatReaction is how long after a member's last heartbeat passes the timeout the hub
// may still show it Healthy: the hub re-reads a member when its heartbeat goes stale (it
// asks to be woken at that instant), and the bound leaves room for that reconcile to wait
// its turn in the hub's queue. A hub that never reacts (the timeout case missed) passes it.
const HeartbeatReaction = 30 * time.Second

// MemberReader is what HeartbeatWatch reads: every model/hub.Store is one.
type MemberReader interface {
	MemberClusterNames() []string
	MemberCluster(name string) *mhub.MemberCluster
}

// healthyType is the member condition the hub sets from the agent's heartbeats and health
// [Membership › Member cluster conditions].
const healthyType = "Healthy"

// HeartbeatWatch checks HeartbeatTimeout. It remembers when it first saw each member's
// last heartbeat: a heartbeat can be stale when it arrives (an agent whose clock runs
// behind stamps it in the past), and the hub can only react once it has it, so the
// reaction is counted from the later of the timeout and the heartbeat's arrival.
type HeartbeatWatch struct {
	seen map[string]beatSeen
}

type beatSeen struct {
	beat, at time.Time
}

// Check: no member whose agent has reported (and that is not leaving) is Healthy=True later than reaction after its
// last heartbeat went stale (older than timeout, or stale on arrival). The hub's own rule
// is "older than the timeout: Healthy is Unknown"; the bound lets the hub notice. It must
// be called after every step (it sees a heartbeat's arrival by its first call after it).
func (w *HeartbeatWatch) Check(st MemberReader, now time.Time, timeout, reaction time.Duration) error {
	if w.seen == nil {
		w.seen = map[string]beatSeen{}
	}
	for _, name := range st.MemberClusterNames() {
		mc := st.MemberCluster(name)
		// A leaving member's agent stops its heartbeats on purpose, and the hub is
		// removing it rather than watching its health [Membership › Leaving the fleet].
		if mc == nil || mc.Member == nil || !mc.Member.Agent.Present || mc.Member.Leaving {
			delete(w.seen, name)
			continue
		}
		beat := mc.Member.Agent.LastHeartbeat
		s, ok := w.seen[name]
		if !ok || !s.beat.Equal(beat) {
			s = beatSeen{beat: beat, at: now}
			w.seen[name] = s
		}
		c, ok := condition.Find(mc.Conditions, healthyType)
		if !ok || c.Status != "True" {
			continue
		}
		staleSince := beat.Add(timeout)
		if s.at.After(staleSince) {
			staleSince = s.at
		}
		if now.Sub(staleSince) > reaction {
			return fmt.Errorf("member %s is Healthy, but its last heartbeat (%s) is %s old: past the %s heartbeat timeout, and stale for %s, longer than the hub's reaction bound %s",
				name, beat.UTC().Format(time.RFC3339), now.Sub(beat), timeout, now.Sub(staleSince), reaction)
		}
	}
	return nil
}
