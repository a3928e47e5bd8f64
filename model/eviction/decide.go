package eviction

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/mutant"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Input is what the eviction controller reads for one eviction.
type Input struct {
	Eviction Eviction
	// Reconciled is true once the eviction reached a terminal state (usually
	// Eviction.Terminal()); Decide then has nothing to do.
	Reconciled bool
	// Placement is the targeted ClusterResourcePlacement, nil if it does not exist.
	Placement *Placement
	// Bindings are all of the placement's bindings, in any state, deleting or not.
	Bindings []*placement.Binding
	// Budget is the disruption budget named after the placement, nil if there is none.
	Budget *DisruptionBudget
}

// Decision is the outcome of reconciling one eviction. The zero Decision means nothing to
// do: the eviction was already reconciled.
type Decision struct {
	// Valid is the Valid condition; nil only when there is nothing to do.
	Valid *condition.Condition
	// Executed is the Executed condition; nil when the eviction is invalid.
	Executed *condition.Condition
	// DeleteBinding names the binding to delete, or is empty. It is set exactly when the
	// eviction executes, except against a binding that is already being deleted.
	DeleteBinding string
	// Available, Total and Allowed are the budget accounting (see Allowed) for the
	// placement's bindings, filled in for every valid eviction whether or not the budget was
	// consulted, to explain the outcome. Available and Total are the numbers in the budget
	// messages.
	Available, Total, Allowed int
}

// Noop reports whether the decision asks for nothing: the eviction was already reconciled.
func (d Decision) Noop() bool { return d.Valid == nil && d.Executed == nil && d.DeleteBinding == "" }

// Conditions returns the conditions to set on the eviction, Valid first.
func (d Decision) Conditions() []condition.Condition {
	var cs []condition.Condition
	for _, c := range []*condition.Condition{d.Valid, d.Executed} {
		if c != nil {
			cs = append(cs, *c)
		}
	}
	return cs
}

// Decide reconciles one eviction: it validates it (EVICT-VALIDATION, in order: placement
// missing, placement deleting, PickFixed, no binding for the cluster, more than one) and, if
// valid, decides whether it executes (EVICT-EXECUTION, in order):
//
//  1. the binding is already being deleted → executed, nothing more to delete;
//  2. the binding failed (Applied or Available False at its generation) or uses ReportDiff →
//     executed without consulting the budget;
//  3. the binding is not present (neither Bound nor Unscheduled after Bound) → not executed;
//  4. no budget → executed;
//  5. the budget is misconfigured for the placement (see Allowed) → not executed;
//  6. the budget allows at least one disruption (Allowed > 0) → executed, otherwise not.
//
// Executing means deleting the binding. Decide does not look at taints, members or the
// scheduler: after an executed eviction the scheduler may pick the same cluster again.
func Decide(in Input) Decision {
	if in.Reconciled {
		return Decision{}
	}
	p := in.Placement
	if p == nil {
		return invalid(MessageInvalidMissingPlacement)
	}
	if p.Deleting {
		return invalid(MessageInvalidDeletingPlacement)
	}
	typ := p.Type
	if typ == "" {
		typ = placement.PickAll
	}
	if typ == placement.PickFixed {
		return invalid(MessageInvalidPickFixed)
	}
	var target *placement.Binding
	matches := 0
	for _, b := range in.Bindings {
		if b != nil && b.TargetCluster == in.Eviction.Spec.ClusterName {
			target = b
			matches++
		}
	}
	switch {
	case matches == 0:
		return invalid(MessageInvalidMissingBinding)
	case matches > 1:
		return invalid(MessageInvalidMultipleBindings)
	}

	d := Decision{Valid: cond(condition.True(TypeValid, ReasonValid, MessageValid))}
	var misconfigured bool
	d.Allowed, d.Available, d.Total, misconfigured = Allowed(typ, p.NumberOfClusters, in.Bindings, in.Budget)
	switch {
	case target.Deleting:
		d.Executed = executed(MessageAllowedBindingDeleting)
	case isFailed(target) || isReportDiff(target):
		d.Executed, d.DeleteBinding = executed(MessageAllowedPlacementFailed), target.Name
	case !target.Present() && !mutant.On("eviction.notPropagatedEvicted"):
		d.Executed = notExecuted(MessageBlockedNotPropagated)
	case in.Budget == nil:
		d.Executed, d.DeleteBinding = executed(MessageAllowedNoBudget), target.Name
	case misconfigured:
		d.Executed = notExecuted(MessageBlockedMisconfigured)
	case d.Allowed > 0:
		d.Executed, d.DeleteBinding = executed(fmt.Sprintf(FormatAllowedByBudget, d.Available, d.Total)), target.Name
	default:
		d.Executed = notExecuted(fmt.Sprintf(FormatBlockedByBudget, d.Available, d.Total))
	}
	return d
}

func cond(c condition.Condition) *condition.Condition { return &c }

func invalid(msg string) Decision {
	return Decision{Valid: cond(condition.False(TypeValid, ReasonInvalid, msg))}
}

func executed(msg string) *condition.Condition {
	return cond(condition.True(TypeExecuted, ReasonExecuted, msg))
}

func notExecuted(msg string) *condition.Condition {
	return cond(condition.False(TypeExecuted, ReasonNotExecuted, msg))
}

// String renders a decision on one line, for test failures and traces.
func (d Decision) String() string {
	if d.Noop() {
		return "{noop}"
	}
	var sb strings.Builder
	sb.WriteByte('{')
	for i, c := range d.Conditions() {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%s=%s(%s: %q)", c.Type, c.Status, c.Reason, c.Message)
	}
	if d.DeleteBinding != "" {
		sb.WriteString(" delete=" + d.DeleteBinding)
	}
	if d.Valid != nil && d.Valid.Status == metav1.ConditionTrue {
		fmt.Fprintf(&sb, " available=%d total=%d allowed=%d", d.Available, d.Total, d.Allowed)
	}
	sb.WriteByte('}')
	return sb.String()
}
