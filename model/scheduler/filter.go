// filter.go holds filtering: the search for candidates among the members (scanMembers),
// the required affinity's selection over the index, and the filter of one member.

package scheduler

import (
	"math/bits"
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
)

// scanMembers finds the candidates. Members holding a binding are filtered one by one;
// the others are candidates only if the required affinity selects them (a set operation
// over the index), they are eligible and they tolerate their taints. Members that are not
// candidates get their filter code only if a decision or a reason needs it.
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
	scoring := cp.typ == placement.PickN
	if scoring {
		if d.scanRanked() {
			return
		}
		d.prepareAffinity()
	}
	consider := func(id int32) {
		if d.stamp[id] == d.gen {
			if mi := d.memoOf[id]; d.memos[mi].code == codeCandidate {
				d.cands = append(d.cands, mi)
				if scoring {
					d.scoreCandidate(&d.memos[mi])
				}
			}
			return
		}
		elig := d.check(id)
		if !elig.OK() {
			return
		}
		if cp.typ != placement.PickFixed && d.ix.tainted.has(id) && placement.FirstUntolerated(d.ix.ents[id].m.Taints, cp.tolerations) >= 0 {
			return
		}
		mi := d.memoIndex(id)
		d.memos[mi].code, d.memos[mi].elig = codeCandidate, elig
		d.cands = append(d.cands, mi)
		if scoring {
			d.scoreCandidate(&d.memos[mi])
		}
	}
	switch {
	case cp.typ == placement.PickFixed:
		var named []int32
		for n := range cp.fixed {
			if id, ok := d.ix.names()[n]; ok {
				named = append(named, id)
			}
		}
		slices.Sort(named)
		for _, id := range named {
			d.filtered(id)
			consider(id)
		}
	case len(cp.required) == 0:
		for id := range int32(len(d.ix.ents)) {
			consider(id)
		}
	default:
		d.requiredSet().each(consider)
	}
}

// requiredSet is the members the required affinity selects: its terms ORed.
func (d *decision) requiredSet() bitset {
	out := d.newSet()
	out.zero()
	for i := range d.policy.required {
		out.or(d.termSet(&d.policy.required[i]))
	}
	return out
}

// termSet is the members a term selects: its labels, then each property matcher.
func (d *decision) termSet(t *compiledTerm) bitset {
	set := d.newSet()
	if t.labels != nil {
		d.match, set = d.ix.selectLabels(t.labels, set, d.match)
	} else {
		set.fill(len(d.ix.ents))
	}
	for i := range t.props {
		r := &t.props[i]
		col := d.ix.property(r.ref)
		for w := range set {
			word := set[w] & col.has[w]
			for rest := word; rest != 0; rest &= rest - 1 {
				id := int32(w*64 + bits.TrailingZeros64(rest))
				if !r.pass(&col.q[id]) {
					word &^= 1 << (id & 63)
				}
			}
			set[w] = word
		}
	}
	return set
}

// filter runs the filter plugins in order; the first that rejects a member wins.
func (d *decision) filter(mm *memo) {
	cp := d.policy
	m := d.member(mm)
	mm.code = codeCandidate
	if cp.typ == placement.PickFixed && !cp.fixed[m.Name] {
		mm.code = codeNotNamed
		return
	}
	if mm.slot >= 0 {
		sl := &d.slots[mm.slot]
		if sl.live >= 0 && sl.liveCurrent && !m.Leaving {
			mm.code = codeKept
			if cp.typ == placement.PickFixed {
				// PickFixed is only fulfilled while every named cluster is eligible, even
				// one that keeps its placement (CRP-POL-PICKFIXED).
				mm.elig = d.check(mm.id)
			}
			return
		}
		if sl.deleting {
			mm.code = codeDeleting
			return
		}
	}
	if mm.elig = d.check(mm.id); !mm.elig.OK() {
		mm.code = codeIneligible
		return
	}
	if cp.typ == placement.PickFixed {
		return // PickFixed ignores taints and has no affinity (TAINT-SCOPE).
	}
	if i := placement.FirstUntolerated(m.Taints, cp.tolerations); i >= 0 {
		mm.code, mm.detail = codeUntolerated, int32(i)
		return
	}
	if !cp.matchesRequired(m) {
		mm.code = codeNoAffinity
	}
}
