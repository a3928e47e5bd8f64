package invariants

// Rollout invariant (4): no eviction executes against its disruption budget, with the budget
// arithmetic written from the spec (PDB-ACCOUNTING, PDB-VALIDITY, EVICT-EXECUTION) rather than
// taken from model/eviction.

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/placement"
)

// invBudget is PDB-ACCOUNTING and PDB-VALIDITY for a placement's bindings (all states):
// available = Available True at the binding's generation, total = all bindings;
// maxUnavailable → allowed = ceil(maxUnavailable of N) − (total − available); minAvailable
// → allowed = available − minAvailable (an integer, or for PickN ceil(% of N)); an eviction
// proceeds iff allowed > 0. Percentages are of the CRP's numberOfClusters (PDB-API). A
// budget with maxUnavailable or a percentage minAvailable on PickAll is misconfigured. Where
// the spec says minAvailable 0 allows every disruption (PDB-API), allowed = total.
func invBudget(typ placement.PlacementType, numberOfClusters int, bindings []placement.Binding, b *eviction.DisruptionBudget) (allowed, available, total int, misconfigured bool) {
	for i := range bindings {
		total++
		if condition.IsTrue(bindings[i].Conditions, condition.TypeAvailable, bindings[i].Generation) {
			available++
		}
	}
	if b == nil {
		return total, available, total, false
	}
	isPct := func(v *intstr.IntOrString) bool {
		return v != nil && v.Type == intstr.String && strings.HasSuffix(v.StrVal, "%")
	}
	spec := b.Spec
	if (spec.MaxUnavailable == nil) == (spec.MinAvailable == nil) {
		return 0, available, total, true
	}
	if typ == placement.PickAll && (spec.MaxUnavailable != nil || isPct(spec.MinAvailable)) {
		return 0, available, total, true
	}
	if spec.MaxUnavailable != nil {
		allowed = invScale(spec.MaxUnavailable, numberOfClusters, "") - (total - available)
	} else if m := invScale(spec.MinAvailable, numberOfClusters, ""); m == 0 {
		allowed = total
	} else {
		allowed = available - m
	}
	return allowed, available, total, false
}

