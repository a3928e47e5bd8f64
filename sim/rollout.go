package sim

import (
	"fmt"

	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/rollout"
	"github.com/fleetsim/fleetsim/model/status"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// reconcileRollout runs the rolling-update decision for a placement and writes its plan:
// bindings to bind or update first, then Unscheduled bindings to delete, then condition-only
// changes. External placements are rolled by staged update runs instead.
func (h *hub) reconcileRollout(name string) {
	s := h.s
	p := s.store.placements[name]
	snap := s.store.latest(name)
	if p == nil || p.deleting || snap == nil {
		return
	}
	if p.crp.Spec.Strategy.Type == placement.ExternalStrategy {
		h.refreshStatus(name)
		return
	}
	latest := ""
	if r := p.latestResources(); r != nil {
		latest = r.Name
	}
	var names []string
	if snap.Policy != nil {
		names = snap.Policy.ClusterNames
	}
	plan := rollout.Decide(rollout.Input{
		Placement: name, PlacementType: snap.Policy.Type(), NumberOfClusters: snap.NumberOfClusters, ClusterNames: names,
		Strategy: p.crp.Spec.Strategy, Bindings: s.store.byCRP[name], LatestResourceSnapshot: latest,
		Overrides: h.applicableOverrides(name, p), Now: s.Now(),
	})
	for _, c := range plan.Bind {
		s.store.putBinding(c.Binding)
		s.Record("binding-rolled", c.Binding.Name, fmt.Sprintf("%s to %s (generation %d): %s", c.Binding.TargetCluster, c.Binding.ResourceSnapshotName, c.Binding.Generation, c.Reason))
		h.fire(triggers.BindingChanged, c.Binding.Name, name, c.Binding.TargetCluster)
	}
	for _, c := range plan.Delete {
		s.store.deleteBinding(c.Binding.Name)
		s.Record("binding-deleted", c.Binding.Name, c.Reason)
		h.fire(triggers.BindingDeleted, c.Binding.Name, name, c.Binding.TargetCluster)
	}
	for _, cs := range [][]rollout.Change{plan.Wait, plan.Refresh} {
		for _, c := range cs {
			s.store.putBinding(c.Binding)
		}
	}
	for _, c := range plan.Wait {
		s.Record("binding-waiting", c.Binding.Name, c.Reason)
	}
	if plan.RequeueAfter > 0 {
		h.requeueAfter(ctrlRollout, name, plan.RequeueAfter)
	}
	h.refreshStatus(name)
}

// applicableOverrides lists, per member holding the placement, the latest override
// snapshots that apply to it for the selected resources.
func (h *hub) applicableOverrides(name string, p *placementRecord) map[string]rollout.OverrideSnapshots {
	cros, ros := h.s.store.overrides.latest()
	cros, ros = override.ForPlacement(name, cros, ros)
	if len(cros) == 0 && len(ros) == 0 {
		return nil
	}
	set := override.NewSet(cros, ros)
	ids := selectedIdentifiers(p)
	out := map[string]rollout.OverrideSnapshots{}
	for _, b := range h.s.store.byCRP[name] {
		r := h.s.store.members[b.TargetCluster]
		if r == nil {
			continue
		}
		cro, ro := set.ApplicableFor(r.m, ids)
		out[b.TargetCluster] = rollout.OverrideSnapshots{ClusterResourceOverrideSnapshots: cro, ResourceOverrideSnapshots: ro}
	}
	return out
}

func selectedIdentifiers(p *placementRecord) []placement.ResourceIdentifier {
	ids := make([]placement.ResourceIdentifier, 0, len(p.selected))
	for _, o := range p.selected {
		ids = append(ids, resources.Identifier(o))
	}
	return ids
}

// refreshStatus recomputes a placement's status and records the placement-level conditions
// whose status changed.
func (h *hub) refreshStatus(name string) {
	s := h.s
	p := s.store.placements[name]
	snap := s.store.latest(name)
	if p == nil || snap == nil {
		return
	}
	in := status.Input{
		Generation: p.generation, RolloutStrategy: p.crp.Spec.Strategy.Type, PlacementType: snap.Policy.Type(),
		Scheduling: status.Scheduling{Condition: p.scheduled, ObservedPlacementGeneration: p.scheduledGen, Decisions: p.decisions},
		Bindings:   s.store.byCRP[name], ResourceIndex: -1, SelectedResources: selectedIdentifiers(p),
		Previous: p.status, Now: s.Now(),
	}
	if as := p.crp.Spec.Strategy.ApplyStrategy; as != nil {
		in.ApplyStrategy = as.Type
	}
	switch snap.Policy.Type() {
	case placement.PickN:
		in.Wanted = int(snap.NumberOfClusters)
	case placement.PickFixed:
		in.Wanted = len(snap.Policy.ClusterNames)
	}
	if r := p.latestResources(); r != nil {
		in.LatestResourceSnapshot, in.ResourceIndex = r.Name, r.Index
	}
	next := status.Placement(in)
	old := map[string]string{}
	for _, c := range p.status.Conditions {
		old[c.Type] = string(c.Status) + "/" + c.Reason
	}
	for _, c := range next.Conditions {
		if old[c.Type] != string(c.Status)+"/"+c.Reason {
			s.Record("placement-status", name, conditionText(c.Condition))
		}
	}
	p.status = next
}
