package scheduler

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// statusColumn is each indexed member's agent status and Leaving as last read (a digest of
// what eligibility needs), kept between decisions when the store hands over a StatusFeed
// (Input.Status), so that a decision checks its candidates' eligibility from a dense
// column instead of reading every candidate's member object. A member's entry is valid
// while its bit in valid is set; it is read from the member the first time a decision
// needs it after that. Every bit is cleared when the index is brought up to date (a
// member's Leaving may have changed: the index does not look at it), when the feed is
// another one or forgot writes the column has not seen; the bit of every member the feed
// names is cleared before each decision. Reasons (an ineligible member's Since) are
// rendered from the member itself.
type statusColumn struct {
	feed   *member.StatusFeed // nil: the column is not in use
	seq    uint64             // the feed's version the column has seen
	ver    uint64             // the index's version the column was started at
	valid  bitset
	digest []statusDigest
	// elig caches, for the members in known (whose digest is exact), whether they are
	// eligible at the cut-offs cut; the window says for which later cut-offs every one of
	// those bits is still the same (see eligWindow). A member's bit leaves known when its
	// status is re-read.
	cut    cutoffs
	known  bitset
	elig   bitset
	window eligWindow
}

// eligWindow bounds the times the cached eligibility bits were decided by: the least
// heartbeat of a member found not stale and the greatest of one found stale; the least
// health transition of an unhealthy member found within the tolerance and the greatest of
// one found beyond it. Every bit is the same at other cut-offs when each bound stays on
// its side of them. Bounds are only ever widened (a member re-read keeps its old times in
// them), which can only make the window narrower, never wrong.
type eligWindow struct {
	minFresh, maxStale, minTolerated, maxIntolerable int64
}

func emptyWindow() eligWindow {
	return eligWindow{minFresh: math.MaxInt64, maxStale: math.MinInt64, minTolerated: math.MaxInt64, maxIntolerable: math.MinInt64}
}

// holds reports whether every bit decided within the window is the same at cut.
func (w *eligWindow) holds(cut *cutoffs) bool {
	return w.maxStale < cut.stale && w.minFresh >= cut.stale && w.maxIntolerable < cut.unhealthySince && w.minTolerated >= cut.unhealthySince
}

// decide is the eligibility of an exact digest at cut, widening the window by the times
// it was decided by.
func (w *eligWindow) decide(g *statusDigest, cut *cutoffs) bool {
	if !g.ok {
		return false
	}
	if g.heartbeat < cut.stale {
		w.maxStale = max(w.maxStale, g.heartbeat)
		return false
	}
	w.minFresh = min(w.minFresh, g.heartbeat)
	if g.healthy {
		return true
	}
	if g.healthTransition < cut.unhealthySince {
		w.maxIntolerable = max(w.maxIntolerable, g.healthTransition)
		return false
	}
	w.minTolerated = min(w.minTolerated, g.healthTransition)
	return true
}

// statusDigest is what eligibility needs of a member's status, with its two times as Unix
// nanoseconds: ok says it is not leaving and its agent is present, joined and reports
// health. exact says both times have no monotonic clock reading and are within the range
// of Unix nanoseconds, so that for a cut-off time of the same kind, t.Before(cut) is
// exactly nanos(t) < nanos(cut); otherwise the scan asks CheckStatus.
type statusDigest struct {
	ok, healthy, exact          bool
	heartbeat, healthTransition int64
}

// unixNanos returns t as Unix nanoseconds, and false if t carries a monotonic clock
// reading (Before would compare that) or is beyond the range of int64 nanoseconds.
func unixNanos(t time.Time) (int64, bool) {
	if t != t.Round(0) {
		return 0, false // a monotonic reading
	}
	ns := t.UnixNano()
	return ns, time.Unix(0, ns).Equal(t)
}

func digestOf(leaving bool, a *member.AgentStatus) statusDigest {
	hb, ok1 := unixNanos(a.LastHeartbeat)
	ht, ok2 := unixNanos(a.HealthTransition)
	return statusDigest{
		ok:      !leaving && a.Present && a.Joined && a.HealthKnown,
		healthy: a.Healthy, exact: ok1 && ok2,
		heartbeat: hb, healthTransition: ht,
	}
}

// cutoffs are a decision's two eligibility cut-off times as Unix nanoseconds (exact: both
// can be, see statusDigest).
type cutoffs struct {
	exact                 bool
	stale, unhealthySince int64
}

