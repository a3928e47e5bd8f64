package condition

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

// Timed is a condition as stored on an object: with the generation it describes and when its
// status last changed. Drivers keep LastTransitionTime when only the reason or message moves.
type Timed struct {
	Condition
	ObservedGeneration int64     `json:"observedGeneration,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// Find returns the condition of the given type.
func Find(cs []Timed, typ string) (Timed, bool) {
	for _, c := range cs {
		if c.Type == typ {
			return c, true
		}
	}
	return Timed{}, false
}

// IsTrue reports whether the condition of that type is True at generation gen.
func IsTrue(cs []Timed, typ string, gen int64) bool {
	c, ok := Find(cs, typ)
	return ok && c.Status == metav1.ConditionTrue && c.ObservedGeneration == gen
}

// Set merges c into cs: a new status gets LastTransitionTime now; the same status keeps the
// old time and takes the new reason, message and generation. It reports whether the status
// changed.
func Set(cs *[]Timed, c Condition, gen int64, now time.Time) bool {
	for i := range *cs {
		if (*cs)[i].Type != c.Type {
			continue
		}
		old := (*cs)[i]
		changed := old.Status != c.Status
		t := old.LastTransitionTime
		if changed {
			t = now
		}
		(*cs)[i] = Timed{Condition: c, ObservedGeneration: gen, LastTransitionTime: t}
		return changed
	}
	if len(*cs) == cap(*cs) && len(*cs) < 8 {
		// Objects hold a few conditions each, for a long time: grow one at a time, not by
		// doubling, so a million members do not each carry unused slots.
		grown := make([]Timed, len(*cs), len(*cs)+1)
		copy(grown, *cs)
		*cs = grown
	}
	*cs = append(*cs, Timed{Condition: c, ObservedGeneration: gen, LastTransitionTime: now})
	return true
}

// Update sets c like Set and also reports whether anything stored changed at all (status,
// reason, message or generation): what a watcher of the object would be woken by.
func Update(cs *[]Timed, c Condition, gen int64, now time.Time) (statusChanged, changed bool) {
	old, had := Find(*cs, c.Type)
	statusChanged = Set(cs, c, gen, now)
	return statusChanged, !had || old.Condition != c || old.ObservedGeneration != gen
}

// Remove deletes the condition of that type, if present.
func Remove(cs *[]Timed, typ string) {
	out := (*cs)[:0]
	for _, c := range *cs {
		if c.Type != typ {
			out = append(out, c)
		}
	}
	*cs = out
}

// Condition types on bindings and per-cluster placement status (STATUS-CRP-ORDER).
const (
	TypeRolloutStarted   = "RolloutStarted"
	TypeOverridden       = "Overridden"
	TypeWorkSynchronized = "WorkSynchronized"
	TypeApplied          = "Applied"
	TypeAvailable        = "Available"
	TypeDiffReported     = "DiffReported"
)

// Binding and per-cluster reasons that decisions share (Appendix A of the KubeFleet spec).
const (
	ReasonRolloutStarted         = "RolloutStarted"
	ReasonRolloutNotStartedYet   = "RolloutNotStartedYet"
	ReasonWorkNotTrackable       = "WorkNotTrackable"
	ReasonAllWorkAvailable       = "AllWorkAreAvailable"
	ReasonNotAllWorkAvailable    = "NotAllWorkAreAvailable"
	ReasonAllWorkApplied         = "AllWorkHaveBeenApplied"
	ReasonNotAllWorkApplied      = "NotAllWorkHaveBeenApplied"
	ReasonAllWorkDiffReported    = "AllWorkHaveDiffReported"
	ReasonNotAllWorkDiffReported = "NotAllWorkHaveDiffReported"
)
