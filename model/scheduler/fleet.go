// fleet.go holds the fleet index kept between decisions: members by position and name
// order, label and property columns, tainted members, and label selection over the columns.

package scheduler

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetsim/fleetsim/model/member"
)

// fleetIndex is derived state over the members a Scheduler decides on: dense columns of
// label values and property values, and which members carry taints. A Scheduler keeps it
// between decisions and brings it up to date at the start of each one (sync): a member
// whose labels, properties, resources or taints changed is re-read, a fleet whose
// membership changed is re-indexed. Columns are built the first time a decision needs them
// (a label key, a property) and kept up to date from then on.
//
// Change detection relies on what the stores guarantee: a member's Labels, Properties and
// Resources maps are replaced, never written in place, once the member has been handed to
// a decision (the simulator copies a label map before changing it; the production hub
// converts a new member per version of its objects). Taints are compared by value, and
// status (eligibility, leaving) is read from the member at every decision.
type fleetIndex struct {
	kind member.Kind
	ents []entry
	// gen changes whenever member positions change (a rebuild); caches keyed by position
	// check it.
	gen uint64
	// ver changes whenever anything the index holds changes (a rebuild or a member
	// re-read); caches derived from its content check it.
	ver uint64
	// rank is each member's position in name order; sortedByName means rank[i] == i.
	rank         []int32
	sortedByName bool
	byRank       []int32                  // members in name order; only when not sortedByName
	byName       map[string]int32         // built on first use
	byPtr        map[*member.Member]int32 // built on first use
	tainted      bitset
	keys         map[string]*labelColumn
	props        map[member.PropertyRef]*propColumn
}

// entry is one indexed member and the identity of what its index data was derived from.
type entry struct {
	m                                     *member.Member
	name                                  string
	labels, props, capacity, alloc, avail unsafe.Pointer
	taints                                []member.Taint // a copy: taints are edited in place
}

// labelColumn holds one label key's value for every member.
type labelColumn struct {
	key     string
	ids     []int32 // per member: value id, -1 when the member lacks the key
	values  []string
	count   []int32 // per value id: members holding it; 0 means the value is gone
	seen    []bool  // per value id: some member has held it
	dead    int     // values no member holds any more
	valueID map[string]int32
}

// propColumn holds one property's value for every member.
type propColumn struct {
	ref      member.PropertyRef
	has      bitset
	q        []resource.Quantity
	f        []float64 // AsApproximateFloat64, NaN when absent
	lo, hi   float64   // range over the members that report it
	rangeSet bool
}

func mapID[K comparable, V any](m map[K]V) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

func targets(m *member.Member, kind member.Kind) bool {
	return sameString(string(m.Kind), string(kind)) || (m.Kind == "" && kind == member.KindCluster)
}

// sync brings the index up to date with members (of kind).
func (ix *fleetIndex) sync(members []*member.Member, kind member.Kind) {
	if ix.kind != kind || ix.ents == nil && len(members) > 0 {
		ix.rebuild(members, kind)
		return
	}
	j := 0
	for _, m := range members {
		if !targets(m, kind) {
			continue
		}
		if j >= len(ix.ents) || ix.ents[j].m != m || !sameString(ix.ents[j].name, m.Name) {
			ix.rebuild(members, kind)
			return
		}
		if e := &ix.ents[j]; !e.current(m) {
			ix.refresh(int32(j))
		}
		j++
	}
	if j != len(ix.ents) {
		ix.rebuild(members, kind)
	}
}

func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

func (e *entry) current(m *member.Member) bool {
	if e.labels != mapID(m.Labels) || e.props != mapID(m.Properties) || e.capacity != mapID(m.Resources.Capacity) ||
		e.alloc != mapID(m.Resources.Allocatable) || e.avail != mapID(m.Resources.Available) {
		return false
	}
	return slices.Equal(m.Taints, e.taints)
}

