package sim

// Read-only views for tools that compare a fleet before and after a change (the what-if
// preview, scenarios/whatif): a placement's spec and its bindings with their conditions.
// They decide nothing.

import (
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
)

// PlacementSpec returns a placement as last applied.
func (s *Sim) PlacementSpec(name string) (placement.ClusterResourcePlacement, bool) {
	p := s.store.placements[name]
	if p == nil {
		return placement.ClusterResourcePlacement{}, false
	}
	return p.CRP, true
}

// Bindings returns copies of a placement's bindings, by name (conditions included).
func (s *Sim) Bindings(placementName string) []placement.Binding {
	bs := s.store.byCRP[placementName]
	out := make([]placement.Binding, 0, len(bs))
	for _, b := range bs {
		c := *b
		c.Conditions = slices.Clone(b.Conditions)
		out = append(out, c)
	}
	return out
}
