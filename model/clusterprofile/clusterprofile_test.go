package clusterprofile

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/member"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	elig := member.EligibilityConfig{HeartbeatTimeout: 5 * time.Minute, UnhealthyTolerance: 5 * time.Minute}
	reported := func(healthy bool, ago time.Duration) member.AgentStatus {
		return member.AgentStatus{Present: true, Joined: true, LastHeartbeat: now.Add(-ago), HealthKnown: true, Healthy: healthy}
	}
	cluster := func(a member.AgentStatus) *member.Member {
		return &member.Member{Name: "east", Kind: member.KindCluster, Agent: a,
			TextProperties: map[string]string{KubernetesVersionProperty: "v1.33.1"}}
	}
	type want struct {
		Present      bool
		Status       metav1.ConditionStatus
		Reason       string
		Version      string
		RequeueAfter time.Duration
	}
	for _, tc := range []struct {
		name   string
		member *member.Member
		want   want
	}{
		{"no MemberCluster", nil, want{}},
		{"machine", &member.Member{Name: "m1", Kind: member.KindMachine, Agent: reported(true, 0)}, want{}},
		{"leaving", func() *member.Member { m := cluster(reported(true, 0)); m.Leaving = true; return m }(), want{}},
		{"agent never reported", cluster(member.AgentStatus{}),
			want{true, metav1.ConditionUnknown, ReasonNoStatus, "v1.33.1", 0}},
		{"reported without health", cluster(member.AgentStatus{Present: true, Joined: true, LastHeartbeat: now}),
			want{true, metav1.ConditionUnknown, ReasonHealthUnknown, "v1.33.1", 0}},
		{"healthy, fresh heartbeat", cluster(reported(true, time.Minute)),
			want{true, metav1.ConditionTrue, ReasonHealthy, "v1.33.1", 4*time.Minute + time.Nanosecond}},
		{"heartbeat exactly at the timeout is still fresh", cluster(reported(true, 5*time.Minute)),
			want{true, metav1.ConditionTrue, ReasonHealthy, "v1.33.1", time.Nanosecond}},
		{"heartbeat older than the timeout", cluster(reported(true, 5*time.Minute+time.Second)),
			want{true, metav1.ConditionFalse, ReasonHeartbeatLost, "v1.33.1", 0}},
		{"stale heartbeat wins over a reported unhealthy", cluster(reported(false, time.Hour)),
			want{true, metav1.ConditionFalse, ReasonHeartbeatLost, "v1.33.1", 0}},
		{"unhealthy", cluster(reported(false, 0)),
			want{true, metav1.ConditionFalse, ReasonUnhealthy, "v1.33.1", 5*time.Minute + time.Nanosecond}},
		{"no version reported", &member.Member{Name: "east", Kind: member.KindCluster, Agent: reported(true, 0)},
			want{true, metav1.ConditionTrue, ReasonHealthy, "", 5*time.Minute + time.Nanosecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{Member: tc.member, Now: now, Eligibility: elig})
			if d.Reason == "" {
				t.Errorf("Decide gave no reason")
			}
			got := want{RequeueAfter: d.RequeueAfter}
			if p := d.Profile; p != nil {
				got = want{true, p.Healthy.Status, p.Healthy.Reason, p.KubernetesVersion, d.RequeueAfter}
				if diff := cmp.Diff(Profile{Name: "east", DisplayName: "east", ClusterManager: ClusterManagerName}, Profile{Name: p.Name, DisplayName: p.DisplayName, ClusterManager: p.ClusterManager}); diff != "" {
					t.Errorf("profile identity (-want +got):\n%s", diff)
				}
				if p.Healthy.Type != TypeControlPlaneHealthy || p.Healthy.Message == "" {
					t.Errorf("condition %+v: want type %s with a message", p.Healthy, TypeControlPlaneHealthy)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}
