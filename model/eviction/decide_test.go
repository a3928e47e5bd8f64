package eviction_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/placement"
)

// TestDecide is the eviction table: every validation message, every execution outcome, the
// acceptance vectors (EVICT-1, PDB-1, PDB-2, DC-15, the TSG) and the spec's open points.
func TestDecide(t *testing.T) {
	const c1, c2, c3, c4 = "kind-cluster-1", "kind-cluster-2", "kind-cluster-3", "kind-cluster-4"
	deletingCRP := pickN(1)
	deletingCRP.Deleting = true
	untyped := pickAll()
	untyped.Type = ""
	both := maxUnavailable(num(1))
	both.Spec.MinAvailable = both.Spec.MaxUnavailable

	cases := []struct {
		name string
		in   eviction.Input
		want eviction.Decision
	}{
		// EVICT-VALIDATION, in order.
		{"invalid: placement missing", eviction.Input{Eviction: ev, Bindings: bindings(bound(c1))},
			invalid(eviction.MessageInvalidMissingPlacement)},
		{"invalid: placement deleting", eviction.Input{Eviction: ev, Placement: deletingCRP, Bindings: bindings(bound(c1))},
			invalid(eviction.MessageInvalidDeletingPlacement)},
		{"invalid: PickFixed", eviction.Input{Eviction: ev, Placement: pickFixed(), Bindings: bindings(bound(c1))},
			invalid(eviction.MessageInvalidPickFixed)},
		{"invalid: PickFixed, its budget is a no-op", eviction.Input{Eviction: ev, Placement: pickFixed(), Bindings: bindings(bound(c1), bound(c2)), Budget: minAvailable(num(0))},
			invalid(eviction.MessageInvalidPickFixed)},
		{"invalid: no binding on the cluster", eviction.Input{Eviction: ev, Placement: pickN(1), Bindings: bindings(bound(c2))},
			invalid(eviction.MessageInvalidMissingBinding)},
		{"invalid: placement has no bindings at all", eviction.Input{Eviction: ev, Placement: pickAll()},
			invalid(eviction.MessageInvalidMissingBinding)},
		{"invalid: two bindings on the cluster while one is re-created", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(bound(c1, deleting), binding(c1, placement.Scheduled, attempt(1)))},
			invalid(eviction.MessageInvalidMultipleBindings)},
		{"invalid: deleting placement checked before PickFixed", eviction.Input{Eviction: ev, Placement: &eviction.Placement{Name: crpName, Type: placement.PickFixed, Deleting: true}},
			invalid(eviction.MessageInvalidDeletingPlacement)},

		// EVICT-EXECUTION, in order.
		{"executed: binding already deleting, not deleted again", eviction.Input{Eviction: ev, Placement: pickN(2),
			Bindings: bindings(bound(c1, deleting), bound(c2)), Budget: minAvailable(num(2))},
			executed(eviction.MessageAllowedBindingDeleting, "", counts{2, 2, 0})},
		{"executed: deleting beats not yet Bound", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(binding(c1, placement.Scheduled, deleting))},
			executed(eviction.MessageAllowedBindingDeleting, "", counts{0, 1, 1})},
		{"executed: Applied False, blocking budget not checked", eviction.Input{Eviction: ev, Placement: pickN(2),
			Bindings: bindings(bound(c1, applyFailed), bound(c2)), Budget: minAvailable(num(2))},
			executed(eviction.MessageAllowedPlacementFailed, name(c1), counts{1, 2, 0})},
		{"executed: Available False, blocking budget not checked", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1, availableFailed), bound(c2)), Budget: minAvailable(num(1))},
			executed(eviction.MessageAllowedPlacementFailed, name(c1), counts{1, 2, 0})},
		{"executed: ReportDiff, blocking budget not checked", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(bound(c1, reportDiff)), Budget: minAvailable(num(1))},
			executed(eviction.MessageAllowedPlacementFailed, name(c1), counts{0, 1, 0})},
		{"executed: failed beats misconfigured budget", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1, applyFailed)), Budget: maxUnavailable(num(1))},
			executed(eviction.MessageAllowedPlacementFailed, name(c1), counts{0, 1, 0})},
		{"not failed: Available False observed at an older generation", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(bound(c1, func(b *placement.Binding) { b.Generation = 2 }, cond("Applied", "True", 2), cond("Available", "False", 1)))},
			executed(eviction.MessageAllowedNoBudget, name(c1), counts{0, 1, 1})},
		{"blocked: binding still Scheduled (TSG)", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(binding(c1, placement.Scheduled))},
			blocked(eviction.MessageBlockedNotPropagated, counts{0, 1, 1})},
		{"blocked: Unscheduled before it was ever Bound", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(binding(c1, placement.Unscheduled, previously(placement.Scheduled)))},
			blocked(eviction.MessageBlockedNotPropagated, counts{0, 1, 1})},
		{"blocked: not yet Bound beats misconfigured budget", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(binding(c1, placement.Scheduled)), Budget: maxUnavailable(num(1))},
			blocked(eviction.MessageBlockedNotPropagated, counts{0, 1, 0})},
		{"executed: Unscheduled after Bound is present, no budget", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(bound(c1, previously(placement.Bound)))},
			executed(eviction.MessageAllowedNoBudget, name(c1), counts{1, 1, 1})},
		{"EVICT-1: PickN 1, no budget, executed and binding deleted", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(bound(c1))},
			executed(eviction.MessageAllowedNoBudget, name(c1), counts{1, 1, 1})},
		{"DC-15: how-to as written (PickAll, cluster tainted first), no budget, executed", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1))},
			executed(eviction.MessageAllowedNoBudget, name(c1), counts{1, 1, 1})},

		// PDB-VALIDITY: misconfigured budgets on PickAll.
		{"PDB-2: PickAll with minAvailable 50% is misconfigured", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1), bound(c2)), Budget: minAvailable(pct("50%"))},
			blocked(eviction.MessageBlockedMisconfigured, counts{2, 2, 0})},
		{"PickAll with maxUnavailable int is misconfigured", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1), bound(c2)), Budget: maxUnavailable(num(1))},
			blocked(eviction.MessageBlockedMisconfigured, counts{2, 2, 0})},
		{"PickAll with maxUnavailable 100% is misconfigured", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1), bound(c2)), Budget: maxUnavailable(pct("100%"))},
			blocked(eviction.MessageBlockedMisconfigured, counts{2, 2, 0})},
		{"empty placement type is PickAll: minAvailable 50% misconfigured", eviction.Input{Eviction: ev, Placement: untyped,
			Bindings: bindings(bound(c1), bound(c2)), Budget: minAvailable(pct("50%"))},
			blocked(eviction.MessageBlockedMisconfigured, counts{2, 2, 0})},
		{"choice: a budget the API would reject blocks as misconfigured, even for PickN", eviction.Input{Eviction: ev, Placement: pickN(2),
			Bindings: bindings(bound(c1), bound(c2)), Budget: both},
			blocked(eviction.MessageBlockedMisconfigured, counts{2, 2, 0})},

		// PDB-ACCOUNTING.
		{"PDB-1: PickN 1, minAvailable 1, 1 available: blocked", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(bound(c1)), Budget: minAvailable(num(1))},
			blockedBy(counts{1, 1, 0})},
		{"TSG: PickAll, minAvailable 2, 2 of 2 available: blocked", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1), bound(c2)), Budget: minAvailable(num(2))},
			blockedBy(counts{2, 2, 0})},
		{"TSG fix: PickAll, minAvailable lowered to 1: allowed", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1), bound(c2)), Budget: minAvailable(num(1))},
			allowedBy(counts{2, 2, 1})},
		{"PickAll, minAvailable int 1 of 3: allowed", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1), bound(c2), bound(c3)), Budget: minAvailable(num(1))},
			allowedBy(counts{3, 3, 2})},
		{"choice: PickAll, minAvailable \"2\" is an integer, not misconfigured", eviction.Input{Eviction: ev, Placement: pickAll(),
			Bindings: bindings(bound(c1), bound(c2), bound(c3)), Budget: minAvailable(pct("2"))},
			allowedBy(counts{3, 3, 1})},
		{"PickN 3, maxUnavailable 1, all available: allowed", eviction.Input{Eviction: ev, Placement: pickN(3),
			Bindings: bindings(bound(c1), bound(c2), bound(c3)), Budget: maxUnavailable(num(1))},
			allowedBy(counts{3, 3, 1})},
		{"PickN 3, maxUnavailable 1, another cluster unavailable: blocked", eviction.Input{Eviction: ev, Placement: pickN(3),
			Bindings: bindings(bound(c1), bound(c2, notAvailable), bound(c3)), Budget: maxUnavailable(num(1))},
			blockedBy(counts{2, 3, 0})},
		{"PickN 3, maxUnavailable 0: no voluntary disruption", eviction.Input{Eviction: ev, Placement: pickN(3),
			Bindings: bindings(bound(c1), bound(c2), bound(c3)), Budget: maxUnavailable(num(0))},
			blockedBy(counts{3, 3, 0})},
		{"PickN 3, maxUnavailable 10% rounds up to 1: allowed", eviction.Input{Eviction: ev, Placement: pickN(3),
			Bindings: bindings(bound(c1), bound(c2), bound(c3)), Budget: maxUnavailable(pct("10%"))},
			allowedBy(counts{3, 3, 1})},
		{"PickN 4, maxUnavailable 50% (2), one stale Available: allowed", eviction.Input{Eviction: ev, Placement: pickN(4),
			Bindings: bindings(bound(c1), bound(c2), bound(c3), bound(c4, stale)), Budget: maxUnavailable(pct("50%"))},
			allowedBy(counts{3, 4, 1})},
		{"PickN 4, maxUnavailable 25% (1), one stale Available: blocked", eviction.Input{Eviction: ev, Placement: pickN(4),
			Bindings: bindings(bound(c1), bound(c2), bound(c3), bound(c4, stale)), Budget: maxUnavailable(pct("25%"))},
			blockedBy(counts{3, 4, 0})},
		{"PickN 3, minAvailable 50% (2), 3 available: allowed", eviction.Input{Eviction: ev, Placement: pickN(3),
			Bindings: bindings(bound(c1), bound(c2), bound(c3)), Budget: minAvailable(pct("50%"))},
			allowedBy(counts{3, 3, 1})},
		{"PickN 3, minAvailable 50% (2), 2 available: blocked", eviction.Input{Eviction: ev, Placement: pickN(3),
			Bindings: bindings(bound(c1), bound(c2), bound(c3, notAvailable)), Budget: minAvailable(pct("50%"))},
			blockedBy(counts{2, 3, 0})},
		{"PickN 3, minAvailable 2, evicting the one unavailable binding is still blocked", eviction.Input{Eviction: ev, Placement: pickN(3),
			Bindings: bindings(bound(c1, notAvailable), bound(c2), bound(c3)), Budget: minAvailable(num(2))},
			blockedBy(counts{2, 3, 0})},
		{"deleting and Unscheduled bindings of other clusters count", eviction.Input{Eviction: ev, Placement: pickN(2),
			Bindings: bindings(bound(c1), bound(c2, deleting), bound(c3, previously(placement.Bound))), Budget: minAvailable(num(2))},
			allowedBy(counts{3, 3, 1})},

		// Open point 1: minAvailable 0 always allows (PDB-API), even with nothing available.
		{"quirk 1: minAvailable 0, nothing available: allowed (0-0=0 would block)", eviction.Input{Eviction: ev, Placement: pickN(2),
			Bindings: bindings(bound(c1, stale), bound(c2, notAvailable)), Budget: minAvailable(num(0))},
			allowedBy(counts{0, 2, 2})},
		{"quirk 1: minAvailable 0% of PickN, nothing available: allowed", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(bound(c1, stale)), Budget: minAvailable(pct("0%"))},
			allowedBy(counts{0, 1, 1})},
		{"quirk 1: minAvailable 0 still waits for Bound", eviction.Input{Eviction: ev, Placement: pickN(1),
			Bindings: bindings(binding(c1, placement.Scheduled)), Budget: minAvailable(num(0))},
			blocked(eviction.MessageBlockedNotPropagated, counts{0, 1, 1})},

		// Reconciled once: terminal evictions are left alone.
		{"terminal: already reconciled, would execute now", eviction.Input{Eviction: ev, Reconciled: true, Placement: pickN(1),
			Bindings: bindings(bound(c1))},
			eviction.Decision{}},
		{"terminal: invalid stays invalid though the placement appeared", eviction.Input{Eviction: ev, Reconciled: true, Placement: pickAll(),
			Bindings: bindings(bound(c1))},
			eviction.Decision{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := eviction.Decide(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Decide(%s) = %v, want %v\n(-want +got):\n%s", tc.name, got, tc.want, diff)
			}
			if got.Noop() != tc.in.Reconciled {
				t.Errorf("Decide(%s).Noop() = %v, want %v", tc.name, got.Noop(), tc.in.Reconciled)
			}
		})
	}
}

