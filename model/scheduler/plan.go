// plan.go holds the bind step, which only plans: bindings to unschedule (dangling,
// duplicate, obsolete and not picked again), bindings to create or update for the picks,
// the cluster decisions of the selected clusters and the Scheduled condition.

package scheduler

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// unscheduleDangling unschedules live bindings whose cluster left or is gone, and duplicates.
func (d *decision) unscheduleDangling() {
	for _, x := range d.dups {
		d.unschedule(d.binding(x.binding), "another binding of this placement already targets the cluster")
	}
	for si := range d.slots {
		sl := &d.slots[si]
		if sl.live < 0 {
			continue
		}
		switch {
		case !sl.found:
			d.unschedule(d.binding(sl.live), "cluster is not found in the fleet")
			sl.live = -1
		case sl.liveCurrent && d.memos[sl.member].code != codeKept && d.member(&d.memos[sl.member]).Leaving:
			d.unschedule(d.binding(sl.live), "cluster has left the fleet")
			sl.live = -1
		case sl.liveCurrent:
			d.kept++
		}
	}
}

// unscheduleObsoleteNotPicked unschedules Scheduled or Bound bindings of an older policy
// snapshot whose cluster was not picked again.
func (d *decision) unscheduleObsoleteNotPicked() {
	for si := range d.slots {
		sl := &d.slots[si]
		if !sl.found {
			continue
		}
		mm := &d.memos[sl.member]
		if !mm.obsolete || mm.picked {
			continue
		}
		why := "no longer picked by the scheduling policy: " + d.reasonFor(mm)
		if mm.code == codeNotNamed {
			why = "no longer in the placement's clusterNames"
		}
		d.unschedule(d.binding(sl.live), why)
	}
}

func (d *decision) unschedule(b *placement.Binding, why string) {
	nb := *b
	nb.PreviousState = b.State
	nb.State = placement.Unscheduled
	d.plan.Unschedule = append(d.plan.Unschedule, Change{Binding: nb, Reason: why})
}

