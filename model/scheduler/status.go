// status.go holds the status column: each member's agent status kept between decisions
// when the store hands over a status feed, and eligibility decided from it, per member
// or over a set (with the eligible bits kept while the time stays within their window).

package scheduler

import (
	"math"
	"math/bits"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
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
	feed *member.StatusFeed // nil: the column is not in use
	seq  uint64             // the feed's version the column has seen
	ver  uint64             // the index's version the column was started at
	// fresh says the column was started afresh for the current decision: it holds nothing.
	fresh  bool
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
			c.seq, c.fresh = feed.Version(), false
			return
		}
	}
	c.feed, c.seq, c.ver, c.fresh = feed, feed.Version(), s.ix.ver, true
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

// narrowEligible is the ClusterEligibility plugin's columnar filter (plugins.go): it
// keeps the members of set that are eligible at the decision's time. It decides from the
// status column (eligibleSet) unless the column was started afresh for this decision (the
// index moved, or the feed forgot): reading every member's status into it would then cost
// more than checking the members, for bits the next decision may not keep either. A
// column that holds nothing fills up at the next decision that keeps it.
func (d *decision) narrowEligible(set bitset) {
	if d.status.feed == nil || !d.status.fresh {
		copy(set, d.eligibleSet(set))
		return
	}
	for w, word := range set {
		for rest := word; rest != 0; rest &= rest - 1 {
			b := bits.TrailingZeros64(rest)
			if !d.check(int32(w*64 + b)).OK() {
				set[w] &^= 1 << b
			}
		}
	}
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