func newCutoffs(now time.Time, cfg member.EligibilityConfig) cutoffs {
	s, ok1 := unixNanos(now.Add(-cfg.HeartbeatTimeout))
	u, ok2 := unixNanos(now.Add(-cfg.UnhealthyTolerance))
	return cutoffs{exact: ok1 && ok2, stale: s, unhealthySince: u}
}

// eligibleOK is check(id).OK().
func (d *decision) eligibleOK(id int32, cut *cutoffs) bool {
	c := &d.status
	if c.feed == nil {
		return d.eligible.Check(d.ix.ents[id].m).OK()
	}
	if !c.valid.has(id) {
		d.read(id)
	}
	g := &c.digest[id]
	if !g.exact || !cut.exact {
		return d.eligible.Check(d.ix.ents[id].m).OK()
	}
	// CheckStatus: not Before the stale cut-off, and healthy or not Before the other.
	return g.ok && g.heartbeat >= cut.stale && (g.healthy || g.healthTransition >= cut.unhealthySince)
}

// read copies the member's status into the column.
func (d *decision) read(id int32) {
	c := &d.status
	m := d.ix.ents[id].m
	c.digest[id] = digestOf(m.Leaving, &m.Agent)
	c.valid.set(id)
}

// syncStatus brings the status column up to date with the store's feed; synced says
// whether the index was just brought up to date from the members (rather than skipped).
func (s *Scheduler) syncStatus(in Input, synced bool) {
	c := &s.status
	feed := in.Status
	if feed == nil {
		c.feed = nil
		return
	}
	n := len(s.ix.ents)
	if c.feed == feed && !synced && c.ver == s.ix.ver && len(c.digest) == n {
		ok := feed.Since(c.seq, func(m *member.Member) {
			if id, found := s.ix.positions()[m]; found {
				c.valid.clear(id)
				c.known.clear(id)
			}
		})
		if ok {
			c.seq = feed.Version()
			return
		}
	}
	c.feed, c.seq, c.ver = feed, feed.Version(), s.ix.ver
	c.valid = c.valid.resize(n)
	c.valid.zero()
	c.known = c.known.resize(n)
	c.known.zero()
	c.elig = c.elig.resize(n)
	c.window = emptyWindow()
	c.cut = cutoffs{}
	if cap(c.digest) < n {
		c.digest = make([]statusDigest, n)
	}
	c.digest = c.digest[:n]
}

// check is the member's eligibility at the decision's time, with its reason.
func (d *decision) check(id int32) member.Eligibility {
	return d.eligible.Check(d.ix.ents[id].m)
}

// pickNCache is what a PickN decision derives from the policy's required and preferred
// terms and tolerations and from the index alone, kept while neither changes: the members
// the required terms select and whose taints the policy tolerates, each member's affinity
// score, and those members in ranking order (affinity score, then the greater name). A
// decision then only checks eligibility and bindings, and meets candidates already ranked.
type pickNCache struct {
	ver      uint64 // the index's version it was derived from
	affinity []int32
	// static is the members the required terms select and whose taints are tolerated;
	// order is the same members best first by rankKey(affinity, false, rank), and keys
	// their keys.
	static bitset
	order  []int32
	keys   []uint64
	pos    []int32 // per member: its position in order, or -1
	// virtual is the last decision's virtual candidates (the positions of the members of
	// lastEligible, in order), kept for the next decision with the same eligible set.
	lastEligible bitset
	virtual      []int32
	// names are order's names.
	names []string
	// Under topology spread constraints whose combinations of domains are countable: the
	// combinations the members in order fall in (groups, each its domains per constraint),
	// numbered in order of first appearance; sgroup is each position's group and gindex
	// finds a group by its code in radix (see spreadCode).
	radix  []uint64
	groups [][]int32
	sgroup []int32
	gindex map[uint64]int32
	// members is each group's positions, in order.
	members [][]int32
}

// maxPickNCaches bounds the policies a Scheduler keeps a pickNCache for.
const maxPickNCaches = 64

