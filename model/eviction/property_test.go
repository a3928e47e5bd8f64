package eviction_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/placement"
)

var propClusters = []string{"kind-cluster-1", "kind-cluster-2", "kind-cluster-3", "kind-cluster-4"}

// propDrawBinding draws a binding on cluster. A focused binding is healthy enough for the
// budget to matter: Bound or Unscheduled after Bound, not deleting, never failed, with
// ClientSideApply; its Available condition is True, Unknown, stale or missing.
func propDrawBinding(t *rapid.T, i int, cluster string, focused bool) *placement.Binding {
	label := func(s string) string { return fmt.Sprintf("%s%d", s, i) }
	if focused {
		b := &placement.Binding{
			Name: placement.BindingName(crpName, cluster, i), Placement: crpName, TargetCluster: cluster,
			State: placement.Bound, Generation: 2,
			Conditions: []condition.Timed{{Condition: condition.Condition{Type: condition.TypeApplied, Status: metav1.ConditionTrue}, ObservedGeneration: 2}},
		}
		if rapid.IntRange(0, 4).Draw(t, label("unscheduled")) == 0 {
			b.State, b.PreviousState = placement.Unscheduled, placement.Bound
		}
		switch rapid.IntRange(0, 5).Draw(t, label("available")) {
		case 0:
		case 1:
			b.Conditions = append(b.Conditions, condition.Timed{Condition: condition.Condition{Type: condition.TypeAvailable, Status: metav1.ConditionUnknown}, ObservedGeneration: 2})
		case 2:
			b.Conditions = append(b.Conditions, condition.Timed{Condition: condition.Condition{Type: condition.TypeAvailable, Status: metav1.ConditionTrue}, ObservedGeneration: 1})
		default:
			b.Conditions = append(b.Conditions, condition.Timed{Condition: condition.Condition{Type: condition.TypeAvailable, Status: metav1.ConditionTrue}, ObservedGeneration: 2})
		}
		return b
	}
	b := &placement.Binding{
		Name:          placement.BindingName(crpName, cluster, i),
		Placement:     crpName,
		TargetCluster: cluster,
		State:         rapid.SampledFrom([]placement.BindingState{placement.Scheduled, placement.Bound, placement.Bound, placement.Unscheduled}).Draw(t, label("state")),
		Deleting:      rapid.IntRange(0, 5).Draw(t, label("deleting")) == 0,
		Generation:    int64(rapid.IntRange(1, 2).Draw(t, label("generation"))),
	}
	if b.State == placement.Unscheduled {
		b.PreviousState = rapid.SampledFrom([]placement.BindingState{"", placement.Scheduled, placement.Bound}).Draw(t, label("previous"))
	}
	if rapid.IntRange(0, 7).Draw(t, label("reportDiff")) == 0 {
		b.ApplyStrategy = &placement.ApplyStrategy{Type: placement.ReportDiff}
	}
	for _, typ := range []string{condition.TypeApplied, condition.TypeAvailable} {
		status := rapid.SampledFrom([]metav1.ConditionStatus{"", metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}).Draw(t, label(typ))
		if status == "" {
			continue
		}
		gen := int64(rapid.IntRange(1, 2).Draw(t, label(typ+"Gen")))
		b.Conditions = append(b.Conditions, condition.Timed{Condition: condition.Condition{Type: typ, Status: status}, ObservedGeneration: gen})
	}
	return b
}

func propDrawValue(t *rapid.T, label string) *intstr.IntOrString {
	var v intstr.IntOrString
	switch rapid.IntRange(0, 9).Draw(t, label+"Kind") {
	case 0, 1, 2, 3:
		v = intstr.FromInt32(int32(rapid.IntRange(0, 5).Draw(t, label+"Int")))
	case 4, 5, 6, 7:
		v = intstr.FromString(rapid.SampledFrom([]string{"0%", "10%", "25%", "33%", "34%", "50%", "75%", "99%", "100%"}).Draw(t, label+"Pct"))
	case 8:
		v = intstr.FromString(strconv.Itoa(rapid.IntRange(0, 5).Draw(t, label+"Digits")))
	default:
		v = intstr.FromString(rapid.SampledFrom([]string{"half", "101%", "-1"}).Draw(t, label+"Bad"))
	}
	return &v
}

