// affinity.go holds the ClusterAffinity plugin's columnar machinery: the members the
// required terms select, as set operations over the fleet index, and the preferred terms
// and property sorters made ready to score members from the index's columns.

package scheduler

import (
	"math"
	"math/bits"

	"github.com/fleetsim/fleetsim/model/mutant"
)

// narrowRequired is matchesRequired over a set: the required terms' selection.
func (d *decision) narrowRequired(set bitset) {
	if len(d.policy.required) > 0 {
		set.and(d.requiredSet())
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

// affinityOf is the member's ClusterAffinity score: the preferred terms it matches,
// weighted, and its sorters' values within their ranges.
func (d *decision) affinityOf(id int32) int32 {
	cp := d.policy
	var total int32
	for pi := range d.terms {
		p, t := &cp.preferred[pi], &d.terms[pi]
		if t.set != nil && !t.set.has(id) {
			continue
		}
		if mutant.On("scheduler.affinityWeightSign") && p.sorter < 0 {
			total -= p.weight
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
