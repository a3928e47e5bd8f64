package scheduler

import (
	"cmp"
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
)

// The ranked PickN path. Over a pickNCache, a decision meets its candidates in ranking
// order (scanRanked), and most of them are never picked nor reported: 50 picks and 950
// reported decisions out of thousands of candidates. So a candidate that holds no binding
// gets no memo: it is a position in the cache's order (a "virtual" candidate), whose key,
// affinity, rank and combination of topology domains the cache holds. Its topology score
// and whether a DoNotSchedule constraint filters it out are its group's; only a picked one
// gets a memo. Candidates that hold a binding keep their memos, as elsewhere.
//
// d.vc lists the candidates in ranking order: a value v >= 0 is the cache position of a
// virtual candidate, v < 0 the memo -1-v of one that holds a binding.

// vID is the candidate's member.
func (d *decision) vID(v int32) int32 {
	if v >= 0 {
		return d.pc.order[v]
	}
	return d.memos[-1-v].id
}

// vKey is the candidate's ranking key.
func (d *decision) vKey(v int32) uint64 {
	if v >= 0 {
		return d.pc.keys[v]
	}
	return d.memos[-1-v].key
}

// vMemo returns the candidate's memo, creating it for a virtual candidate.
func (d *decision) vMemo(v int32) int32 {
	if v < 0 {
		return -1 - v
	}
	id := d.pc.order[v]
	if d.stamp[id] == d.gen {
		return d.memoOf[id]
	}
	key := d.pc.keys[v] // rankKey(affinity, false, rank): both are in it
	mi := int32(len(d.memos))
	d.memos = append(d.memos, memo{id: id, rank: int32(key & 0x7fffffff), slot: -1, code: codeCandidate, affinity: int32(uint32(key>>32) ^ 0x80000000), key: key})
	d.stamp[id], d.memoOf[id] = d.gen, mi
	return mi
}

// pickVirtual picks a candidate.
func (d *decision) pickVirtual(v int32, topo int32) {
	mi := d.vMemo(v)
	d.memos[mi].topo = topo
	d.pick(mi)
	d.pickedSet.set(d.memos[mi].id)
}

// vGroup is the candidates sharing one combination of topology domains (see spreadGroup).
type vGroup struct {
	domains  []int32
	members  []int32 // indexes into d.vc, best first; at most the number to pick
	next     int
	score    int32
	violated int
}

// pickRanked is pickN's choice over ranked candidates.
func (d *decision) pickRanked(need int) {
	if d.topo == nil {
		for _, v := range d.vc[:min(need, len(d.vc))] {
			d.pickVirtual(v, 0)
		}
		return
	}
	t := d.topo
	radix := d.pc.radix
	nc := len(t.cols)
	combos := radix[nc-1] * uint64(len(t.cols[nc-1].values)+1)
	d.groupIdx = func(code uint64) int32 { return -1 }
	var dense []int32
	var sparse map[uint64]int32
	if combos <= 1<<16 {
		dense = make([]int32, combos)
		for i := range dense {
			dense[i] = -1
		}
		d.groupIdx = func(code uint64) int32 { return dense[code] }
	} else {
		sparse = map[uint64]int32{}
		d.groupIdx = func(code uint64) int32 {
			if g, ok := sparse[code]; ok {
				return g
			}
			return -1
		}
	}
	groups := d.vgroups[:0]
	var doms []int32
	d.vgroup = slices.Grow(d.vgroup[:0], len(d.vc))[:len(d.vc)]
	for ci, v := range d.vc {
		var code uint64
		if v >= 0 {
			code = d.pc.codes[v]
		} else {
			code = d.memos[-1-v].group
		}
		var g int32
		if dense != nil {
			g = dense[code]
		} else if x, ok := sparse[code]; ok {
			g = x
		} else {
			g = -1
		}
		if g < 0 {
			g = int32(len(groups))
			if dense != nil {
				dense[code] = g
			} else {
				sparse[code] = g
			}
			n := len(doms)
			doms = t.domains(doms, d.vID(v))
			groups = append(groups, vGroup{domains: doms[n:len(doms):len(doms)]})
		}
		d.vgroup[ci] = g
		if grp := &groups[g]; len(grp.members) < need {
			grp.members = append(grp.members, int32(ci))
		}
	}
	for picked := 0; picked < need || picked == 0; picked++ {
		// As pickSpread: every round scores all groups; the best head of a group that
		// breaks no DoNotSchedule constraint is picked, by topology score then key.
		bestGroup := -1
		var bestScore int32
		var bestKey uint64
		for g := range groups {
			grp := &groups[g]
			grp.score, grp.violated = t.score(grp.domains)
			if grp.violated >= 0 || grp.next >= len(grp.members) || picked >= need {
				continue
			}
			k := d.vKey(d.vc[grp.members[grp.next]])
			if bestGroup < 0 || grp.score > bestScore || grp.score == bestScore && k > bestKey {
				bestGroup, bestScore, bestKey = g, grp.score, k
			}
		}
		if bestGroup < 0 {
			break
		}
		grp := &groups[bestGroup]
		d.pickVirtual(d.vc[grp.members[grp.next]], grp.score)
		grp.next++
		t.addDomains(grp.domains)
	}
	// Candidates holding a binding take their group's outcome in their memos; virtual ones
	// are read from their group when reported.
	for ci, v := range d.vc {
		if v >= 0 {
			continue
		}
		mm := &d.memos[-1-v]
		if mm.picked {
			continue
		}
		if grp := &groups[d.vgroup[ci]]; grp.violated >= 0 {
			mm.code, mm.detail = codeTopology, int32(grp.violated)
		} else {
			mm.topo = grp.score
		}
	}
	d.vgroups = groups
}

