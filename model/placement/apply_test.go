package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApplyStrategiesEqual(t *testing.T) {
	force := &ApplyStrategy{Type: "ServerSideApply"}
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
		{"nil and a set type", nil, &ApplyStrategy{Type: "ServerSideApply"}, false},
		{"force and its copy", force, force.Copy(), true},
		{"force and no server-side config", force, &ApplyStrategy{Type: "ServerSideApply"}, false},
	} {
		if got := ApplyStrategiesEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("ApplyStrategiesEqual(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBindingCopyDoesNotAlias(t *testing.T) {
	b := &Binding{Name: "b", ClusterResourceOverrideSnapshots: []string{"o-0"}, ApplyStrategy: &ApplyStrategy{Type: "ClientSideApply"},
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
	if b.ClusterResourceOverrideSnapshots[0] != "o-0" || b.ApplyStrategy.Type != "ClientSideApply" ||
		b.ClusterDecision.ClusterScore.AffinityScore != 3 || b.FailedPlacements[0].Envelope.Name != "e" {
		t.Errorf("changing the copy changed the original: %+v", b)
	}
}
