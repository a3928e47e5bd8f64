package sim

// Starting from an existing state: a hub captured from a live fleet (fleetsim snapshot)
// already has bindings, and a what-if must start from them rather than from what the
// scheduler would pick today on an empty fleet (a PickN placement keeps its clusters even
// when a better one joined later). SeedBindings installs them the moment the placement's
// first policy snapshot exists, before the scheduler's first decision, so the scheduler
// finds them as its own earlier picks, as a restarted production hub finds its bindings.

import (
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// InitialBinding is one binding of a captured hub: its cluster and the scheduler's
// decision that picked it (reason and scores, kept for reports).
type InitialBinding struct {
	Cluster  string
	Decision placement.ClusterDecision
}

// ReasonSeeded is the reason a seeded binding's decision carries when the snapshot gave none.
const ReasonSeeded = "picked before the snapshot was taken"

// SeedBindings makes bindings of placementName on the given clusters exist as soon as the
// placement's first policy snapshot does, before the scheduler decides for it. It must be
// called before the placement is applied; the bindings start Scheduled and the rollout
// controller binds them as it would after a hub restart. A cluster that is not a member when
// the bindings are installed is refused then, and the run records it (seed-refused).
func (s *Sim) SeedBindings(placementName string, bs []InitialBinding) error {
	if p := s.store.placements[placementName]; p != nil && p.LatestPolicySnapshot() != nil {
		return fmt.Errorf("placement %s already has a policy snapshot: seed its bindings before applying it", placementName)
	}
	seen := map[string]bool{}
	for _, b := range bs {
		if b.Cluster == "" {
			return fmt.Errorf("placement %s: a seeded binding names no cluster", placementName)
		}
		if seen[b.Cluster] {
			return fmt.Errorf("placement %s: cluster %s is seeded twice", placementName, b.Cluster)
		}
		seen[b.Cluster] = true
	}
	bs = slices.Clone(bs)
	done := false
	s.AfterEvent(func() {
		if done {
			return
		}
		p := s.store.placements[placementName]
		if p == nil || p.Deleting {
			return
		}
		snap := p.LatestPolicySnapshot()
		if snap == nil {
			return
		}
		done = true
		// Seeded bindings are history, not picks of this run: the invariants on new
		// bindings (a taint added since, say) do not judge them.
		n := len(s.newBindings)
		defer func() { s.newBindings = s.newBindings[:n] }()
		for _, b := range bs {
			if _, ok := s.store.members[b.Cluster]; !ok {
				s.Record("seed-refused", placementName, "cluster "+b.Cluster+" is not a member")
				continue
			}
			d := b.Decision
			d.ClusterName, d.Selected = b.Cluster, true
			if d.Reason == "" {
				d.Reason = ReasonSeeded
			}
			nb := placement.Binding{
				Name: placement.BindingName(placementName, b.Cluster, 0), Placement: placementName, TargetCluster: b.Cluster,
				State: placement.Scheduled, SchedulingPolicySnapshotName: snap.Name, ClusterDecision: d, Generation: 1,
			}
			s.store.PutBinding(nb)
			s.Record("binding-seeded", nb.Name, b.Cluster)
			s.hub.fire(triggers.BindingChanged, nb.Name, placementName, b.Cluster)
		}
	})
	return nil
}