// finish turns picks into binding writes and builds decisions and the condition. Members
// are visited in fleet order; when the fleet is sorted by name (as the stores hand it
// over) the lists come out sorted and are not sorted again.
func (d *decision) finish() {
	snap := d.in.Snapshot
	placed := d.kept
	nPicked := 0
	sel := d.newSet()
	sel.zero()
	for _, i := range d.picked {
		nPicked++
		sel.set(d.memos[i].id)
	}
	for si := range d.slots {
		if sl := &d.slots[si]; sl.found && sl.live >= 0 && d.memos[sl.member].code == codeKept {
			sel.set(d.memos[sl.member].id)
		}
	}
	// One slice holds the selected decisions and then the unselected ones (up to the limit).
	unselected := min(max(d.opts.MaxDecisions-(nPicked+d.kept), 0), len(d.ix.ents)+len(d.policy.fixed))
	d.selected = make([]placement.ClusterDecision, 0, nPicked+d.kept+unselected)
	d.plan.Create = make([]Change, 0, nPicked)
	if d.policy.typ == placement.PickN {
		d.scores = make([]placement.ClusterScore, 0, nPicked+d.opts.MaxDecisions)
	}
	sorted := d.ix.sortedByName
	sel.each(func(id int32) {
		mm := &d.memos[d.memoOf[id]]
		name := d.ix.ents[id].name
		if !mm.picked {
			dec := d.binding(d.slots[mm.slot].live).ClusterDecision
			if dec.ClusterName == "" {
				dec = placement.ClusterDecision{ClusterName: name, Selected: true, Reason: ReasonPicked}
			} else if !sameString(dec.ClusterName, name) {
				sorted = false
			}
			d.selected = append(d.selected, dec)
			return
		}
		placed++
		dec := d.pickedDecision(mm)
		d.selected = append(d.selected, dec)
		var sl *slot
		if mm.slot >= 0 {
			sl = &d.slots[mm.slot]
		}
		switch {
		case sl != nil && sl.live >= 0: // obsolete, picked again under the new policy
			nb := *d.binding(sl.live)
			nb.SchedulingPolicySnapshotName, nb.ClusterDecision = snap.Name, dec
			d.plan.Update = append(d.plan.Update, Change{Binding: nb, Reason: "picked again by the new scheduling policy snapshot " + snap.Name})
		case sl != nil && sl.unscheduled >= 0:
			nb := *d.binding(sl.unscheduled)
			nb.State = nb.PreviousState
			if nb.State != placement.Bound {
				nb.State = placement.Scheduled
			}
			nb.PreviousState = ""
			nb.SchedulingPolicySnapshotName, nb.ClusterDecision = snap.Name, dec
			d.plan.Update = append(d.plan.Update, Change{Binding: nb, Reason: fmt.Sprintf("picked again; restoring the unscheduled binding to %s", nb.State)})
		default:
			bn := ""
			for attempt := 0; ; attempt++ {
				if bn = placement.BindingName(snap.Placement, name, attempt); !d.bindingNames()[bn] {
					break
				}
			}
			d.plan.Create = append(d.plan.Create, Change{
				Binding: placement.Binding{
					Name: bn, Placement: snap.Placement, TargetCluster: name,
					State: placement.Scheduled, SchedulingPolicySnapshotName: snap.Name, ClusterDecision: dec,
				},
				Reason: ReasonPicked,
			})
		}
	})
	byCluster := func(a, b Change) int { return cmp.Compare(a.Binding.TargetCluster, b.Binding.TargetCluster) }
	if !d.ix.sortedByName {
		slices.SortFunc(d.plan.Create, byCluster)
		slices.SortFunc(d.plan.Update, byCluster)
	}
	slices.SortStableFunc(d.plan.Unschedule, func(a, b Change) int {
		return cmp.Or(byCluster(a, b), cmp.Compare(a.Binding.Name, b.Binding.Name))
	})
	if !sorted {
		slices.SortFunc(d.selected, func(a, b placement.ClusterDecision) int { return cmp.Compare(a.ClusterName, b.ClusterName) })
	}
	d.plan.Decisions = d.unselectedDecisions(d.selected, d.opts.MaxDecisions-len(d.selected))
	d.plan.Wanted, d.plan.Placed = d.wanted, placed
	d.plan.Scheduled = d.condition(placed)
}

func (d *decision) pickedDecision(mm *memo) placement.ClusterDecision {
	dec := placement.ClusterDecision{ClusterName: d.ix.ents[mm.id].name, Selected: true, Reason: ReasonPicked}
	if d.policy.typ == placement.PickN {
		dec.ClusterScore = d.score(mm)
	}
	return dec
}

// score points into one slice per decision rather than allocating a score per cluster.
func (d *decision) score(mm *memo) *placement.ClusterScore {
	d.scores = append(d.scores, placement.ClusterScore{AffinityScore: mm.affinity, TopologySpreadScore: mm.topo})
	return &d.scores[len(d.scores)-1]
}

func (d *decision) condition(placed int) condition.Condition {
	fulfilled := true
	switch d.policy.typ {
	case placement.PickN:
		fulfilled = placed >= d.wanted
	case placement.PickFixed:
		// Every named cluster must exist and be eligible, whatever bindings remain.
		eligible := 0
		for i := range d.memos {
			if mm := &d.memos[i]; mm.code != codeNotNamed && mm.code != codeUnset && mm.elig.OK() {
				eligible++
			}
		}
		fulfilled = eligible == len(d.policy.fixed)
	}
	if fulfilled {
		return condition.True(condition.TypeScheduled, condition.ReasonSchedulingPolicyFulfilled, condition.MessageFulfilled)
	}
	return condition.False(condition.TypeScheduled, condition.ReasonSchedulingPolicyUnfulfilled, condition.MessageUnfulfilled)
}
