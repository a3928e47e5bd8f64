// memo.go holds one decision's scratch per member: the filter codes, the memos of the
// members a decision touches, and the decision's scratch bitsets.

package scheduler

import "github.com/fleetsim/fleetsim/model/member"

// filterCode is why a member is, or is not, a candidate for a new pick. Kept as a small
// code (not a string) so that filtering thousands of members formats nothing.
type filterCode uint8

const (
	codeCandidate filterCode = iota
	// codeKept: the member holds a current binding, which stays (IgnoredDuringExecution).
	codeKept
	// codeNotNamed: PickFixed and the member is not in clusterNames; it is not reported.
	codeNotNamed
	// codeUnset: not filtered yet.
	codeUnset
	// codeRejected+i: plugins[i] filtered the member out (see filterCode.plugin).
	codeRejected
)

// memo is the scratch of one decision about one member: only members the decision touches
// (candidates, members holding a binding, members reported) get one.
type memo struct {
	id       int32 // position in the fleet index
	rank     int32 // position in name order
	slot     int32 // index into decision.slots, or -1
	elig     member.Eligibility
	code     filterCode
	obsolete bool // holds a Scheduled or Bound binding of an older policy snapshot
	picked   bool
	detail   int32 // the rejecting plugin's note for its reason: a taint or constraint index
	affinity int32
	topo     int32
	key      uint64 // rankKey, once scored
	group    int32  // the ranked PickN path: a candidate's group of topology domains (pickNCache)
}

// memoIndex returns the member's memo, creating it (with its filter code unset).
func (d *decision) memoIndex(id int32) int32 {
	if d.stamp[id] == d.gen {
		return d.memoOf[id]
	}
	mi := int32(len(d.memos))
	d.memos = append(d.memos, memo{id: id, rank: d.ix.rank[id], slot: -1, code: codeUnset})
	d.stamp[id], d.memoOf[id] = d.gen, mi
	return mi
}

// filtered returns the member's memo with its filter code computed.
func (d *decision) filtered(id int32) *memo {
	mm := &d.memos[d.memoIndex(id)]
	if mm.code == codeUnset {
		d.filter(mm)
	}
	return mm
}

func (d *decision) member(mm *memo) *member.Member { return d.ix.ents[mm.id].m }

// newSet returns a scratch bitset for this decision.
func (d *decision) newSet() bitset {
	if len(d.sets) < cap(d.sets) {
		d.sets = d.sets[:len(d.sets)+1]
		b := d.sets[len(d.sets)-1].resize(len(d.ix.ents))
		d.sets[len(d.sets)-1] = b
		return b
	}
	b := newBitset(len(d.ix.ents))
	d.sets = append(d.sets, b)
	return b
}
