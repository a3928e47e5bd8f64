// filter.go holds filtering: the search for candidates among the members (scanMembers),
// over sets of members with the plugins' columnar filters, and the filter of one member
// (the general path). Both run the filter plugins of the table in plugins.go.

package scheduler

import (
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
)

// scanMembers finds the candidates. Members holding a binding are filtered one by one;
// the others are candidates only if every filter plugin admits them, decided over sets of
// members (the index's columns) rather than one by one. Members that are not candidates
// get their filter code only if a decision or a reason needs it.
func (d *decision) scanMembers() {
	cp := d.policy
	for si := range d.slots {
		if sl := &d.slots[si]; sl.found {
			d.filter(&d.memos[sl.member])
		}
	}
	if len(cp.topology) > 0 {
		d.topo = newTopologyState(cp.topology, &d.ix)
		for i := range d.memos {
			if d.memos[i].code == codeKept {
				d.topo.add(d.memos[i].id)
			}
		}
	}
	if cp.typ == placement.PickN && d.scanRanked() {
		return
	}
	if cp.typ == placement.PickFixed {
		// Only the named members can be candidates: filter them one by one.
		var named []int32
		for n := range cp.fixed {
			if id, ok := d.ix.names()[n]; ok {
				named = append(named, id)
			}
		}
		slices.Sort(named)
		for _, id := range named {
			if d.filtered(id).code == codeCandidate {
				d.cands = append(d.cands, d.memoOf[id])
			}
		}
		return
	}
	set := d.newSet()
	set.fill(len(d.ix.ents))
	for i := range d.memos {
		set.clear(d.memos[i].id) // holds a binding: filtered already
	}
	d.narrow(set, true)
	d.narrow(set, false)
	for i := range d.memos {
		if d.memos[i].code == codeCandidate {
			set.set(d.memos[i].id)
		}
	}
	// PickN candidates are scored even when nothing is to be picked, so that the decisions
	// report true scores for the clusters that were passed over.
	scoring := cp.typ == placement.PickN
	if scoring {
		d.prepareScores()
	}
	set.each(func(id int32) {
		mi := d.memoIndex(id)
		mm := &d.memos[mi]
		if mm.code == codeUnset {
			mm.code = codeCandidate
		}
		d.cands = append(d.cands, mi)
		if scoring {
			d.scoreCandidate(mm)
		}
	})
}

// narrow removes from set the members (holding no binding of the placement) that a filter
// plugin of the decision's placement type rejects: the static plugins, or the others.
func (d *decision) narrow(set bitset, static bool) {
	for i := range plugins {
		p := &plugins[i]
		if p.filter == nil || p.static != static || !p.scope.has(d.policy.typ) {
			continue
		}
		if p.narrow != nil {
			p.narrow(d, set)
		} else {
			d.narrowEach(p, set)
		}
	}
}

// narrowEach is narrow for a plugin without a columnar filter: its filter runs on each
// member of the set.
func (d *decision) narrowEach(p *plugin, set bitset) {
	set.each(func(id int32) {
		d.scratch = memo{id: id, rank: d.ix.rank[id], slot: -1, code: codeCandidate}
		if !p.filter(d, &d.scratch) {
			set.clear(id)
		}
	})
}

// filter decides one member: set aside if a PickFixed placement does not name it or if it
// keeps a current binding, otherwise the filter plugins run in order and the first that
// rejects it wins.
func (d *decision) filter(mm *memo) {
	cp := d.policy
	m := d.member(mm)
	mm.code = codeCandidate
	if cp.typ == placement.PickFixed && !cp.fixed[m.Name] {
		mm.code = codeNotNamed
		return
	}
	if mm.slot >= 0 {
		if sl := &d.slots[mm.slot]; sl.live >= 0 && sl.liveCurrent && !m.Leaving {
			mm.code = codeKept
			if cp.typ == placement.PickFixed {
				// PickFixed is only fulfilled while every named cluster is eligible, even
				// one that keeps its placement (CRP-POL-PICKFIXED).
				mm.elig = d.check(mm.id)
			}
			return
		}
	}
	for i := range plugins {
		if p := &plugins[i]; p.filter != nil && p.scope.has(cp.typ) && !p.filter(d, mm) {
			mm.code = codeRejected + filterCode(i)
			return
		}
	}
}
