package eviction

import (
	"regexp"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/mutant"
	"github.com/fleetsim/fleetsim/model/placement"
)

// intOrPercent is the IntOrString pattern the API enforces: a non-negative integer, or a
// percentage from 0% to 100%.
var intOrPercent = regexp.MustCompile(`^((100|[0-9]{1,2})%|[0-9]+)$`)

// Allowed is the budget accounting of PDB-ACCOUNTING for a placement of the given type and
// numberOfClusters (PickN) with the given bindings (all of the placement's bindings, in any
// state, deleting or not; nil entries are skipped):
//
//   - available counts bindings whose Available condition is True at their generation;
//   - total counts bindings;
//   - allowed is how many more voluntary disruptions the budget permits, never below 0:
//     ceil(maxUnavailable of N) − (total − available), or available − ceil(minAvailable of N),
//     percentages taken of numberOfClusters and rounded up (an integer is absolute);
//   - misconfigured reports a budget that blocks every eviction: maxUnavailable or a
//     percentage minAvailable on a PickAll placement (PDB-VALIDITY), or a spec the API would
//     have rejected (both or neither field set, a malformed value).
//
// Choices where the spec is silent or contradicts itself (see the package doc):
//   - a minAvailable that comes to 0 protects nothing, so allowed = total (PDB-API:
//     "minAvailable=0 → disruption always allowed"), not available − 0;
//   - no budget protects nothing: allowed = total;
//   - a PickFixed placement cannot be evicted, so its budget is a no-op: allowed = 0, not
//     misconfigured;
//   - an empty placement type is PickAll, the API default.
func Allowed(placementType placement.PlacementType, numberOfClusters int, bindings []*placement.Binding, budget *DisruptionBudget) (allowed, available, total int, misconfigured bool) {
	for _, b := range bindings {
		if b == nil {
			continue
		}
		total++
		if isAvailable(b) {
			available++
		}
	}
	if placementType == "" {
		placementType = placement.PickAll
	}
	switch {
	case placementType == placement.PickFixed:
		return 0, available, total, false
	case budget == nil:
		return total, available, total, false
	}
	spec := budget.Spec
	if !wellFormed(spec) {
		return 0, available, total, true
	}
	if mutant.On("eviction.pickAllBudgetAccepted") {
		placementType = placement.PickN
	}
	if placementType == placement.PickAll && (spec.MaxUnavailable != nil || isPercent(spec.MinAvailable)) {
		return 0, available, total, true
	}
	n := max(numberOfClusters, 0)
	if spec.MaxUnavailable != nil {
		allowed = scaled(spec.MaxUnavailable, n) - (total - available)
		if mutant.On("eviction.unavailableNotSubtracted") {
			allowed = scaled(spec.MaxUnavailable, n)
		}
	} else if minAvailable := scaled(spec.MinAvailable, n); minAvailable == 0 {
		allowed = total
	} else {
		allowed = available - minAvailable
		if mutant.On("eviction.minAvailableOffByOne") {
			allowed++
		}
	}
	return max(allowed, 0), available, total, false
}

// isPercent reports whether v is written as a percentage.
func isPercent(v *intstr.IntOrString) bool {
	return v != nil && v.Type == intstr.String && strings.HasSuffix(v.StrVal, "%")
}

// scaled resolves a well-formed value (see validateValue): an integer, in either spelling,
// is absolute; a percentage is taken of n and rounded up.
func scaled(v *intstr.IntOrString, n int) int {
	if v.Type == intstr.String && !strings.HasSuffix(v.StrVal, "%") {
		i, _ := strconv.Atoi(v.StrVal)
		return i
	}
	s, _ := intstr.GetScaledValueFromIntOrPercent(v, n, true)
	return s
}

// isAvailable: the binding's Available condition is True at the binding's generation.
func isAvailable(b *placement.Binding) bool {
	return condition.IsTrue(b.Conditions, condition.TypeAvailable, b.Generation)
}

// isFailed: the binding's Applied or Available condition is False at its generation.
func isFailed(b *placement.Binding) bool {
	for _, typ := range []string{condition.TypeApplied, condition.TypeAvailable} {
		if c, ok := condition.Find(b.Conditions, typ); ok && c.Status == metav1.ConditionFalse && c.ObservedGeneration == b.Generation {
			return true
		}
	}
	return false
}

// isReportDiff: the binding was rolled with an apply strategy that only reports
// differences (ReportDiff, APPLY-REPORTDIFF); such a binding is evicted without a budget
// check.
func isReportDiff(b *placement.Binding) bool {
	return b.ApplyStrategy.TypeOrDefault().ReportsOnly()
}