// fingerprint renders what a pickNCache depends on in the policy: its required terms,
// preferred terms and tolerations.
func (c *compiledPolicy) fingerprint() string {
	b := make([]byte, 0, 256)
	sel := func(s interface{ String() string }, isNil bool) {
		if isNil {
			b = append(b, '*')
		} else {
			b = strconv.AppendQuote(b, s.String())
		}
	}
	for i := range c.required {
		t := &c.required[i]
		b = append(b, 'R')
		sel(t.labels, t.labels == nil)
		for _, p := range t.props {
			b = append(b, '|')
			b = strconv.AppendQuote(b, p.ref.Name)
			b = strconv.AppendQuote(b, string(p.op))
			b = strconv.AppendQuote(b, p.value.String())
		}
		b = append(b, '\n')
	}
	for i := range c.preferred {
		p := &c.preferred[i]
		b = strconv.AppendInt(append(b, 'P'), int64(p.weight), 10)
		b = append(b, ' ')
		sel(p.labels, p.labels == nil)
		if p.sorter >= 0 {
			b = strconv.AppendQuote(append(b, " S"...), c.sorters[p.sorter].Name)
			b = strconv.AppendBool(append(b, ' '), p.desc)
		}
		b = append(b, '\n')
	}
	for _, t := range c.tolerations {
		b = append(b, 'T')
		for _, f := range []string{t.Key, string(t.Operator), t.Value, string(t.Effect)} {
			b = strconv.AppendQuote(b, f)
		}
		b = append(b, '\n')
	}
	for _, t := range c.topology {
		b = append(strconv.AppendQuote(append(b, 'S'), t.key), '\n')
	}
	return string(b)
}

// pickNCache returns the decision's cache, deriving it if the policy or the index changed,
// or nil, for the decision to take the unranked path: when the index changed since the
// policy's previous decision (deriving a cache costs a few decisions, so it is derived
// only once the index held still from one decision to the next: a fleet that changes
// before every decision is decided as before), or when the Scheduler already keeps
// maxPickNCaches current ones for other policies (which must not take turns evicting each
// other).
func (d *decision) pickNCache() *pickNCache {
	key := d.policy.fingerprint()
	if c := d.pcache[key]; c != nil && c.ver == d.ix.ver {
		return c
	}
	if d.pseen[key] != d.ix.ver {
		if d.pseen == nil || len(d.pseen) >= 4*maxPickNCaches {
			d.pseen = map[string]uint64{}
		}
		d.pseen[key] = d.ix.ver
		return nil
	}
	if d.pcache == nil {
		d.pcache = map[string]*pickNCache{}
	}
	delete(d.pcache, key)
	if len(d.pcache) >= maxPickNCaches {
		for k, c := range d.pcache {
			if c.ver != d.ix.ver {
				delete(d.pcache, k) // derived from an older index: never used again
			}
		}
		if len(d.pcache) >= maxPickNCaches {
			return nil
		}
	}
	n := len(d.ix.ents)
	c := &pickNCache{ver: d.ix.ver, affinity: make([]int32, n)}
	var set bitset
	if len(d.policy.required) == 0 {
		set = d.newSet()
		set.fill(n)
	} else {
		set = d.requiredSet()
	}
	d.prepareAffinity()
	c.static = newBitset(n)
	set.each(func(id int32) {
		if d.ix.tainted.has(id) && placement.FirstUntolerated(d.ix.ents[id].taints, d.policy.tolerations) >= 0 {
			return
		}
		c.static.set(id)
		c.affinity[id] = d.affinityOf(id)
		c.keys = append(c.keys, ^rankKey(c.affinity[id], false, d.ix.rank[id]))
	})
	// Keys are distinct (they hold the rank) and name their member (by its rank): sorting
	// the complemented keys orders the members best first without a comparison function.
	slices.Sort(c.keys)
	c.order = make([]int32, len(c.keys))
	c.names = make([]string, len(c.keys))
	c.pos = make([]int32, n)
	for i := range c.pos {
		c.pos[i] = -1
	}
	for p := range c.keys {
		c.keys[p] = ^c.keys[p]
		id := int32(c.keys[p] & 0x7fffffff) // the rank
		if !d.ix.sortedByName {
			id = d.ix.order()[id]
		}
		c.order[p], c.pos[id] = id, int32(p)
		c.names[p] = d.ix.ents[id].name
	}
	if len(d.policy.topology) > 0 {
		cols := make([]*labelColumn, len(d.policy.topology))
		for i := range cols {
			cols[i] = d.ix.column(d.policy.topology[i].key)
		}
		if radix, ok := spreadRadix(cols); ok {
			c.radix = radix
			c.sgroup = make([]int32, len(c.order))
			c.gindex = map[uint64]int32{}
			for p, id := range c.order {
				code := spreadCode(cols, radix, id)
				g, ok := c.gindex[code]
				if !ok {
					g = int32(len(c.groups))
					c.gindex[code] = g
					doms := make([]int32, len(cols))
					for i, col := range cols {
						doms[i] = col.ids[id]
					}
					c.groups = append(c.groups, doms)
				}
				c.sgroup[p] = g
			}
			c.members = make([][]int32, len(c.groups))
			for p, g := range c.sgroup {
				c.members[g] = append(c.members[g], int32(p))
			}
		}
	}
	d.pcache[key] = c
	return c
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

// forceUnranked makes PickN decisions take the path without a pickNCache, which they
// otherwise take only when topology domains are too many to number; tests set it, so that
// the reference comparisons cover both paths.
var forceUnranked bool

// scanRanked is scanMembers' search for PickN candidates over the policy's pickNCache
// (ranked.go); it reports false, having done nothing, when the cache cannot serve the
// policy's topology spread constraints (their combinations of domains overflow a code).
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
			return false // not selected and tolerated by the index: never, while it is current
		}
		mm.affinity = c.affinity[mm.id]
		mm.key = rankKey(mm.affinity, mm.obsolete, mm.rank)
		if c.sgroup != nil {
			mm.group = c.sgroup[p]
		}
		held = append(held, int32(mi))
	}
	eligible := d.eligibleSet(c.static)
	for i := range d.memos {
		eligible.clear(d.memos[i].id)
	}
	d.scanVirtual(c, eligible, held)
	return true
}

