package placement

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApplyStrategiesEqual(t *testing.T) {
	force := &ApplyStrategy{Type: ServerSideApply}
	force.ServerSideApplyConfig = &struct {
		ForceConflicts bool `json:"force,omitempty"`
	}{ForceConflicts: true}
	for _, tc := range []struct {
		name string
		a, b *ApplyStrategy
		want bool
	}{
		{"nil and nil", nil, nil, true},
		{"nil and the zero value", nil, &ApplyStrategy{}, true},
		{"nil and a set type", nil, &ApplyStrategy{Type: ServerSideApply}, false},
		{"force and its copy", force, force.Copy(), true},
		{"force and no server-side config", force, &ApplyStrategy{Type: ServerSideApply}, false},
	} {
		if got := ApplyStrategiesEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("ApplyStrategiesEqual(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBindingCopyDoesNotAlias(t *testing.T) {
	b := &Binding{Name: "b", ClusterResourceOverrideSnapshots: []string{"o-0"}, ApplyStrategy: &ApplyStrategy{Type: ClientSideApply},
		ClusterDecision:  ClusterDecision{ClusterScore: &ClusterScore{AffinityScore: 3}},
		FailedPlacements: []FailedPlacement{{ResourceIdentifier: ResourceIdentifier{Name: "x", Envelope: &NamespacedName{Name: "e"}}}}}
	c := b.Copy()
	if diff := cmp.Diff(*b, c); diff != "" {
		t.Fatalf("Copy differs (-orig +copy):\n%s", diff)
	}
	c.ClusterResourceOverrideSnapshots[0] = "changed"
	c.ApplyStrategy.Type = "changed"
	c.ClusterDecision.ClusterScore.AffinityScore = 9
	c.FailedPlacements[0].Envelope.Name = "changed"
	if b.ClusterResourceOverrideSnapshots[0] != "o-0" || b.ApplyStrategy.Type != ClientSideApply ||
		b.ClusterDecision.ClusterScore.AffinityScore != 3 || b.FailedPlacements[0].Envelope.Name != "e" {
		t.Errorf("changing the copy changed the original: %+v", b)
	}
}

// TestApplyType: the default, validity and behaviour of each apply strategy type (APPLY-API,
// APPLY-REPORTDIFF, APPLY-SSA); an unknown type is invalid and behaves as a client-side
// apply.
func TestApplyType(t *testing.T) {
	for _, tc := range []struct {
		typ                            ApplyType
		orDefault                      ApplyType
		valid, reportsOnly, serverSide bool
	}{
		{"", ClientSideApply, true, false, false},
		{ClientSideApply, ClientSideApply, true, false, false},
		{ServerSideApply, ServerSideApply, true, false, true},
		{ReportDiff, ReportDiff, true, true, false},
		{"ForceApply", "ForceApply", false, false, false},
		{"reportDiff", "reportDiff", false, false, false},
	} {
		if got := tc.typ.OrDefault(); got != tc.orDefault {
			t.Errorf("%q.OrDefault() = %q, want %q", tc.typ, got, tc.orDefault)
		}
		if got := tc.typ.Valid(); got != tc.valid {
			t.Errorf("%q.Valid() = %t, want %t", tc.typ, got, tc.valid)
		}
		if got := tc.typ.ReportsOnly(); got != tc.reportsOnly {
			t.Errorf("%q.ReportsOnly() = %t, want %t", tc.typ, got, tc.reportsOnly)
		}
		if got := tc.typ.ServerSide(); got != tc.serverSide {
			t.Errorf("%q.ServerSide() = %t, want %t", tc.typ, got, tc.serverSide)
		}
		if got := (&ApplyStrategy{Type: tc.typ}).TypeOrDefault(); got != tc.orDefault {
			t.Errorf("ApplyStrategy{Type: %q}.TypeOrDefault() = %q, want %q", tc.typ, got, tc.orDefault)
		}
	}
	var none *ApplyStrategy
	if got := none.TypeOrDefault(); got != DefaultApplyType {
		t.Errorf("a nil strategy's TypeOrDefault() = %q, want %q", got, DefaultApplyType)
	}
	for _, typ := range ApplyTypes() {
		if !typ.Valid() {
			t.Errorf("%q is in ApplyTypes but not Valid", typ)
		}
	}
	if !slices.Contains(ApplyTypes(), DefaultApplyType) {
		t.Errorf("DefaultApplyType %q is not in ApplyTypes", DefaultApplyType)
	}
}

// TestValidateApplyStrategyType: the API's enum (APPLY-API); an empty type is the default.
func TestValidateApplyStrategyType(t *testing.T) {
	for _, tc := range []struct {
		typ  ApplyType
		want string
	}{
		{"", ""},
		{ClientSideApply, ""},
		{ServerSideApply, ""},
		{ReportDiff, ""},
		{"ForceApply", `spec.strategy.applyStrategy.type: Unsupported value: "ForceApply": supported values: "ClientSideApply", "ServerSideApply", "ReportDiff"`},
	} {
		c := &ClusterResourcePlacement{Spec: PlacementSpec{ResourceSelectors: []ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "a"}}}}
		c.Name = "crp"
		c.Spec.Strategy.ApplyStrategy = &ApplyStrategy{Type: tc.typ}
		got := ""
		if errs := ValidatePlacement(c); len(errs) > 0 {
			got = errs.ToAggregate().Error()
		}
		if got != tc.want {
			t.Errorf("ValidatePlacement(applyStrategy.type %q) = %q, want %q", tc.typ, got, tc.want)
		}
	}
}
