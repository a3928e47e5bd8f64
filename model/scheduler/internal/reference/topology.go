package reference

import "math"

// topologyState holds, per constraint, the domains (label values) and the number of
// Scheduled or Bound clusters in each, kept up to date as picks are made.
type topologyState struct {
	constraints []compiledConstraint
	index       []map[string]int32 // per constraint: label value → domain
	counts      [][]int32          // per constraint: domain → clusters holding the placement
	stats       []skewStats        // per constraint, refreshed after each change
	dirty       []bool
}

// skewStats are the smallest, second smallest and largest domain counts.
type skewStats struct{ smallest, second, largest int32 }

func newTopologyState(cs []compiledConstraint) *topologyState {
	t := &topologyState{
		constraints: cs,
		index:       make([]map[string]int32, len(cs)),
		counts:      make([][]int32, len(cs)),
		stats:       make([]skewStats, len(cs)),
		dirty:       make([]bool, len(cs)),
	}
	for i := range cs {
		t.index[i] = map[string]int32{}
		t.dirty[i] = true
	}
	return t
}

func (t *topologyState) domain(c int, value string) int32 {
	if d, ok := t.index[c][value]; ok {
		return d
	}
	d := int32(len(t.counts[c]))
	t.index[c][value] = d
	t.counts[c] = append(t.counts[c], 0)
	t.dirty[c] = true
	return d
}

// add counts one more cluster holding the placement in the given domains.
func (t *topologyState) add(domains []int32) {
	for c, d := range domains {
		if d >= 0 {
			t.counts[c][d]++
			t.dirty[c] = true
		}
	}
}

func (t *topologyState) refresh(c int) skewStats {
	if !t.dirty[c] {
		return t.stats[c]
	}
	s := skewStats{smallest: math.MaxInt32, second: math.MaxInt32, largest: math.MinInt32}
	for _, n := range t.counts[c] {
		switch {
		case n < s.smallest:
			s.second, s.smallest = s.smallest, n
		case n < s.second:
			s.second = n
		}
		s.largest = max(s.largest, n)
	}
	t.stats[c], t.dirty[c] = s, false
	return s
}

// score returns the summed topology spread score of placing one more cluster in the given
// domains, or the index of the first DoNotSchedule constraint that placing it would violate
// (TOPO-SCORE). A cluster without a constraint's key scores 0 for it and never violates it.
func (t *topologyState) score(domains []int32) (score int32, violated int) {
	for c, d := range domains {
		if d < 0 {
			continue
		}
		s := t.refresh(c)
		skew, n, maxSkew := s.largest-s.smallest, t.counts[c][d], t.constraints[c].maxSkew
		var change int32
		var breaks bool
		switch {
		case s.largest == s.smallest:
			change, breaks = 1, skew+1 > maxSkew
		case n == s.smallest && s.smallest != s.second:
			change, breaks = -1, skew-1 > maxSkew
		case n == s.largest:
			change, breaks = 1, skew+1 > maxSkew
		default:
			change, breaks = 0, skew > maxSkew
		}
		switch {
		case !breaks:
			score -= change
		case t.constraints[c].doNotSchedule:
			return 0, c
		default:
			score += ScheduleAnywayPenalty
		}
	}
	return score, -1
}

// spreadGroup is the candidates sharing one combination of domains: their topology score is
// the same, so only each group's best member competes in a round.
type spreadGroup struct {
	domains []int32
	members []int32 // best first
	next    int
	// score and violated are from the latest round: what users see for the clusters left
	// over is why they lost the round in which the last pick was made.
	score    int32
	violated int
}

// pickSpread picks up to need candidates one at a time, rescoring after each pick.
func (d *decision) pickSpread(need int) {
	groupIndex := map[string]int32{}
	var groups []spreadGroup
	var key []byte
	groupOf := make([]int32, len(d.cands))
	var sizes []int
	for ci, i := range d.cands {
		key = key[:0]
		for _, dom := range d.domainsOf(i) {
			key = append(key, byte(dom), byte(dom>>8), byte(dom>>16), byte(dom>>24))
		}
		g, ok := groupIndex[string(key)]
		if !ok {
			g = int32(len(groups))
			groupIndex[string(key)] = g
			groups = append(groups, spreadGroup{domains: d.domainsOf(i)})
			sizes = append(sizes, 0)
		}
		groupOf[ci] = g
		sizes[g]++
	}
	all := make([]int32, len(d.cands))
	offset := 0
	for g := range groups {
		groups[g].members = all[offset : offset : offset+sizes[g]]
		offset += sizes[g]
	}
	for ci, i := range d.cands {
		g := &groups[groupOf[ci]]
		g.members = append(g.members, i)
	}
	for g := range groups {
		// Within a group the topology score is equal, so rank once by the other keys; only
		// the best `need` members of a group can ever be picked.
		groups[g].members = topK(groups[g].members[:0:0], groups[g].members, need, d.better)
	}

	for picked := 0; picked < need || picked == 0; picked++ {
		// Every round scores all groups, so leftovers report the last round's view; a round
		// runs even when nothing is needed, to score the candidates passed over.
		best := int32(-1)
		bestGroup := -1
		for g := range groups {
			grp := &groups[g]
			grp.score, grp.violated = d.topo.score(grp.domains)
			if grp.violated >= 0 || grp.next >= len(grp.members) || picked >= need {
				continue
			}
			head := grp.members[grp.next]
			d.memos[head].topo = grp.score
			if best < 0 || d.better(head, best) {
				best, bestGroup = head, g
			}
		}
		if best < 0 {
			break
		}
		d.memos[best].picked = true
		groups[bestGroup].next++
		d.topo.add(groups[bestGroup].domains)
	}
	for ci, i := range d.cands {
		mm := &d.memos[i]
		if mm.picked {
			continue
		}
		if grp := &groups[groupOf[ci]]; grp.violated >= 0 {
			mm.code, mm.detail = codeTopology, int32(grp.violated)
		} else {
			mm.topo = grp.score
		}
	}
}