// propDrawInput draws an eviction's inputs. A focused input is valid: the placement exists,
// is PickN or PickAll and not deleting, and its bindings sit on distinct clusters, the
// evicted one among them; so the budget decides.
func propDrawInput(t *rapid.T, focused bool) eviction.Input {
	in := eviction.Input{Eviction: ev}
	if focused {
		in.Placement = &eviction.Placement{
			Name:             crpName,
			Type:             rapid.SampledFrom([]placement.PlacementType{placement.PickN, placement.PickN, placement.PickAll, ""}).Draw(t, "type"),
			NumberOfClusters: rapid.IntRange(0, 8).Draw(t, "numberOfClusters"),
		}
		n := rapid.IntRange(1, 8).Draw(t, "bindings")
		for i := range n {
			in.Bindings = append(in.Bindings, propDrawBinding(t, i, fmt.Sprintf("kind-cluster-%d", i+1), true))
		}
		in.Budget = propDrawBudget(t)
		return in
	}
	if rapid.IntRange(0, 15).Draw(t, "missingPlacement") > 0 {
		in.Placement = &eviction.Placement{
			Name:             crpName,
			Type:             rapid.SampledFrom([]placement.PlacementType{placement.PickN, placement.PickN, placement.PickAll, placement.PickAll, "", placement.PickFixed}).Draw(t, "type"),
			NumberOfClusters: rapid.IntRange(0, 6).Draw(t, "numberOfClusters"),
			Deleting:         rapid.IntRange(0, 15).Draw(t, "placementDeleting") == 0,
		}
	}
	n := rapid.IntRange(0, 6).Draw(t, "bindings")
	for i := range n {
		in.Bindings = append(in.Bindings, propDrawBinding(t, i, rapid.SampledFrom(propClusters).Draw(t, fmt.Sprintf("cluster%d", i)), false))
	}
	in.Budget = propDrawBudget(t)
	in.Reconciled = rapid.IntRange(0, 9).Draw(t, "reconciled") == 0
	return in
}

func propDrawBudget(t *rapid.T) *eviction.DisruptionBudget {
	switch rapid.IntRange(0, 5).Draw(t, "budget") {
	case 0:
		return nil
	case 1, 2:
		return minAvailable(*propDrawValue(t, "min"))
	case 3, 4:
		return maxUnavailable(*propDrawValue(t, "max"))
	default:
		return &eviction.DisruptionBudget{Spec: eviction.DisruptionBudgetSpec{MinAvailable: propDrawValue(t, "bothMin"), MaxUnavailable: propDrawValue(t, "bothMax")}}
	}
}

// resolve is the test's own reading of a budget value: an integer is absolute, a
// percentage is of n, rounded up.
func resolve(v *intstr.IntOrString, n int) int {
	if v.Type == intstr.Int {
		return int(v.IntVal)
	}
	if p, ok := strings.CutSuffix(v.StrVal, "%"); ok {
		f, _ := strconv.ParseFloat(p, 64)
		return int(math.Ceil(f * float64(n) / 100))
	}
	i, _ := strconv.Atoi(v.StrVal)
	return i
}

