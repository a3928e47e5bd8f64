// bindings.go holds the reading of the placement's bindings: which cluster each targets,
// grouped by cluster into slots (live, current or obsolete, unscheduled, deleting) with
// duplicates set aside.

package scheduler

import (
	"cmp"
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
)

// slot gathers the placement's bindings on one cluster. Bindings are named by their index
// in Input.Bindings, so slots hold no pointers (no write barriers, nothing to scan).
type slot struct {
	// live is the Scheduled or Bound binding kept for the cluster (a current one if any),
	// or -1; liveCurrent says whether it names the current policy snapshot.
	live        int32
	liveCurrent bool
	// unscheduled is the Unscheduled binding reused if the cluster is picked again, or -1.
	unscheduled int32
	deleting    bool
	found       bool
	member      int32 // index of the cluster's memo, when found
	n           int32 // bindings on the cluster
}

// duplicate is a further live binding on a cluster; it is unscheduled.
type duplicate struct{ slot, binding int32 }

// clusterOf finds the fleet position of a binding's cluster (-1 when absent), remembering
// it by the binding's position for the next decision.
func (d *decision) clusterOf(i int, b *placement.Binding) int32 {
	c := &d.bcache
	if c.gen == d.ix.gen && i < len(c.ptrs) && c.ptrs[i] == b && sameString(c.targets[i], b.TargetCluster) {
		return c.ids[i]
	}
	id, ok := d.ix.names()[b.TargetCluster]
	if !ok {
		id = -1
	}
	if c.gen != d.ix.gen {
		c.gen = d.ix.gen
		c.ptrs, c.targets, c.ids = c.ptrs[:0], c.targets[:0], c.ids[:0]
	}
	for len(c.ptrs) <= i {
		c.ptrs, c.targets, c.ids = append(c.ptrs, nil), append(c.targets, ""), append(c.ids, -1)
	}
	c.ptrs[i], c.targets[i], c.ids[i] = b, b.TargetCluster, id
	return id
}

// classifyBindings groups the placement's bindings by cluster. Within a cluster they are
// taken in name order, so the choice among duplicates does not depend on input order.
func (d *decision) classifyBindings() {
	bs := d.in.Bindings
	if len(d.bcache.ptrs) > len(bs) {
		d.bcache.ptrs = d.bcache.ptrs[:len(bs)]
		d.bcache.targets = d.bcache.targets[:len(bs)]
		d.bcache.ids = d.bcache.ids[:len(bs)]
	}
	d.bslot = d.bslot[:0]
	multi := false
	for i, b := range bs {
		id := d.clusterOf(i, b)
		var si int32
		if id >= 0 {
			mi := d.memoIndex(id)
			if si = d.memos[mi].slot; si < 0 {
				si = d.newSlot()
				d.slots[si].found, d.slots[si].member = true, mi
				d.memos[mi].slot = si
			}
		} else {
			if d.orphans == nil {
				d.orphans = map[string]int32{}
			}
			var ok bool
			if si, ok = d.orphans[b.TargetCluster]; !ok {
				si = d.newSlot()
				d.orphans[b.TargetCluster] = si
			}
		}
		d.bslot = append(d.bslot, si)
		sl := &d.slots[si]
		if sl.n++; sl.n > 1 {
			multi = true
		}
		d.classify(si, int32(i))
	}
	if multi {
		// Clusters with several bindings: classify them again in name order.
		d.dups = slices.DeleteFunc(d.dups, func(x duplicate) bool { return d.slots[x.slot].n > 1 })
		var group []int32
		for si := range d.slots {
			sl := &d.slots[si]
			if sl.n < 2 {
				continue
			}
			group = group[:0]
			for i := range bs {
				if d.bslot[i] == int32(si) {
					group = append(group, int32(i))
				}
			}
			slices.SortFunc(group, func(a, b int32) int { return cmp.Compare(bs[a].Name, bs[b].Name) })
			sl.live, sl.liveCurrent, sl.unscheduled, sl.deleting = -1, false, -1, false
			for _, i := range group {
				d.classify(int32(si), i)
			}
		}
	}
	for si := range d.slots {
		if sl := &d.slots[si]; sl.found && sl.live >= 0 && !sl.liveCurrent {
			d.memos[sl.member].obsolete = true
		}
	}
}

func (d *decision) newSlot() int32 {
	d.slots = append(d.slots, slot{live: -1, unscheduled: -1, member: -1})
	return int32(len(d.slots) - 1)
}

// binding is the input binding at index i.
func (d *decision) binding(i int32) *placement.Binding { return d.in.Bindings[i] }

func (d *decision) classify(si, i int32) {
	sl, b := &d.slots[si], d.in.Bindings[i]
	switch {
	case b.Deleting:
		sl.deleting = true
	case b.State == placement.Unscheduled:
		if sl.unscheduled < 0 {
			sl.unscheduled = i
		}
	case sl.live < 0:
		sl.live, sl.liveCurrent = i, d.isCurrent(b)
	case !sl.liveCurrent && d.isCurrent(b):
		d.dups = append(d.dups, duplicate{si, sl.live})
		sl.live, sl.liveCurrent = i, true
	default:
		d.dups = append(d.dups, duplicate{si, i})
	}
}

// bindingNames is the set of every binding name, built the first time a name is made.
func (d *decision) bindingNames() map[string]bool {
	if d.names == nil {
		d.names = make(map[string]bool, len(d.in.Bindings))
		for _, b := range d.in.Bindings {
			d.names[b.Name] = true
		}
	}
	return d.names
}

func (d *decision) isCurrent(b *placement.Binding) bool {
	return b.SchedulingPolicySnapshotName == d.in.Snapshot.Name
}