// invEvictionBudget: no eviction executes against its budget. For every eviction
// reconciled in this event, against the bindings as they were just before:
//
//   - a binding was deleted only if the eviction says Executed=True, it is the only
//     binding deleted, it is the placement's binding on the named cluster, and one of
//     EVICT-EXECUTION's reasons holds: the binding failed (Applied or Available False at
//     its generation) or reports diffs; or it is present (Bound, or Unscheduled after Bound)
//     and there is no budget, or the budget (invBudget) is well configured and allows > 0;
//   - the Executed message names the reason that held: "no budget" only without a budget,
//     "allowed by budget, availablePlacements X, totalPlacements Y" only when the budget
//     allows, with X and Y as counted; "blocked by budget" only when it does not allow
//     (with the right X and Y), "misconfigured" only for a misconfigured budget.
func (ro *Rollout) evictionBudget(r Reader, d *diff, _ time.Time) error {
	var deleted []placement.Binding
	for _, name := range sortedKeys(d.placements) {
		deleted = append(deleted, d.placements[name].deleted...)
	}
	if len(d.evicted) == 0 {
		return nil
	}
	if len(d.evicted) > 1 {
		return fmt.Errorf("invariant evictionBudget: %d evictions changed in one event", len(d.evicted))
	}
	e := d.evicted[0]
	fail := func(format string, args ...any) error {
		return fmt.Errorf("invariant evictionBudget: eviction %s (placement %s, cluster %s): %s", e.Name, e.Spec.PlacementName, e.Spec.ClusterName, fmt.Sprintf(format, args...))
	}
	executed, _ := condition.Find(e.Status.Conditions, eviction.TypeExecuted)
	valid, _ := condition.Find(e.Status.Conditions, eviction.TypeValid)
	if executed.Status != metav1.ConditionTrue && len(deleted) > 0 {
		return fail("not executed (%s: %s) but binding(s) %v were deleted", executed.Status, executed.Message, invNames(deleted))
	}
	before := ro.beforeOf(e.Spec.PlacementName)
	var target *placement.Binding
	targets := 0
	for i := range before {
		if before[i].TargetCluster == e.Spec.ClusterName {
			target = &before[i]
			targets++
		}
	}
	if valid.Status == metav1.ConditionFalse {
		if valid.Message == eviction.MessageInvalidMissingBinding && targets != 0 {
			return fail("invalid for a missing binding, but %s existed", target.Name)
		}
		return nil
	}
	p := r.Placement(e.Spec.PlacementName)
	if p == nil || targets != 1 {
		if executed.Status != "" {
			return fail("decided (%s) with %d binding(s) on the cluster", executed.Message, targets)
		}
		return nil
	}
	typ := p.CRP.Spec.Policy.Type()
	n := 0
	if p.CRP.Spec.Policy != nil && p.CRP.Spec.Policy.NumberOfClusters != nil {
		n = int(*p.CRP.Spec.Policy.NumberOfClusters)
	}
	budget := r.DisruptionBudget(e.Spec.PlacementName)
	allowed, available, total, misconfigured := invBudget(typ, n, before, budget)
	failed := false
	for _, t := range []string{condition.TypeApplied, condition.TypeAvailable} {
		if c, ok := condition.Find(target.Conditions, t); ok && c.Status == metav1.ConditionFalse && c.ObservedGeneration == target.Generation {
			failed = true
		}
	}
	reportDiff := target.ApplyStrategy.TypeOrDefault().ReportsOnly()
	present := invHolds(target)
	budgetText := fmt.Sprintf("budget %+v: allowed %d, available %d, total %d, misconfigured %v (numberOfClusters %d)", budgetSpec(budget), allowed, available, total, misconfigured, n)

	if executed.Status == metav1.ConditionTrue {
		ro.Stats.EvictionsExecuted++
		if !target.Deleting && (len(deleted) != 1 || deleted[0].Name != target.Name) {
			return fail("executed, but deleted %v instead of exactly %s", invNames(deleted), target.Name)
		}
		justified := target.Deleting || failed || reportDiff ||
			(present && (budget == nil || (!misconfigured && allowed > 0)))
		if !justified {
			return fail("executed (%s) against the budget: binding %s state %s (previous %s), failed %v, %s",
				executed.Message, target.Name, target.State, target.PreviousState, failed, budgetText)
		}
		var x, y int
		switch {
		case executed.Message == eviction.MessageAllowedNoBudget:
			if budget != nil {
				return fail("says no budget is specified, but %s exists", budgetText)
			}
		case executed.Message == eviction.MessageAllowedPlacementFailed:
			if !failed && !reportDiff {
				return fail("says the placement failed, but binding %s has not failed", target.Name)
			}
		case invScan(executed.Message, eviction.FormatAllowedByBudget, &x, &y):
			ro.Stats.EvictionsByBudget++
			if budget == nil || misconfigured || allowed <= 0 || x != available || y != total {
				return fail("says %q, but before it %s", executed.Message, budgetText)
			}
		}
		return nil
	}
	if executed.Status == metav1.ConditionFalse {
		ro.Stats.EvictionsBlocked++
		var x, y int
		switch {
		case invScan(executed.Message, eviction.FormatBlockedByBudget, &x, &y):
			if budget == nil || misconfigured || allowed > 0 || x != available || y != total || failed || !present {
				return fail("says %q, but before it binding %s failed %v present %v, %s", executed.Message, target.Name, failed, present, budgetText)
			}
		case executed.Message == eviction.MessageBlockedMisconfigured:
			if !misconfigured || failed {
				return fail("says the budget is misconfigured, but %s", budgetText)
			}
		case executed.Message == eviction.MessageBlockedNotPropagated:
			if present || failed {
				return fail("says the placement has not propagated, but binding %s is %s (previous %s), failed %v", target.Name, target.State, target.PreviousState, failed)
			}
		}
	}
	return nil
}

func budgetSpec(b *eviction.DisruptionBudget) string {
	if b == nil {
		return "none"
	}
	f := func(v *intstr.IntOrString) string {
		if v == nil {
			return "-"
		}
		return v.String()
	}
	return fmt.Sprintf("{maxUnavailable %s, minAvailable %s}", f(b.Spec.MaxUnavailable), f(b.Spec.MinAvailable))
}

// invScan parses msg with a two-%d format, reporting whether it matched.
func invScan(msg, format string, x, y *int) bool {
	n, err := fmt.Sscanf(msg, format, x, y)
	return err == nil && n == 2
}