func (e *entry) capture(m *member.Member) {
	e.m, e.name = m, m.Name
	e.labels, e.props = mapID(m.Labels), mapID(m.Properties)
	e.capacity, e.alloc, e.avail = mapID(m.Resources.Capacity), mapID(m.Resources.Allocatable), mapID(m.Resources.Available)
	e.taints = append(e.taints[:0], m.Taints...)
}

// rebuild indexes members from scratch; columns are rebuilt when next needed.
func (ix *fleetIndex) rebuild(members []*member.Member, kind member.Kind) {
	ix.kind = kind
	ix.gen++
	ix.ver++
	ix.ents = ix.ents[:0]
	for _, m := range members {
		if targets(m, kind) {
			ix.ents = append(ix.ents, entry{})
			ix.ents[len(ix.ents)-1].capture(m)
		}
	}
	if ix.ents == nil {
		ix.ents = []entry{}
	}
	n := len(ix.ents)
	ix.byName, ix.byPtr = nil, nil
	ix.keys = map[string]*labelColumn{}
	ix.props = map[member.PropertyRef]*propColumn{}
	ix.tainted = newBitset(n)
	ix.rank = slices.Grow(ix.rank[:0], n)[:n]
	ix.sortedByName = true
	for i := range ix.ents {
		if len(ix.ents[i].taints) > 0 {
			ix.tainted.set(int32(i))
		}
		if i > 0 && ix.ents[i-1].name >= ix.ents[i].name {
			ix.sortedByName = false
		}
	}
	ix.byRank = nil
	if ix.sortedByName {
		for i := range ix.rank {
			ix.rank[i] = int32(i)
		}
		return
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	// Equal names (which stores never hold) rank by position, so the order stays total.
	slices.SortFunc(order, func(a, b int32) int { return cmp.Or(cmp.Compare(ix.ents[a].name, ix.ents[b].name), cmp.Compare(a, b)) })
	for r, i := range order {
		ix.rank[i] = int32(r)
	}
	ix.byRank = order
}

// order is the members in name order (only used when they are not already).
func (ix *fleetIndex) order() []int32 { return ix.byRank }

// refresh re-reads one member whose labels, properties, resources or taints changed.
func (ix *fleetIndex) refresh(i int32) {
	ix.ver++
	e := &ix.ents[i]
	m := e.m
	e.capture(m)
	if len(e.taints) > 0 {
		ix.tainted.set(i)
	} else {
		ix.tainted.clear(i)
	}
	for key, c := range ix.keys {
		old := c.ids[i]
		nv := int32(-1)
		if v, ok := m.Labels[c.key]; ok {
			nv = c.valueOf(v)
		}
		if old != nv {
			if old >= 0 {
				if c.count[old]--; c.count[old] == 0 {
					c.dead++
				}
			}
			if nv >= 0 {
				if c.count[nv]++; c.count[nv] == 1 && c.seen[nv] {
					c.dead-- // a value no member held, back again
				}
				c.seen[nv] = true
			}
			c.ids[i] = nv
		}
		if c.dead > 64 && c.dead > len(c.values)/2 {
			delete(ix.keys, key) // mostly values no member holds any more: rebuilt when next needed
		}
	}
	for _, p := range ix.props {
		p.read(i, m)
		p.rangeSet = false
	}
}

// positions finds members by identity.
func (ix *fleetIndex) positions() map[*member.Member]int32 {
	if ix.byPtr == nil {
		ix.byPtr = make(map[*member.Member]int32, len(ix.ents))
		for i := range ix.ents {
			ix.byPtr[ix.ents[i].m] = int32(i)
		}
	}
	return ix.byPtr
}

func (ix *fleetIndex) names() map[string]int32 {
	if ix.byName == nil {
		ix.byName = make(map[string]int32, len(ix.ents))
		for i := range ix.ents {
			if _, dup := ix.byName[ix.ents[i].name]; !dup {
				ix.byName[ix.ents[i].name] = int32(i)
			}
		}
	}
	return ix.byName
}

// column returns the label column of key, building it on first use.
func (ix *fleetIndex) column(key string) *labelColumn {
	if c := ix.keys[key]; c != nil {
		return c
	}
	c := &labelColumn{key: key, ids: make([]int32, len(ix.ents)), valueID: map[string]int32{}}
	for i := range ix.ents {
		c.ids[i] = -1
		if v, ok := ix.ents[i].m.Labels[key]; ok {
			id := c.valueOf(v)
			c.ids[i] = id
			c.count[id]++
			c.seen[id] = true
		}
	}
	ix.keys[key] = c
	return c
}

func (c *labelColumn) valueOf(v string) int32 {
	if id, ok := c.valueID[v]; ok {
		return id
	}
	id := int32(len(c.values))
	c.valueID[v] = id
	c.values = append(c.values, v)
	c.count = append(c.count, 0)
	c.seen = append(c.seen, false)
	return id
}

// property returns the column of ref, building it on first use.
func (ix *fleetIndex) property(ref member.PropertyRef) *propColumn {
	if p := ix.props[ref]; p != nil {
		return p
	}
	n := len(ix.ents)
	p := &propColumn{ref: ref, has: newBitset(n), q: make([]resource.Quantity, n), f: make([]float64, n)}
	for i := range ix.ents {
		p.read(int32(i), ix.ents[i].m)
	}
	ix.props[ref] = p
	return p
}

func (p *propColumn) read(i int32, m *member.Member) {
	if q, ok := m.Property(p.ref); ok {
		p.has.set(i)
		p.q[i] = q
		p.f[i] = q.AsApproximateFloat64()
		return
	}
	p.has.clear(i)
	p.q[i] = resource.Quantity{}
	p.f[i] = math.NaN()
}

// span is the range of the property over the members that report it (AFF-PROPERTY-SORTER).
func (p *propColumn) span() (lo, hi float64) {
	if !p.rangeSet {
		p.lo, p.hi = math.Inf(1), math.Inf(-1)
		for i, v := range p.f {
			if p.has.has(int32(i)) {
				p.lo, p.hi = min(p.lo, v), max(p.hi, v)
			}
		}
		p.rangeSet = true
	}
	return p.lo, p.hi
}

// selectLabels sets out to the members sel matches. Each requirement is decided once per
// distinct value of its key (by the selector library itself, so the semantics are
// apimachinery's), then applied to the key's column.
func (ix *fleetIndex) selectLabels(sel labels.Selector, out bitset, match []bool) ([]bool, bitset) {
	out = out.resize(len(ix.ents))
	reqs, selectable := sel.Requirements()
	if !selectable {
		out.zero()
		return match, out
	}
	out.fill(len(ix.ents))
	for ri := range reqs {
		r := &reqs[ri]
		c := ix.column(r.Key())
		absent := r.Matches(oneLabel{})
		match = match[:0]
		for vi, v := range c.values {
			match = append(match, c.count[vi] > 0 && r.Matches(oneLabel{key: c.key, value: v, ok: true}))
		}
		for w := range out {
			word := out[w]
			if word == 0 {
				continue
			}
			base := w * 64
			for rest := word; rest != 0; rest &= rest - 1 {
				b := bits.TrailingZeros64(rest)
				id := c.ids[base+b]
				if id < 0 && !absent || id >= 0 && !match[id] {
					word &^= 1 << b
				}
			}
			out[w] = word
		}
	}
	return match, out
}

// oneLabel is a label set of at most one label, to ask a requirement about one value.
type oneLabel struct {
	key, value string
	ok         bool
}

func (l oneLabel) Has(k string) bool { return l.ok && k == l.key }
func (l oneLabel) Get(k string) string {
	v, _ := l.Lookup(k)
	return v
}
func (l oneLabel) Lookup(k string) (string, bool) {
	if l.Has(k) {
		return l.value, true
	}
	return "", false
}
