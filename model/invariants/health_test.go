package invariants

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
)

// TestHealthReportWatch: the check fires on a member shown Healthy longer than the reaction
// bound after its agent's unhealthy report arrived, and is silent on a healthy report, inside
// the bound, on a member the hub shows Healthy=False, on an agent whose health is not known,
// on a leaving member, and once a healthy report follows (the bound restarts at the next
// unhealthy one).
func TestHealthReportWatch(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type call struct {
		at        time.Duration // since t0
		unhealthy bool          // the agent's latest report
		unknown   bool          // the agent has not reported its health
		leaving   bool
		healthy   metav1.ConditionStatus // the hub's condition
		want      string                 // a part of the error, "" for none
	}
	const fires = "member m1 is Healthy, but its agent has reported it unhealthy"
	for _, tc := range []struct {
		name  string
		calls []call
	}{
		{"healthy report", []call{{at: 0, healthy: metav1.ConditionTrue}, {at: time.Hour, healthy: metav1.ConditionTrue}}},
		{"unhealthy, shown False", []call{
			{at: 0, unhealthy: true, healthy: metav1.ConditionFalse},
			{at: time.Hour, unhealthy: true, healthy: metav1.ConditionFalse}}},
		{"unhealthy, still True inside the bound", []call{
			{at: time.Minute, unhealthy: true, healthy: metav1.ConditionTrue},
			{at: time.Minute + HealthReaction, unhealthy: true, healthy: metav1.ConditionTrue}}},
		{"unhealthy, still True past the bound", []call{
			{at: time.Minute, unhealthy: true, healthy: metav1.ConditionTrue},
			{at: time.Minute + HealthReaction + time.Second, unhealthy: true, healthy: metav1.ConditionTrue, want: fires}}},
		{"healthy again: the bound restarts at the next unhealthy report", []call{
			{at: 0, unhealthy: true, healthy: metav1.ConditionFalse},
			{at: time.Minute, healthy: metav1.ConditionTrue},
			{at: 10 * time.Minute, unhealthy: true, healthy: metav1.ConditionTrue},
			{at: 10*time.Minute + HealthReaction, unhealthy: true, healthy: metav1.ConditionTrue},
			{at: 10*time.Minute + HealthReaction + time.Second, unhealthy: true, healthy: metav1.ConditionTrue, want: fires}}},
		{"health not known", []call{
			{at: 0, unhealthy: true, unknown: true, healthy: metav1.ConditionTrue},
			{at: time.Hour, unhealthy: true, unknown: true, healthy: metav1.ConditionTrue}}},
		{"leaving", []call{
			{at: 0, unhealthy: true, leaving: true, healthy: metav1.ConditionTrue},
			{at: time.Hour, unhealthy: true, leaving: true, healthy: metav1.ConditionTrue}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w HealthReportWatch
			for i, c := range tc.calls {
				m := &member.Member{Name: "m1", Leaving: c.leaving}
				m.Agent.Present, m.Agent.Joined, m.Agent.HealthKnown, m.Agent.Healthy = true, true, !c.unknown, !c.unhealthy
				m.Agent.LastHeartbeat = t0.Add(c.at)
				mc := &mhub.MemberCluster{Member: m}
				condition.Set(&mc.Conditions, condition.Condition{Type: "Healthy", Status: c.healthy, Reason: "r"}, 0, t0)
				st := fakeStore{members: map[string]*mhub.MemberCluster{"m1": mc}}
				got := ""
				if err := w.Check(st, t0.Add(c.at), HealthReaction); err != nil {
					got = err.Error()
				}
				if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
					t.Errorf("call %d (at %s): %s", i, c.at, cmp.Diff(c.want, got))
				}
			}
		})
	}
}
