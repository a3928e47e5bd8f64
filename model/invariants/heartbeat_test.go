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

// TestHeartbeatWatch: the check fires on a member shown Healthy longer than the reaction
// bound after its heartbeat went stale, and is silent on a fresh heartbeat, inside the
// bound, on a member the hub shows Unknown, on one whose agent never reported, on a
// leaving member, on a heartbeat stale on arrival until the bound has passed since it
// arrived, and on a stamp that went back in time until the bound has passed the latest
// stamp's timeout.
func TestHeartbeatWatch(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const timeout = 5 * time.Minute
	type call struct {
		at      time.Duration // since t0
		present bool
		leaving bool
		beat    time.Duration // the last heartbeat, since t0
		healthy metav1.ConditionStatus
		want    string // a part of the error, "" for none
	}
	const fires = "member m1 is Healthy, but its last heartbeat"
	for _, tc := range []struct {
		name  string
		calls []call
	}{
		{"fresh heartbeat", []call{{at: time.Minute, present: true, healthy: metav1.ConditionTrue}}},
		{"past the timeout, inside the bound", []call{
			{at: 0, present: true, healthy: metav1.ConditionTrue},
			{at: timeout + HeartbeatReaction, present: true, healthy: metav1.ConditionTrue}}},
		{"past the timeout and the bound, still Healthy", []call{
			{at: 0, present: true, healthy: metav1.ConditionTrue},
			{at: timeout + HeartbeatReaction + time.Second, present: true, healthy: metav1.ConditionTrue, want: fires}}},
		{"stale and shown Unknown", []call{
			{at: 0, present: true, healthy: metav1.ConditionTrue},
			{at: time.Hour, present: true, healthy: metav1.ConditionUnknown}}},
		{"agent never reported", []call{{at: time.Hour, present: false, healthy: metav1.ConditionTrue}}},
		{"stamp goes back: counted from the timer of the latest stamp", []call{
			{at: 10 * time.Minute, present: true, beat: 10 * time.Minute, healthy: metav1.ConditionTrue},
			{at: 11 * time.Minute, present: true, beat: 7 * time.Minute, healthy: metav1.ConditionTrue},
			{at: 15*time.Minute + HeartbeatReaction, present: true, beat: 7 * time.Minute, healthy: metav1.ConditionTrue},
			{at: 15*time.Minute + HeartbeatReaction + time.Second, present: true, beat: 7 * time.Minute, healthy: metav1.ConditionTrue, want: fires}}},
		{"leaving: the agent stopped on purpose", []call{
			{at: 0, present: true, healthy: metav1.ConditionTrue},
			{at: time.Hour, present: true, leaving: true, healthy: metav1.ConditionTrue}}},
		{"stale on arrival (clock behind): the bound counts from the arrival", []call{
			{at: 10 * time.Minute, present: false, healthy: metav1.ConditionUnknown},
			{at: 11 * time.Minute, present: true, beat: -3 * time.Minute, healthy: metav1.ConditionTrue},
			{at: 11*time.Minute + HeartbeatReaction, present: true, beat: -3 * time.Minute, healthy: metav1.ConditionTrue},
			{at: 11*time.Minute + HeartbeatReaction + time.Second, present: true, beat: -3 * time.Minute, healthy: metav1.ConditionTrue, want: fires}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w HeartbeatWatch
			for i, c := range tc.calls {
				m := &member.Member{Name: "m1"}
				m.Agent.Present, m.Agent.LastHeartbeat, m.Leaving = c.present, t0.Add(c.beat), c.leaving
				mc := &mhub.MemberCluster{Member: m}
				condition.Set(&mc.Conditions, condition.Condition{Type: "Healthy", Status: c.healthy, Reason: "r"}, 0, t0)
				st := fakeStore{members: map[string]*mhub.MemberCluster{"m1": mc}}
				got := ""
				if err := w.Check(st, t0.Add(c.at), timeout, HeartbeatReaction); err != nil {
					got = err.Error()
				}
				if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
					t.Errorf("call %d (at %s): %s", i, c.at, cmp.Diff(c.want, got))
				}
			}
		})
	}
}
