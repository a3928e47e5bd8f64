package invariants

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	mhub "github.com/fleetsim/fleetsim/model/hub"
)

// HeartbeatTimeoutName is the `always` name of HeartbeatWatch's check.
const HeartbeatTimeoutName = "memberHeartbeatTimeout"

// HeartbeatReaction is how long after a member's last heartbeat went stale the hub may
// still show it Healthy: the hub re-reads a member when its heartbeat goes stale (it asks
// to be woken at that instant), and the bound leaves room for that reconcile to wait its
// turn in the hub's queue. A hub that never reacts (the timeout case missed) does not pass.
const HeartbeatReaction = 30 * time.Second

// MemberReader is what HeartbeatWatch reads: every model/hub.Store is one.
type MemberReader interface {
	MemberClusterNames() []string
	MemberCluster(name string) *mhub.MemberCluster
}

// healthyType is the member condition the hub sets from the agent's heartbeats and health
// [Membership › Member cluster conditions].
const healthyType = "Healthy"

// HeartbeatWatch checks the heartbeat timeout. It remembers, per member, when it first saw
// the last heartbeat and the latest stamp any heartbeat carried:
//
//   - a heartbeat can be stale when it arrives (an agent whose clock runs behind stamps it
//     in the past), and the hub can only react once it has it;
//   - the hub arms its stale timer for the stamps it reads, and a stamp that goes back in
//     time (the agent's clock turned back) does not make the hub look earlier than the
//     timer of the latest stamp already armed.
//
// So a member counts as stale from the latest of: its last stamp plus the timeout, that
// heartbeat's arrival, and the latest stamp plus the timeout.
type HeartbeatWatch struct {
	seen map[string]beatSeen
}

type beatSeen struct {
	beat, at, latest time.Time
}

// Check: no member whose agent has reported (and that is not leaving) is Healthy=True
// longer than reaction after it went stale (above). The hub's own rule is "older than the
// timeout: Healthy is Unknown"; the bound lets the hub notice. It must be called after
// every step (it sees a heartbeat's arrival by its first call after it).
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
			s.beat, s.at = beat, now
			if !ok || beat.After(s.latest) {
				s.latest = beat
			}
			w.seen[name] = s
		}
		c, ok := condition.Find(mc.Conditions, healthyType)
		if !ok || c.Status != "True" {
			continue
		}
		staleSince := latestOf(beat.Add(timeout), s.at, s.latest.Add(timeout))
		if now.Sub(staleSince) > reaction {
			return fmt.Errorf("member %s is Healthy, but its last heartbeat (%s) is %s old: past the %s heartbeat timeout, and stale for %s, longer than the hub's reaction bound %s",
				name, beat.UTC().Format(time.RFC3339), now.Sub(beat), timeout, now.Sub(staleSince), reaction)
		}
	}
	return nil
}

func latestOf(ts ...time.Time) time.Time {
	out := ts[0]
	for _, t := range ts[1:] {
		if t.After(out) {
			out = t
		}
	}
	return out
}
