package membership

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/mutant"
)

// NamespacePrefix is the prefix of every member's reserved hub namespace.
const NamespacePrefix = "fleet-member-"

// Namespace returns the member's reserved hub namespace.
func Namespace(memberName string) string { return NamespacePrefix + memberName }

// IMCState is InternalMemberCluster.spec.state.
type IMCState string

const (
	StateJoin  IMCState = "Join"
	StateLeave IMCState = "Leave"
)

// Condition types and reasons on a MemberCluster. ReadyToJoin, Joined and their reasons are
// KubeFleet's; the Healthy reasons are ours (KubeFleet mirrors the agent's condition).
const (
	TypeReadyToJoin = "ReadyToJoin"
	TypeJoined      = "Joined"
	TypeHealthy     = "Healthy"

	ReasonReadyToJoin      = "MemberClusterReadyToJoin"
	ReasonNotReadyToJoin   = "MemberClusterNotReadyToJoin"
	ReasonJoined           = "MemberClusterJoined"
	ReasonLeft             = "MemberClusterLeft"
	ReasonJoinStateUnknown = "MemberClusterJoinStateUnknown"

	ReasonHealthy          = "MemberClusterHealthy"
	ReasonUnhealthy        = "MemberClusterUnhealthy"
	ReasonHeartbeatTimeout = "MemberClusterHeartbeatTimeout"
	ReasonHealthUnknown    = "MemberClusterHealthUnknown"
)

// Input is what one membership decision reads.
type Input struct {
	Member *member.Member // its Leaving field says the MemberCluster is being deleted
	// NamespaceExists and IMC describe what join created so far; IMC is nil when absent.
	NamespaceExists bool
	IMC             *IMCState
	// BindingsOnMember counts bindings of any placement still targeting the member.
	BindingsOnMember int
	Now              time.Time
	Eligibility      member.EligibilityConfig
}

// Plan is what the driver must do, in order.
type Plan struct {
	CreateNamespace bool // with the Role and RoleBinding for the member's identity
	CreateIMC       bool // in state Join
	SetIMCLeave     bool
	DeleteIMC       bool
	DeleteNamespace bool // with the RBAC objects
	// Remove: leaving is complete; the MemberCluster may go.
	Remove     bool
	Conditions []condition.Condition
	// RequeueAfter is when the decision may change with no new input: the moment the last
	// heartbeat goes stale. Zero means no timed requeue.
	RequeueAfter time.Duration
	// Waiting says, when leaving, what the hub is waiting for.
	Waiting string
}

// Decide makes the membership decision for one member.
func Decide(in Input) Plan {
	var p Plan
	m := in.Member
	if !m.Leaving {
		p.CreateNamespace = !in.NamespaceExists
		p.CreateIMC = in.IMC == nil
		p.Conditions = []condition.Condition{
			condition.True(TypeReadyToJoin, ReasonReadyToJoin, "the hub is ready to accept the member: its namespace and internal member cluster exist"),
			joined(m),
			healthy(m, in.Now, in.Eligibility),
		}
		p.RequeueAfter = untilStale(m, in.Now, in.Eligibility)
		return p
	}

	// Leaving (MC-LEAVE): ask the agent to leave, wait for it and for the bindings, clean up.
	p.Conditions = []condition.Condition{
		condition.False(TypeReadyToJoin, ReasonNotReadyToJoin, "the member is leaving the fleet"),
	}
	agentGone := !m.Agent.Present || !m.Agent.Joined || in.Now.Sub(m.Agent.LastHeartbeat) > in.Eligibility.HeartbeatTimeout
	if m.DeleteValidation == member.DeleteValidationSkip {
		// deleteOptions.validationMode Skip: the agent is told to leave, but its
		// acknowledgement is not waited for.
		agentGone = true
	}
	switch {
	case in.IMC != nil && *in.IMC == StateJoin:
		p.SetIMCLeave = true
		p.Waiting = "the member agent to acknowledge leaving"
	case in.IMC != nil && !agentGone:
		p.Waiting = "the member agent to acknowledge leaving"
		p.RequeueAfter = untilStale(m, in.Now, in.Eligibility)
	case in.BindingsOnMember > 0 && !mutant.On("membership.leaveIgnoresBindings"):
		p.Waiting = fmt.Sprintf("%d binding(s) on the member to be removed", in.BindingsOnMember)
	default:
		p.DeleteIMC = in.IMC != nil
		p.DeleteNamespace = in.NamespaceExists
		p.Remove = true
	}
	if p.Remove {
		p.Conditions = append(p.Conditions, condition.False(TypeJoined, ReasonLeft, "the member has left the fleet"))
	} else {
		p.Conditions = append(p.Conditions, condition.Condition{Type: TypeJoined, Status: metav1.ConditionUnknown, Reason: ReasonJoinStateUnknown, Message: "the member is leaving: waiting for " + p.Waiting})
	}
	return p
}

func joined(m *member.Member) condition.Condition {
	switch {
	case !m.Agent.Present:
		return condition.Condition{Type: TypeJoined, Status: metav1.ConditionUnknown, Reason: ReasonJoinStateUnknown, Message: "the member agent has not reported yet"}
	case !m.Agent.Joined:
		return condition.Condition{Type: TypeJoined, Status: metav1.ConditionUnknown, Reason: ReasonJoinStateUnknown, Message: "the member agent reports it has not joined"}
	}
	return condition.True(TypeJoined, ReasonJoined, "the member agent has joined the fleet")
}

func healthy(m *member.Member, now time.Time, cfg member.EligibilityConfig) condition.Condition {
	a := m.Agent
	switch {
	case !a.Present || !a.HealthKnown:
		return condition.Condition{Type: TypeHealthy, Status: metav1.ConditionUnknown, Reason: ReasonHealthUnknown, Message: "the member agent has not reported its health yet"}
	case now.Sub(a.LastHeartbeat) > cfg.HeartbeatTimeout && !mutant.On("membership.heartbeatTimeoutIgnored"):
		return condition.Condition{Type: TypeHealthy, Status: metav1.ConditionUnknown, Reason: ReasonHeartbeatTimeout,
			Message: fmt.Sprintf("no heartbeat since %s, longer than the %s timeout", a.LastHeartbeat.UTC().Format(time.RFC3339), cfg.HeartbeatTimeout)}
	case !a.Healthy && !mutant.On("membership.unhealthyReportedHealthy"):
		return condition.False(TypeHealthy, ReasonUnhealthy, "the member agent reports the member is unhealthy")
	}
	return condition.True(TypeHealthy, ReasonHealthy, "the member agent reports the member is healthy")
}

// untilStale is how long until the last heartbeat is older than the timeout.
func untilStale(m *member.Member, now time.Time, cfg member.EligibilityConfig) time.Duration {
	if !m.Agent.Present {
		return 0
	}
	d := StaleAt(m, cfg).Sub(now)
	if d < 0 {
		return 0
	}
	return d
}

// StaleAt is the first instant at which the member's last heartbeat counts as too old:
// just past LastHeartbeat + timeout, since the rule is "older than", not "as old as".
// Drivers use it to tell a due health check from one a newer heartbeat has postponed.
func StaleAt(m *member.Member, cfg member.EligibilityConfig) time.Time {
	return m.Agent.LastHeartbeat.Add(cfg.HeartbeatTimeout + time.Nanosecond)
}