// eligibleSet returns the members of set that are eligible at the decision's time. With a
// status column and exact times it keeps the bits between decisions: only members whose
// status was re-read since are decided, unless the time moved beyond the cached bits'
// window, when all are decided again.
func (d *decision) eligibleSet(set bitset) bitset {
	eligible := d.newSet()
	cut := newCutoffs(d.in.Now, d.opts.Eligibility)
	st := &d.status
	if st.feed == nil || !cut.exact {
		for w, word := range set {
			var out uint64
			for rest := word; rest != 0; rest &= rest - 1 {
				b := bits.TrailingZeros64(rest)
				if d.eligibleOK(int32(w*64+b), &cut) {
					out |= 1 << b
				}
			}
			eligible[w] = out
		}
		return eligible
	}
	if !st.cut.exact {
		st.cut = cut // the first decision since the column started
	}
	for round := 0; ; round++ {
		for w, word := range set {
			need := word &^ st.known[w]
			if need == 0 {
				eligible[w] = word & st.elig[w]
				continue
			}
			for missing := need &^ st.valid[w]; missing != 0; missing &= missing - 1 {
				d.read(int32(w*64 + bits.TrailingZeros64(missing)))
			}
			e, k := st.elig[w], st.known[w]
			var slow uint64 // members whose times are not exact: decided now, not kept
			for rest := need; rest != 0; rest &= rest - 1 {
				b := bits.TrailingZeros64(rest)
				id := int32(w*64 + b)
				g := &st.digest[id]
				if !g.exact {
					if d.eligibleOK(id, &cut) {
						slow |= 1 << b
					}
					continue
				}
				k |= 1 << b
				if st.window.decide(g, &st.cut) {
					e |= 1 << b
				} else {
					e &^= 1 << b
				}
			}
			st.elig[w], st.known[w] = e, k
			eligible[w] = word&e&k | slow
		}
		if st.window.holds(&cut) {
			return eligible
		}
		if round > 0 {
			return eligible // every member was decided at cut
		}
		// The time moved beyond the window: decide every member again at the new cut-offs.
		st.known.zero()
		st.window, st.cut = emptyWindow(), cut
	}
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

// topKSorted is topK for items sorted by key, best first: the best k by topology score,
// then key, are those of the best topology scores taken in key order. With many distinct
// topology scores it falls back to topK. dst must not share items' memory.
func topKSorted(dst, items []ranked, k int) []ranked {
	dst = dst[:0]
	if k <= 0 || len(items) == 0 {
		return dst
	}
	var levels [8]int32
	nl := 0
	for i := range items {
		t := items[i].topo
		if slices.Contains(levels[:nl], t) {
			continue
		}
		if nl == len(levels) {
			return topK(dst, items, k)
		}
		levels[nl] = t
		nl++
	}
	slices.SortFunc(levels[:nl], func(a, b int32) int { return cmp.Compare(b, a) })
	for _, t := range levels[:nl] {
		for i := range items {
			if items[i].topo == t {
				if dst = append(dst, items[i]); len(dst) == k {
					return dst
				}
			}
		}
	}
	return dst
}