// vState is what the ranking sees of a candidate after the picks: whether it is still a
// candidate not picked, and its topology score.
func (d *decision) vState(ci int, v int32) (bool, int32) {
	if v < 0 {
		mm := &d.memos[-1-v]
		return !mm.picked && mm.code == codeCandidate, mm.topo
	}
	if d.pickedSet.has(d.pc.order[v]) {
		return false, 0
	}
	if d.topo == nil {
		return true, 0
	}
	grp := &d.vgroups[d.vgroup[ci]]
	return grp.violated < 0, grp.score
}

// unselectedRanked appends up to limit candidates not picked, best first (topology score,
// then key), as the scored clusters that were passed over.
func (d *decision) unselectedRanked(out []placement.ClusterDecision, limit int) []placement.ClusterDecision {
	if limit <= 0 {
		return out
	}
	var levels [8]int32
	nl := 0
	many := false
	for ci, v := range d.vc {
		ok, topo := d.vState(ci, v)
		if !ok || slices.Contains(levels[:nl], topo) {
			continue
		}
		if nl == len(levels) {
			many = true
			break
		}
		levels[nl] = topo
		nl++
	}
	report := func(v int32, topo int32) {
		key := d.vKey(v)
		d.scores = append(d.scores, placement.ClusterScore{AffinityScore: int32(uint32(key>>32) ^ 0x80000000), TopologySpreadScore: topo})
		out = append(out, placement.ClusterDecision{
			ClusterName:  d.ix.ents[d.vID(v)].name,
			ClusterScore: &d.scores[len(d.scores)-1],
			Reason:       ReasonNotHighEnough,
		})
	}
	if many {
		// Many distinct topology scores: rank them all.
		d.ranked = d.ranked[:0]
		for ci, v := range d.vc {
			if ok, topo := d.vState(ci, v); ok {
				d.ranked = append(d.ranked, ranked{topo: topo, mi: int32(ci), key: d.vKey(v)})
			}
		}
		d.picks = topKSorted(d.picks[:0], d.ranked, limit)
		for _, r := range d.picks {
			report(d.vc[r.mi], r.topo)
		}
		return out
	}
	slices.SortFunc(levels[:nl], func(a, b int32) int { return cmp.Compare(b, a) })
	n := 0
	for _, level := range levels[:nl] {
		for ci, v := range d.vc {
			if ok, topo := d.vState(ci, v); ok && topo == level {
				report(v, topo)
				if n++; n == limit {
					return out
				}
			}
		}
	}
	return out
}

// virtualFiltered reports whether the member is a virtual candidate that is not picked
// and, if a DoNotSchedule constraint filters it out, the memo to report it with.
func (d *decision) virtualFiltered(id int32) (bool, memo) {
	if !d.virtual || d.stamp[id] == d.gen || !d.vset.has(id) {
		return false, memo{}
	}
	if d.topo == nil {
		return true, memo{id: id, code: codeCandidate}
	}
	g := d.groupIdx(spreadCode(d.topo.cols, d.pc.radix, id))
	if grp := &d.vgroups[g]; grp.violated >= 0 {
		return true, memo{id: id, code: codeTopology, detail: int32(grp.violated)}
	}
	return true, memo{id: id, code: codeCandidate}
}