// An eviction executed against a budget never takes the placement below what the budget
// protects, and one blocked by the budget would have: for minAvailable, available−1 ≥
// minAvailable after evicting an available binding; for maxUnavailable, the unavailable
// placements plus the evicted one stay within maxUnavailable.
func TestPropertyBudgetProtects(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propDrawInput(t, rapid.IntRange(0, 3).Draw(t, "focused") > 0)
		d := eviction.Decide(in)
		if d.Executed == nil {
			return
		}
		byBudget := strings.HasPrefix(d.Executed.Message, "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget")
		blockedByBudget := strings.HasPrefix(d.Executed.Message, "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget")
		if !byBudget && !blockedByBudget {
			return
		}
		available, total, targetAvailable := 0, len(in.Bindings), false
		for _, b := range in.Bindings {
			if condition.IsTrue(b.Conditions, condition.TypeAvailable, b.Generation) {
				available++
				if b.TargetCluster == in.Eviction.Spec.ClusterName {
					targetAvailable = true
				}
			}
		}
		if d.Available != available || d.Total != total {
			t.Fatalf("Decide = %v, counted available=%d total=%d", d, available, total)
		}
		n := 0
		if in.Placement.Type == placement.PickN {
			n = in.Placement.NumberOfClusters
		}
		spec := in.Budget.Spec
		switch {
		case spec.MinAvailable != nil:
			m := resolve(spec.MinAvailable, n)
			if byBudget && targetAvailable && available-1 < m {
				t.Fatalf("Decide = %v: evicting an available binding leaves %d available, minAvailable %d", d, available-1, m)
			}
			if blockedByBudget && targetAvailable && available-1 >= m && m > 0 {
				t.Fatalf("Decide = %v: blocked though %d would stay available, minAvailable %d", d, available-1, m)
			}
			if blockedByBudget && m == 0 {
				t.Fatalf("Decide = %v: blocked by minAvailable 0", d)
			}
		case spec.MaxUnavailable != nil:
			m := resolve(spec.MaxUnavailable, n)
			if byBudget && (total-available)+1 > m {
				t.Fatalf("Decide = %v: %d unavailable plus the evicted one exceeds maxUnavailable %d", d, total-available, m)
			}
			if blockedByBudget && (total-available)+1 <= m {
				t.Fatalf("Decide = %v: blocked though %d unavailable plus one is within maxUnavailable %d", d, total-available, m)
			}
		}
		if byBudget != (d.DeleteBinding != "") {
			t.Fatalf("Decide = %v: budget outcome and deletion disagree", d)
		}
	})
}

// Decisions are shaped as the spec says, and do not depend on the order of the bindings.
func TestPropertyDecisionShape(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := propDrawInput(t, rapid.Bool().Draw(t, "focused"))
		d := eviction.Decide(in)

		perm := rapid.Permutation(in.Bindings).Draw(t, "permutation")
		shuffled := in
		shuffled.Bindings = perm
		if diff := cmp.Diff(d, eviction.Decide(shuffled)); diff != "" {
			t.Fatalf("Decide depends on binding order (-original +shuffled):\n%s", diff)
		}

		if in.Reconciled {
			if !d.Noop() {
				t.Fatalf("Decide(reconciled) = %v, want noop", d)
			}
			return
		}
		if d.Valid == nil || d.Valid.Type != eviction.TypeValid {
			t.Fatalf("Decide = %v: no Valid condition", d)
		}
		if d.Valid.Status == metav1.ConditionFalse {
			if d.Executed != nil || d.DeleteBinding != "" || d.Valid.Reason != eviction.ReasonInvalid {
				t.Fatalf("Decide = %v: an invalid eviction must do nothing more", d)
			}
			return
		}
		if d.Executed == nil || d.Executed.Type != eviction.TypeExecuted {
			t.Fatalf("Decide = %v: valid without Executed", d)
		}
		var target *placement.Binding
		for _, b := range in.Bindings {
			if b.TargetCluster == in.Eviction.Spec.ClusterName {
				if target != nil {
					t.Fatalf("Decide = %v: valid with two bindings on the cluster", d)
				}
				target = b
			}
		}
		switch {
		case target == nil:
			t.Fatalf("Decide = %v: valid without a binding on the cluster", d)
		case d.Executed.Status == metav1.ConditionTrue && d.Executed.Reason != eviction.ReasonExecuted,
			d.Executed.Status == metav1.ConditionFalse && d.Executed.Reason != eviction.ReasonNotExecuted:
			t.Fatalf("Decide = %v: reason does not match status", d)
		case d.DeleteBinding != "" && (d.DeleteBinding != target.Name || target.Deleting || d.Executed.Status != metav1.ConditionTrue):
			t.Fatalf("Decide = %v: deletes something other than the live target %s", d, target.Name)
		case d.DeleteBinding == "" && d.Executed.Status == metav1.ConditionTrue && !target.Deleting:
			t.Fatalf("Decide = %v: executed without deleting", d)
		case d.Executed.Status == metav1.ConditionFalse && target.Deleting:
			t.Fatalf("Decide = %v: a deleting binding is always evicted", d)
		}
	})
}
