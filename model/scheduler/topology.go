// topology.go holds topology spread: the clusters per domain of each constraint, the
// score and DoNotSchedule verdict of placing one more cluster, and PickN's selection
// under spread constraints, one pick per round with scores recomputed after each.

package scheduler

import (
	"math"
	"slices"

	"github.com/fleetsim/fleetsim/model/mutant"
)

// topologyState holds, per constraint, the number of Scheduled or Bound clusters in each
// domain, kept up to date as picks are made. A domain is a value of the constraint's key
// that some member carries; its id is the value's id in the fleet index's label column.
type topologyState struct {
	constraints []compiledConstraint
	cols        []*labelColumn
	counts      [][]int32   // per constraint: value id → clusters holding the placement
	stats       []skewStats // per constraint, refreshed after each change
	dirty       []bool
}

// skewStats are the smallest, second smallest and largest domain counts.
type skewStats struct{ smallest, second, largest int32 }

func newTopologyState(cs []compiledConstraint, ix *fleetIndex) *topologyState {
	t := &topologyState{
		constraints: cs,
		cols:        make([]*labelColumn, len(cs)),
		counts:      make([][]int32, len(cs)),
		stats:       make([]skewStats, len(cs)),
		dirty:       make([]bool, len(cs)),
	}
	for i := range cs {
		t.cols[i] = ix.column(cs[i].key)
		t.counts[i] = make([]int32, len(t.cols[i].values))
		t.dirty[i] = true
	}
	return t
}

// radix is the mixed radix pickSpread numbers combinations of domains in (nil when they
// would overflow).
func (t *topologyState) radix() []uint64 {
	r, ok := spreadRadix(t.cols)
	if !ok {
		return nil
	}
	return r
}

// domains appends the member's domain per constraint (-1 where it lacks the key).
func (t *topologyState) domains(dst []int32, id int32) []int32 {
	for _, c := range t.cols {
		dst = append(dst, c.ids[id])
	}
	return dst
}

// add counts one more cluster holding the placement: the member at id.
func (t *topologyState) add(id int32) {
	for c, col := range t.cols {
		if d := col.ids[id]; d >= 0 {
			t.counts[c][d]++
			t.dirty[c] = true
		}
	}
}

// addDomains counts one more cluster holding the placement in the given domains.
func (t *topologyState) addDomains(domains []int32) {
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
	live := t.cols[c].count
	for v, n := range t.counts[c] {
		if live[v] == 0 {
			continue // no member carries the value any more: not a domain
		}
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

// codeTopology is the filter code of a cluster a DoNotSchedule constraint filters out
// (plugins.go): the selection rounds decide it, as it depends on the picks already made.
var codeTopology = codeOf(PluginTopologySpread)

// ScheduleAnywayPenalty is the topology score of a cluster that would break a ScheduleAnyway
// constraint's maxSkew.
const ScheduleAnywayPenalty = -1000

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
		if mutant.On("scheduler.topologySkewOffByOne") && change == 1 {
			breaks = skew+1 > maxSkew+1
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
	members []ranked // best first
	next    int
	// score and violated are from the latest round: what users see for the clusters left
	// over is why they lost the round in which the last pick was made.
	score    int32
	violated int
}

// pickSpread picks up to need candidates one at a time, rescoring after each pick.
func (d *decision) pickSpread(need int) {
	t := d.topo
	// Group candidates by their combination of domains: a mixed-radix code of the value ids.
	radix, ok := spreadRadix(t.cols)
	overflow := !ok
	combos := uint64(1)
	if ok {
		combos = radix[len(radix)-1] * uint64(len(t.cols[len(t.cols)-1].values)+1)
	}
	var dense []int32
	var sparse map[uint64]int32
	var byKey map[string]int32
	switch {
	case overflow:
		byKey = map[string]int32{}
	case combos <= 1<<16:
		dense = make([]int32, combos)
		for i := range dense {
			dense[i] = -1
		}
	default:
		sparse = map[uint64]int32{}
	}
	var groups []spreadGroup
	var doms []int32 // every group's domains, back to back
	var key []byte
	d.groupOf = slices.Grow(d.groupOf[:0], len(d.cands))[:len(d.cands)]
	groupOf := d.groupOf
	var sizes []int
	nc := len(t.cols)
	for ci, i := range d.cands {
		var g int32
		found := false
		var code uint64
		switch {
		case byKey != nil:
			id := d.memos[i].id
			key = key[:0]
			for _, col := range t.cols {
				dom := col.ids[id]
				key = append(key, byte(dom), byte(dom>>8), byte(dom>>16), byte(dom>>24))
			}
			g, found = byKey[string(key)]
		default:
			code = spreadCode(t.cols, radix, d.memos[i].id)
			if dense != nil {
				g = dense[code]
				found = g >= 0
			} else {
				g, found = sparse[code]
			}
		}
		if !found {
			g = int32(len(groups))
			switch {
			case byKey != nil:
				byKey[string(key)] = g
			case dense != nil:
				dense[code] = g
			default:
				sparse[code] = g
			}
			doms = t.domains(doms, d.memos[i].id)
			groups = append(groups, spreadGroup{})
			sizes = append(sizes, 0)
		}
		groupOf[ci] = g
		sizes[g]++
	}
	d.spread = slices.Grow(d.spread[:0], len(d.cands))[:len(d.cands)]
	all := d.spread
	offset := 0
	for g := range groups {
		groups[g].domains = doms[g*nc : (g+1)*nc : (g+1)*nc]
		groups[g].members = all[offset : offset : offset+sizes[g]]
		offset += sizes[g]
	}
	for ci, i := range d.cands {
		g := &groups[groupOf[ci]]
		g.members = append(g.members, ranked{mi: i, key: d.memos[i].key})
	}
	for g := range groups {
		// Within a group the topology score is equal, so rank once by the other keys; only
		// the best `need` members of a group can ever be picked.
		groups[g].members = topK(groups[g].members[:0], groups[g].members, need) // in place
	}

	for picked := 0; picked < need || picked == 0; picked++ {
		// Every round scores all groups, so leftovers report the last round's view; a round
		// runs even when nothing is needed, to score the candidates passed over.
		best := int32(-1)
		bestGroup := -1
		for g := range groups {
			grp := &groups[g]
			grp.score, grp.violated = t.score(grp.domains)
			if grp.violated >= 0 || grp.next >= len(grp.members) || picked >= need {
				continue
			}
			head := grp.members[grp.next].mi
			d.memos[head].topo = grp.score
			if best < 0 || d.better(head, best) {
				best, bestGroup = head, g
			}
		}
		if best < 0 {
			break
		}
		d.pick(best)
		groups[bestGroup].next++
		t.addDomains(groups[bestGroup].domains)
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

// spreadRadix is the mixed radix pickSpread numbers combinations of topology domains in,
// one digit per constraint (its column's value ids, plus one for no value); false when
// the combinations would overflow.
func spreadRadix(cols []*labelColumn) ([]uint64, bool) {
	radix := make([]uint64, len(cols))
	combos := uint64(1)
	overflow := false
	for c, col := range cols {
		radix[c] = combos
		r := uint64(len(col.values) + 1)
		if combos > math.MaxUint64/r/2 {
			overflow = true
		}
		combos *= r
	}
	return radix, !overflow
}

// spreadCode is the member's combination of topology domains in radix.
func spreadCode(cols []*labelColumn, radix []uint64, id int32) uint64 {
	var code uint64
	for c, col := range cols {
		code += uint64(col.ids[id]+1) * radix[c]
	}
	return code
}
