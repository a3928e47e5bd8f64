package sim

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/model/placement"
)

// TestPlacementOfNamespacedKindRefused: the simulator's hub refuses a ClusterResourcePlacement
// whose selector names a namespaced kind, as KubeFleet's admission webhook does, and keeps
// nothing of it; a placement of the ConfigMap's namespace is accepted.
func TestPlacementOfNamespacedKindRefused(t *testing.T) {
	s := newSim(t, Config{Seed: 1})
	addMembers(t, s, "m1")
	crp := pickN("cm", 1)
	crp.Spec.ResourceSelectors = []placement.ResourceSelector{{Version: "v1", Kind: "ConfigMap", Name: "settings"}}
	err := s.ApplyPlacement(crp)
	const want = "the resource is not found in schema (please retry) or it is not a cluster scoped resource: /v1, Kind=ConfigMap"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ApplyPlacement(ConfigMap selector) = %v, want a refusal containing %q", err, want)
	}
	if p := s.store.Placement("cm"); p != nil {
		t.Errorf("the refused placement was stored: %+v", p.CRP)
	}
	if err := s.ApplyPlacement(pickN("ns", 1)); err != nil {
		t.Errorf("ApplyPlacement(Namespace selector) = %v, want it accepted", err)
	}
}
