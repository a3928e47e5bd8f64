package condition

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition is a decided status condition, without the timestamps and observed generation
// that the driver owns.
type Condition struct {
	Type    string                 `json:"type"`
	Status  metav1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason"`
	Message string                 `json:"message"`
}

// Condition types on placements, policy snapshots and bindings.
const (
	TypeScheduled = "Scheduled"
)

// Scheduler reasons and messages (SNAP-POLICY, CRP-POL-PICKN, Appendix A).
const (
	ReasonSchedulingPolicyFulfilled   = "SchedulingPolicyFulfilled"
	ReasonSchedulingPolicyUnfulfilled = "SchedulingPolicyUnfulfilled"
	MessageFulfilled                  = "found all the clusters needed as specified by the scheduling policy"
	MessageUnfulfilled                = "could not find all the clusters needed as specified by the scheduling policy"
)

// True and False build conditions tersely.
func True(typ, reason, message string) Condition {
	return Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: message}
}

func False(typ, reason, message string) Condition {
	return Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: message}
}