func TestDecisionString(t *testing.T) {
	cases := []struct {
		in   eviction.Decision
		want string
	}{
		{eviction.Decision{}, "{noop}"},
		{invalid(eviction.MessageInvalidPickFixed), `{Valid=False(ClusterResourcePlacementEvictionInvalid: "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction")}`},
		{blockedBy(counts{1, 1, 0}), `{Valid=True(ClusterResourcePlacementEvictionValid: "Eviction is valid") Executed=False(ClusterResourcePlacementEvictionNotExecuted: "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: 1, totalPlacements: 1") available=1 total=1 allowed=0}`},
		{executed(eviction.MessageAllowedNoBudget, "b", counts{1, 1, 1}), `{Valid=True(ClusterResourcePlacementEvictionValid: "Eviction is valid") Executed=True(ClusterResourcePlacementEvictionExecuted: "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified") delete=b available=1 total=1 allowed=1}`},
	}
	for _, tc := range cases {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
}

// The exact strings of EVICT-VALIDATION, EVICT-EXECUTION and Appendix A, pinned
// independently of the constants the table uses.
func TestExactStrings(t *testing.T) {
	for got, want := range map[string]string{
		eviction.TypeValid:                                "Valid",
		eviction.TypeExecuted:                             "Executed",
		eviction.ReasonValid:                              "ClusterResourcePlacementEvictionValid",
		eviction.ReasonInvalid:                            "ClusterResourcePlacementEvictionInvalid",
		eviction.ReasonExecuted:                           "ClusterResourcePlacementEvictionExecuted",
		eviction.ReasonNotExecuted:                        "ClusterResourcePlacementEvictionNotExecuted",
		eviction.MessageValid:                             "Eviction is valid",
		eviction.MessageInvalidMissingPlacement:           "Failed to find ClusterResourcePlacement targeted by eviction",
		eviction.MessageInvalidDeletingPlacement:          "Found deleting ClusterResourcePlacement targeted by eviction",
		eviction.MessageInvalidPickFixed:                  "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction",
		eviction.MessageInvalidMissingBinding:             "Failed to find scheduler decision for placement in cluster targeted by eviction",
		eviction.MessageInvalidMultipleBindings:           "Found more than one scheduler decision for placement in cluster targeted by eviction",
		eviction.MessageAllowedNoBudget:                   "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified",
		eviction.MessageAllowedBindingDeleting:            "Eviction is allowed, resources propagated by placement is currently being removed from cluster targeted by eviction",
		eviction.MessageAllowedPlacementFailed:            "Eviction is allowed, placement has failed",
		eviction.MessageBlockedMisconfigured:              "Eviction is blocked by misconfigured ClusterResourcePlacementDisruptionBudget, either MaxUnavailable is specified or MinAvailable is specified as a percentage for PickAll ClusterResourcePlacement",
		eviction.MessageBlockedNotPropagated:              "Eviction is blocked, placement has not propagated resources to target cluster yet",
		fmt.Sprintf(eviction.FormatAllowedByBudget, 2, 3): "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: 2, totalPlacements: 3",
		fmt.Sprintf(eviction.FormatBlockedByBudget, 1, 1): "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: 1, totalPlacements: 1",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
