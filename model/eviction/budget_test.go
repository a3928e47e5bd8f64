package eviction_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/placement"
)

func TestAllowed(t *testing.T) {
	const c1, c2, c3 = "kind-cluster-1", "kind-cluster-2", "kind-cluster-3"
	three := bindings(bound(c1), bound(c2), bound(c3, notAvailable))
	type result struct {
		Allowed, Available, Total int
		Misconfigured             bool
	}
	cases := []struct {
		name   string
		typ    placement.PlacementType
		n      int
		bs     []*placement.Binding
		budget *eviction.DisruptionBudget
		want   result
	}{
		{"no budget: everything may go", placement.PickN, 3, three, nil, result{3, 2, 3, false}},
		{"no bindings", placement.PickN, 3, nil, minAvailable(num(1)), result{0, 0, 0, false}},
		{"nil bindings are skipped", placement.PickAll, 0, bindings(nil, bound(c1), nil), minAvailable(num(0)), result{1, 1, 1, false}},
		{"PickN minAvailable 1", placement.PickN, 3, three, minAvailable(num(1)), result{1, 2, 3, false}},
		{"PickN minAvailable 34% of 3 rounds up to 2", placement.PickN, 3, three, minAvailable(pct("34%")), result{0, 2, 3, false}},
		{"PickN minAvailable 33% of 3 rounds up to 1", placement.PickN, 3, three, minAvailable(pct("33%")), result{1, 2, 3, false}},
		{"PickN maxUnavailable 2", placement.PickN, 3, three, maxUnavailable(num(2)), result{1, 2, 3, false}},
		{"PickN maxUnavailable 25% of 3 rounds up to 1", placement.PickN, 3, three, maxUnavailable(pct("25%")), result{0, 2, 3, false}},
		{"PickN maxUnavailable 0% never negative", placement.PickN, 3, three, maxUnavailable(pct("0%")), result{0, 2, 3, false}},
		{"PickN minAvailable above available never negative", placement.PickN, 3, three, minAvailable(num(5)), result{0, 2, 3, false}},
		{"PickN percentages of numberOfClusters, not of bindings", placement.PickN, 10, three, minAvailable(pct("10%")), result{1, 2, 3, false}},
		{"minAvailable 0 protects nothing", placement.PickN, 3, three, minAvailable(num(0)), result{3, 2, 3, false}},
		{"minAvailable % of PickN 0 protects nothing", placement.PickN, 0, three, minAvailable(pct("50%")), result{3, 2, 3, false}},
		{"PickAll minAvailable int", placement.PickAll, 0, three, minAvailable(num(1)), result{1, 2, 3, false}},
		{"PickAll minAvailable % misconfigured", placement.PickAll, 0, three, minAvailable(pct("0%")), result{0, 2, 3, true}},
		{"PickAll maxUnavailable misconfigured", placement.PickAll, 0, three, maxUnavailable(num(3)), result{0, 2, 3, true}},
		{"empty type is PickAll", "", 0, three, maxUnavailable(num(3)), result{0, 2, 3, true}},
		{"PickFixed: no-op budget", placement.PickFixed, 0, three, maxUnavailable(num(3)), result{0, 2, 3, false}},
		{"malformed budget misconfigured", placement.PickN, 3, three, minAvailable(pct("many")), result{0, 2, 3, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got result
			got.Allowed, got.Available, got.Total, got.Misconfigured = eviction.Allowed(tc.typ, tc.n, tc.bs, tc.budget)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Allowed(%s) = %+v, want %+v\n(-want +got):\n%s", tc.name, got, tc.want, diff)
			}
		})
	}
}

