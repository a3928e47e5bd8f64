package membership

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/member"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func state(s IMCState) *IMCState { return &s }

// summary is what a case asserts: the plan's steps and each condition's status and reason.
type summary struct {
	Steps      []string
	Conditions []string
	Requeue    time.Duration
	Waiting    string
}

func summarise(p Plan) summary {
	s := summary{Requeue: p.RequeueAfter, Waiting: p.Waiting}
	for _, st := range []struct {
		on   bool
		name string
	}{{p.CreateNamespace, "createNamespace"}, {p.CreateIMC, "createIMC"}, {p.SetIMCLeave, "setIMCLeave"}, {p.DeleteIMC, "deleteIMC"}, {p.DeleteNamespace, "deleteNamespace"}, {p.Remove, "remove"}} {
		if st.on {
			s.Steps = append(s.Steps, st.name)
		}
	}
	for _, c := range p.Conditions {
		s.Conditions = append(s.Conditions, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return s
}

func TestDecide(t *testing.T) {
	joined := member.AgentStatus{Present: true, Joined: true, LastHeartbeat: now.Add(-time.Minute), HealthKnown: true, Healthy: true, HealthTransition: now.Add(-time.Hour)}
	cases := []struct {
		name string
		in   Input
		want summary
	}{
		{
			name: "new member: namespace and IMC are created; agent not yet reported",
			in:   Input{Member: &member.Member{Name: "m"}},
			want: summary{Steps: []string{"createNamespace", "createIMC"}, Conditions: []string{
				"ReadyToJoin=True/MemberClusterReadyToJoin", "Joined=Unknown/MemberClusterJoinStateUnknown", "Healthy=Unknown/MemberClusterHealthUnknown"}},
		},
		{
			name: "joined and healthy: requeue when the heartbeat would go stale",
			in:   Input{Member: &member.Member{Name: "m", Agent: joined}, NamespaceExists: true, IMC: state(StateJoin)},
			want: summary{Conditions: []string{"ReadyToJoin=True/MemberClusterReadyToJoin", "Joined=True/MemberClusterJoined", "Healthy=True/MemberClusterHealthy"},
				Requeue: 4*time.Minute + time.Nanosecond},
		},
		{
			name: "heartbeat older than the timeout",
			in: Input{Member: &member.Member{Name: "m", Agent: func() member.AgentStatus { a := joined; a.LastHeartbeat = now.Add(-6 * time.Minute); return a }()},
				NamespaceExists: true, IMC: state(StateJoin)},
			want: summary{Conditions: []string{"ReadyToJoin=True/MemberClusterReadyToJoin", "Joined=True/MemberClusterJoined", "Healthy=Unknown/MemberClusterHeartbeatTimeout"}},
		},
		{
			name: "agent reports unhealthy",
			in: Input{Member: &member.Member{Name: "m", Agent: func() member.AgentStatus { a := joined; a.Healthy = false; return a }()},
				NamespaceExists: true, IMC: state(StateJoin)},
			want: summary{Conditions: []string{"ReadyToJoin=True/MemberClusterReadyToJoin", "Joined=True/MemberClusterJoined", "Healthy=False/MemberClusterUnhealthy"},
				Requeue: 4*time.Minute + time.Nanosecond},
		},
		{
			name: "leaving: the IMC is set to Leave first",
			in:   Input{Member: &member.Member{Name: "m", Leaving: true, Agent: joined}, NamespaceExists: true, IMC: state(StateJoin)},
			want: summary{Steps: []string{"setIMCLeave"}, Conditions: []string{"ReadyToJoin=False/MemberClusterNotReadyToJoin", "Joined=Unknown/MemberClusterJoinStateUnknown"},
				Waiting: "the member agent to acknowledge leaving"},
		},
		{
			name: "leaving: waiting for the agent",
			in:   Input{Member: &member.Member{Name: "m", Leaving: true, Agent: joined}, NamespaceExists: true, IMC: state(StateLeave)},
			want: summary{Conditions: []string{"ReadyToJoin=False/MemberClusterNotReadyToJoin", "Joined=Unknown/MemberClusterJoinStateUnknown"},
				Waiting: "the member agent to acknowledge leaving", Requeue: 4*time.Minute + time.Nanosecond},
		},
		{
			name: "leaving: agent acknowledged, bindings remain",
			in: Input{Member: &member.Member{Name: "m", Leaving: true, Agent: func() member.AgentStatus { a := joined; a.Joined = false; return a }()},
				NamespaceExists: true, IMC: state(StateLeave), BindingsOnMember: 2},
			want: summary{Conditions: []string{"ReadyToJoin=False/MemberClusterNotReadyToJoin", "Joined=Unknown/MemberClusterJoinStateUnknown"},
				Waiting: "2 binding(s) on the member to be removed"},
		},
		{
			name: "leaving: everything gone, clean up and remove",
			in: Input{Member: &member.Member{Name: "m", Leaving: true, Agent: func() member.AgentStatus { a := joined; a.Joined = false; return a }()},
				NamespaceExists: true, IMC: state(StateLeave)},
			want: summary{Steps: []string{"deleteIMC", "deleteNamespace", "remove"}, Conditions: []string{"ReadyToJoin=False/MemberClusterNotReadyToJoin", "Joined=False/MemberClusterLeft"}},
		},
		{
			name: "leaving with an unreachable agent does not wait forever",
			in: Input{Member: &member.Member{Name: "m", Leaving: true, Agent: func() member.AgentStatus { a := joined; a.LastHeartbeat = now.Add(-time.Hour); return a }()},
				NamespaceExists: true, IMC: state(StateLeave)},
			want: summary{Steps: []string{"deleteIMC", "deleteNamespace", "remove"}, Conditions: []string{"ReadyToJoin=False/MemberClusterNotReadyToJoin", "Joined=False/MemberClusterLeft"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now, tc.in.Eligibility = now, member.DefaultEligibility
			if diff := cmp.Diff(tc.want, summarise(Decide(tc.in))); diff != "" {
				t.Errorf("Decide(%s) (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

func TestHeartbeatTimeoutMessage(t *testing.T) {
	m := &member.Member{Name: "m", Agent: member.AgentStatus{Present: true, Joined: true, HealthKnown: true, Healthy: true, LastHeartbeat: now.Add(-6 * time.Minute)}}
	p := Decide(Input{Member: m, NamespaceExists: true, IMC: state(StateJoin), Now: now, Eligibility: member.DefaultEligibility})
	want := "no heartbeat since 2026-03-01T11:54:00Z, longer than the 5m0s timeout"
	if got := p.Conditions[2]; got.Status != metav1.ConditionUnknown || got.Message != want {
		t.Errorf("Healthy = %+v, want message %q", got, want)
	}
	if Namespace("m") != "fleet-member-m" {
		t.Errorf("Namespace(m) = %q", Namespace("m"))
	}
}

// TestDeleteValidation: deleteOptions.validationMode Skip stops the hub waiting for a live
// agent's acknowledgement; Strict (and no mode) waits; bindings are waited for either way.
func TestDeleteValidation(t *testing.T) {
	live := member.AgentStatus{Present: true, Joined: true, LastHeartbeat: now.Add(-10 * time.Second), HealthKnown: true, Healthy: true}
	cfg := member.EligibilityConfig{HeartbeatTimeout: 5 * time.Minute}
	for _, tc := range []struct {
		name     string
		mode     member.DeleteValidationMode
		imc      IMCState
		bindings int
		want     []string
	}{
		{"strict tells the agent", member.DeleteValidationStrict, StateJoin, 0, []string{"setIMCLeave"}},
		{"skip still tells the agent", member.DeleteValidationSkip, StateJoin, 0, []string{"setIMCLeave"}},
		{"strict waits for the agent", member.DeleteValidationStrict, StateLeave, 0, nil},
		{"no mode waits for the agent", "", StateLeave, 0, nil},
		{"skip does not wait for the agent", member.DeleteValidationSkip, StateLeave, 0, []string{"deleteIMC", "deleteNamespace", "remove"}},
		{"skip waits for the bindings", member.DeleteValidationSkip, StateLeave, 2, nil},
	} {
		p := Decide(Input{Member: &member.Member{Name: "m", Leaving: true, Agent: live, DeleteValidation: tc.mode},
			NamespaceExists: true, IMC: state(tc.imc), BindingsOnMember: tc.bindings, Now: now, Eligibility: cfg})
		if diff := cmp.Diff(tc.want, summarise(p).Steps); diff != "" {
			t.Errorf("%s: steps (-want +got):\n%s", tc.name, diff)
		}
	}
}
