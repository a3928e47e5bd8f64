package invariants

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
)

// ReportedUnhealthyName is the `always` name of HealthReportWatch's check.
const ReportedUnhealthyName = "memberReportedUnhealthy"

// HealthReaction is how long after the hub received an agent's report that its cluster is
// unhealthy the hub may still show the member Healthy: the report makes the hub reconcile
// the member, and the bound leaves room for that reconcile to wait its turn in the hub's
// queue. A hub that never takes the report into account does not pass.
const HealthReaction = 30 * time.Second

// HealthReportWatch checks that an agent's unhealthy report reaches the member's Healthy
// condition [Membership › Member cluster conditions]. It is written from the rule, not
// from the hub's code: it remembers, per member, since when the agent's latest report held
// in the hub says unhealthy (the first check that saw it), and nothing else.
type HealthReportWatch struct {
	since map[string]time.Time
}

// Check: no member is Healthy=True more than reaction after the hub received its agent's
// report that the cluster is unhealthy, while that is still the agent's latest report. A
// member whose agent has not reported its health, and a leaving one (the hub is removing
// it), are left out. It must be called after every step (it sees a report's arrival by
// its first call after it).
func (w *HealthReportWatch) Check(st MemberReader, now time.Time, reaction time.Duration) error {
	if w.since == nil {
		w.since = map[string]time.Time{}
	}
	for _, name := range st.MemberClusterNames() {
		mc := st.MemberCluster(name)
		if mc == nil || mc.Member == nil || mc.Member.Leaving {
			delete(w.since, name)
			continue
		}
		a := mc.Member.Agent
		if !a.Present || !a.HealthKnown || a.Healthy {
			delete(w.since, name)
			continue
		}
		since, ok := w.since[name]
		if !ok {
			since = now
			w.since[name] = since
		}
		c, ok := condition.Find(mc.Conditions, healthyType)
		if !ok || c.Status != "True" {
			continue
		}
		if now.Sub(since) > reaction {
			return fmt.Errorf("member %s is Healthy, but its agent has reported it unhealthy since %s (%s ago), longer than the hub's reaction bound %s",
				name, since.UTC().Format(time.RFC3339), now.Sub(since), reaction)
		}
	}
	return nil
}
