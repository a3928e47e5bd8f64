// ranked.go holds the ranked PickN path. Over a pickNCache, a decision meets its
// candidates in ranking order (scanRanked), and most of them are never picked nor
// reported: 50 picks and 950 reported decisions out of thousands of candidates. So a
// candidate that holds no binding gets no memo: it is a position in the cache's order (a
// "virtual" candidate), whose key, affinity, rank and combination of topology domains the
// cache holds. Its topology score and whether a DoNotSchedule constraint filters it out
// are its group's; only a picked one gets a memo. Candidates that hold a binding keep
// their memos, as elsewhere.
//
// d.vc lists the candidates in ranking order: a value v >= 0 is the cache position of a
// virtual candidate, v < 0 the memo -1-v of one that holds a binding.

package scheduler

import (
	"cmp"
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
)

// forceUnranked makes PickN decisions take the path without a pickNCache, which they
// otherwise take only when topology domains are too many to number; tests set it, so that
// the reference comparisons cover both paths.
var forceUnranked bool

// scanRanked is scanMembers' search for PickN candidates over the policy's pickNCache; it
// reports false, having done nothing, when the cache cannot serve the policy's topology
// spread constraints (their combinations of domains overflow a code).
func (d *decision) scanRanked() bool {
	if forceUnranked {
		return false
	}
	c := d.pickNCache()
	if c == nil || d.topo != nil && (c.sgroup == nil || !slices.Equal(c.radix, d.topo.radix())) {
		return false
	}
	// Members holding a binding were filtered already; those that are candidates keep
	// their memos, keyed with their obsolete bit.
	var held []int32
	for mi := range d.memos {
		mm := &d.memos[mi]
		if mm.code != codeCandidate {
			continue
		}
		p := c.pos[mm.id]
		if p < 0 {
			return false // rejected by a static filter: never, while the cache is current
		}
		mm.affinity = c.affinity[mm.id]
		mm.key = rankKey(mm.affinity, mm.obsolete, mm.rank)
		if c.sgroup != nil {
			mm.group = c.sgroup[p]
		}
		held = append(held, int32(mi))
	}
	eligible := d.newSet()
	copy(eligible, c.static)
	d.narrow(eligible, false)
	for i := range d.memos {
		eligible.clear(d.memos[i].id)
	}
	d.scanVirtual(c, eligible, held)
	return true
}

