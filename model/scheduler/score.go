// score.go holds scoring and ranking of PickN candidates: the preferred affinity terms
// and property sorters made ready over the index, a candidate's affinity score and ranking
// key, and the candidates as the ranking sees them.

package scheduler

import "math"

// affinityTerm is a preferred term ready to score candidates: its label selection over the
// fleet and its sorter's column and range.
type affinityTerm struct {
	set    bitset // nil: every member
	col    *propColumn
	lo, hi float64
}

// prepareAffinity selects each preferred term's labels once over the index and reads its
// sorter's range (PickN).
func (d *decision) prepareAffinity() {
	cp := d.policy
	d.terms = make([]affinityTerm, len(cp.preferred))
	for pi := range cp.preferred {
		p := &cp.preferred[pi]
		t := &d.terms[pi]
		if p.labels != nil {
			t.set = d.newSet()
			d.match, t.set = d.ix.selectLabels(p.labels, t.set, d.match)
		}
		if p.sorter >= 0 {
			t.col = d.ix.property(cp.sorters[p.sorter])
			t.lo, t.hi = t.col.span()
		}
	}
}

// scoreCandidate computes a candidate's affinity score and ranking key (PickN). Candidates are
// scored even when nothing is to be picked, so that the decisions report true scores for
// the clusters that were passed over.
func (d *decision) scoreCandidate(mm *memo) {
	mm.affinity = d.affinityOf(mm.id)
	mm.key = rankKey(mm.affinity, mm.obsolete, mm.rank)
}

// affinityOf is the member's affinity score: the preferred terms it matches, weighted, and
// its sorters' values within their ranges.
func (d *decision) affinityOf(id int32) int32 {
	cp := d.policy
	var total int32
	for pi := range d.terms {
		p, t := &cp.preferred[pi], &d.terms[pi]
		if t.set != nil && !t.set.has(id) {
			continue
		}
		if p.sorter < 0 {
			total += p.weight
			continue
		}
		v := t.col.f[id]
		if math.IsNaN(v) || t.hi <= t.lo {
			continue // no value, or no spread: the term adds nothing
		}
		ratio := (v - t.lo) / (t.hi - t.lo)
		if !p.desc {
			ratio = 1 - ratio
		}
		total += int32(math.Round(float64(p.weight) * ratio))
	}
	return total
}

// better ranks candidates: topology score, affinity score, an existing obsolete binding
// (less churn), then the greater name (SCHED-SORT, DC-2).
func (d *decision) better(a, b int32) bool {
	ma, mb := &d.memos[a], &d.memos[b]
	if ma.topo != mb.topo {
		return ma.topo > mb.topo
	}
	return ma.key > mb.key
}

// rankedCands is the candidates that are still candidates and not picked, as the ranking
// sees them.
func (d *decision) rankedCands() []ranked {
	d.ranked = d.ranked[:0]
	for _, i := range d.cands {
		if mm := &d.memos[i]; !mm.picked && mm.code == codeCandidate {
			d.ranked = append(d.ranked, ranked{topo: mm.topo, mi: i, key: mm.key})
		}
	}
	return d.ranked
}