// The how-to's manifests decode unchanged, validate, and decide as the how-to shows.
func TestHowToManifests(t *testing.T) {
	var e eviction.Eviction
	if err := yaml.UnmarshalStrict([]byte(`
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementEviction
metadata:
  name: test-eviction
spec:
  placementName: test-crp
  clusterName: kind-cluster-1
`), &e); err != nil {
		t.Fatal(err)
	}
	var b eviction.DisruptionBudget
	if err := yaml.UnmarshalStrict([]byte(`
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementDisruptionBudget
metadata:
  name: test-crp
spec:
  minAvailable: 1
`), &b); err != nil {
		t.Fatal(err)
	}
	if errs := eviction.ValidateEviction(&e); len(errs) > 0 {
		t.Errorf("ValidateEviction(how-to) = %v", errs)
	}
	if errs := eviction.ValidateBudget(&b); len(errs) > 0 {
		t.Errorf("ValidateBudget(how-to) = %v", errs)
	}
	if e.Kind != eviction.KindEviction || b.Kind != eviction.KindDisruptionBudget {
		t.Errorf("kinds %q, %q", e.Kind, b.Kind)
	}
	var crp placement.ClusterResourcePlacement
	if err := yaml.Unmarshal([]byte(`
metadata:
  name: test-crp
spec:
  resourceSelectors:
    - group: ""
      kind: Namespace
      version: v1
      name: test-ns
  policy:
    placementType: PickN
    numberOfClusters: 1
`), &crp); err != nil {
		t.Fatal(err)
	}
	in := eviction.Input{Eviction: e, Placement: eviction.PlacementOf(&crp), Bindings: bindings(bound("kind-cluster-1")), Budget: &b}
	want := blockedBy(counts{1, 1, 0})
	if got := eviction.Decide(in); !cmp.Equal(want, got) {
		t.Errorf("Decide(how-to with budget) = %v, want %v", got, want)
	}
	in.Budget = nil
	want = executed(eviction.MessageAllowedNoBudget, name("kind-cluster-1"), counts{1, 1, 1})
	if got := eviction.Decide(in); !cmp.Equal(want, got) {
		t.Errorf("Decide(how-to without budget) = %v, want %v", got, want)
	}
}

func TestPlacementOf(t *testing.T) {
	n := int32(3)
	now := metav1.Now()
	cases := []struct {
		name string
		in   *placement.ClusterResourcePlacement
		want *eviction.Placement
	}{
		{"missing", nil, nil},
		{"no policy is PickAll", &placement.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
			&eviction.Placement{Name: "a", Type: placement.PickAll}},
		{"PickN 3 deleting", &placement.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "b", DeletionTimestamp: &now},
			Spec: placement.PlacementSpec{Policy: &placement.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n}}},
			&eviction.Placement{Name: "b", Type: placement.PickN, NumberOfClusters: 3, Deleting: true}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, eviction.PlacementOf(tc.in)); diff != "" {
			t.Errorf("PlacementOf(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}

// Terminal reads the status a Decision leaves behind (EVICT-SEMANTICS, TSG).
func TestTerminal(t *testing.T) {
	cases := []struct {
		name   string
		status string
		want   bool
	}{
		{"not reconciled", `{}`, false},
		{"invalid", `
conditions:
- lastTransitionTime: "2025-04-17T22:16:59Z"
  message: Failed to find ClusterResourcePlacement targeted by eviction
  observedGeneration: 1
  reason: ClusterResourcePlacementEvictionInvalid
  status: "False"
  type: Valid`, true},
		{"valid, not executed (how-to)", `
conditions:
- lastTransitionTime: "2025-01-21T15:52:29Z"
  message: Eviction is valid
  observedGeneration: 1
  reason: ClusterResourcePlacementEvictionValid
  status: "True"
  type: Valid
- lastTransitionTime: "2025-01-21T15:52:29Z"
  message: 'Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget,
    availablePlacements: 1, totalPlacements: 1'
  observedGeneration: 1
  reason: ClusterResourcePlacementEvictionNotExecuted
  status: "False"
  type: Executed`, true},
		{"valid only: interrupted, reconcile again", `
conditions:
- message: Eviction is valid
  reason: ClusterResourcePlacementEvictionValid
  status: "True"
  type: Valid`, false},
	}
	for _, tc := range cases {
		var e eviction.Eviction
		if err := yaml.UnmarshalStrict([]byte(tc.status), &e.Status); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := e.Terminal(); got != tc.want {
			t.Errorf("Terminal(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A decided eviction is terminal once its conditions are written.
	for _, in := range []eviction.Input{
		{Eviction: ev},
		{Eviction: ev, Placement: pickN(1), Bindings: bindings(bound("kind-cluster-1"))},
		{Eviction: ev, Placement: pickN(1), Bindings: bindings(bound("kind-cluster-1")), Budget: minAvailable(num(1))},
	} {
		e := in.Eviction
		d := eviction.Decide(in)
		for _, c := range d.Conditions() {
			e.Status.Conditions = append(e.Status.Conditions, condTimed(c))
		}
		if !e.Terminal() {
			t.Errorf("Terminal() after writing %v = false, want true", d)
		}
	}
}