// scanVirtual lists the candidates in ranking order (d.vc): eligible members that hold no
// binding become virtual candidates.
func (d *decision) scanVirtual(c *pickNCache, eligible bitset, held []int32) {
	d.virtual, d.pc, d.vset = true, c, eligible
	d.pickedSet = d.newSet()
	d.pickedSet.zero()
	// The virtual candidates, in order: kept with the cache while the eligible set is the
	// same (it changes with status, the time's window and the members holding bindings).
	if !slices.Equal(c.lastEligible, eligible) {
		c.lastEligible = append(c.lastEligible[:0], eligible...)
		c.virtual = c.virtual[:0]
		for p, id := range c.order {
			if eligible.has(id) {
				c.virtual = append(c.virtual, int32(p))
			}
		}
	}
	d.vc, d.held = c.virtual, held // vc is read-only: it belongs to the cache
	if len(held) == 0 {
		return
	}
	slices.SortFunc(held, func(a, b int32) int { return cmp.Compare(d.memos[b].key, d.memos[a].key) })
	merged := slices.Grow(d.vcBuf[:0], len(d.vc)+len(held))
	i, j := 0, 0
	for i < len(d.vc) || j < len(held) {
		if j == len(held) || i < len(d.vc) && c.keys[d.vc[i]] > d.memos[held[j]].key {
			merged = append(merged, d.vc[i])
			i++
		} else {
			merged = append(merged, -1-held[j])
			j++
		}
	}
	d.vcBuf, d.vc = merged, merged
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

// vGroup is a combination of topology domains in a ranked decision (see spreadGroup).
type vGroup struct {
	members  []int32 // indexes into d.vc, best first; at most the number to pick
	next     int
	score    int32
	violated int
}

// vGroupOf is the candidate's group.
func (d *decision) vGroupOf(v int32) int32 {
	if v >= 0 {
		return d.pc.sgroup[v]
	}
	return d.memos[-1-v].group
}

// pickRanked is pickN's choice over ranked candidates.
func (d *decision) pickRanked(need int) {
	if d.topo == nil {
		for _, v := range d.vc[:min(need, len(d.vc))] {
			d.pickVirtual(v, 0)
		}
		return
	}
	t, c := d.topo, d.pc
	// The groups are every combination the policy's members fall in, numbered by the
	// cache; a group without candidates is never picked from. Only the best need of a
	// group can be picked: the walk stops once every group has them.
	ng := len(c.groups)
	groups := slices.Grow(d.vgroups[:0], ng)[:ng]
	for g := range groups {
		groups[g] = vGroup{members: groups[g].members[:0]}
	}
	if need > 0 {
		full := 0
		for ci, v := range d.vc {
			grp := &groups[d.vGroupOf(v)]
			if len(grp.members) < need {
				grp.members = append(grp.members, int32(ci))
				if len(grp.members) == need {
					if full++; full == ng {
						break
					}
				}
			}
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
			grp.score, grp.violated = t.score(c.groups[g])
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
		t.addDomains(c.groups[bestGroup])
	}
	d.vgroups = groups
	// Candidates holding a binding take their group's outcome in their memos; virtual ones
	// are read from their group when reported.
	for _, mi := range d.held {
		mm := &d.memos[mi]
		if mm.picked {
			continue
		}
		if grp := &groups[mm.group]; grp.violated >= 0 {
			mm.code, mm.detail = codeTopology, int32(grp.violated)
		} else {
			mm.topo = grp.score
		}
	}
}

// vState is what the ranking sees of a candidate after the picks: whether it is still a
// candidate not picked, and its topology score.
func (d *decision) vState(v int32) (bool, int32) {
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
	grp := &d.vgroups[d.pc.sgroup[v]]
	return grp.violated < 0, grp.score
}

// unselectedRanked appends up to limit candidates not picked, best first (topology score,
// then key), as the scored clusters that were passed over.
func (d *decision) unselectedRanked(out []placement.ClusterDecision, limit int) []placement.ClusterDecision {
	if limit <= 0 {
		return out
	}
	// The topology scores candidates can have: their groups' (or 0), and those of the
	// candidates holding a binding.
	var levels [8]int32
	nl := 0
	many := false
	level := func(topo int32) {
		switch {
		case slices.Contains(levels[:nl], topo):
		case nl == len(levels):
			many = true
		default:
			levels[nl] = topo
			nl++
		}
	}
	if d.topo == nil {
		level(0)
	} else {
		for g := range d.vgroups {
			if grp := &d.vgroups[g]; grp.violated < 0 {
				level(grp.score)
			}
		}
	}
	for _, mi := range d.held {
		if ok, topo := d.vState(-1 - mi); ok {
			level(topo)
		}
	}
	report := func(v int32, topo int32) {
		var name string
		var key uint64
		if v >= 0 {
			name, key = d.pc.names[v], d.pc.keys[v]
		} else {
			mm := &d.memos[-1-v]
			name, key = d.ix.ents[mm.id].name, mm.key
		}
		d.scores = append(d.scores, placement.ClusterScore{AffinityScore: int32(uint32(key>>32) ^ 0x80000000), TopologySpreadScore: topo})
		// Field by field: out has room (finish sized it) and its memory is zero, and a
		// struct copy would take the collector's bulk barrier for every field.
		out = append(out, placement.ClusterDecision{})
		e := &out[len(out)-1]
		e.ClusterName, e.ClusterScore, e.Reason = name, &d.scores[len(d.scores)-1], ReasonNotHighEnough
	}
	if many {
		// Many distinct topology scores: rank them all.
		d.ranked = d.ranked[:0]
		for ci, v := range d.vc {
			if ok, topo := d.vState(v); ok {
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
		if g := d.onlyGroup(level); g >= 0 {
			// One group has this score and no candidate holds a binding: walk the
			// group's own members (in order), the eligible ones not picked.
			for _, p := range d.pc.members[g] {
				if id := d.pc.order[p]; d.vset.has(id) && !d.pickedSet.has(id) {
					report(p, level)
					if n++; n == limit {
						return out
					}
				}
			}
			continue
		}
		for _, v := range d.vc {
			if ok, topo := d.vState(v); ok && topo == level {
				report(v, topo)
				if n++; n == limit {
					return out
				}
			}
		}
	}
	return out
}

// onlyGroup is the one group whose candidates have the topology score level, when no
// other candidate can have it (none holds a binding), or -1.
func (d *decision) onlyGroup(level int32) int {
	if d.topo == nil || len(d.held) > 0 {
		return -1
	}
	only := -1
	for g := range d.vgroups {
		if grp := &d.vgroups[g]; grp.violated < 0 && grp.score == level {
			if only >= 0 {
				return -1
			}
			only = g
		}
	}
	return only
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
	g := d.pc.gindex[spreadCode(d.topo.cols, d.pc.radix, id)]
	if grp := &d.vgroups[g]; grp.violated >= 0 {
		return true, memo{id: id, code: codeTopology, detail: int32(grp.violated)}
	}
	return true, memo{id: id, code: codeCandidate}
}
