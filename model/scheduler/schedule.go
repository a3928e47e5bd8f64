package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"math/bits"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// filterCode is why a member is, or is not, a candidate for a new pick. Kept as a small
// code (not a string) so that filtering thousands of members formats nothing.
type filterCode uint8

const (
	codeCandidate filterCode = iota
	// codeKept: the member holds a current binding, which stays (IgnoredDuringExecution).
	codeKept
	// codeNotNamed: PickFixed and the member is not in clusterNames; it is not reported.
	codeNotNamed
	codeIneligible
	codeDeleting
	codeUntolerated
	codeNoAffinity
	codeTopology
)

const codeUnset filterCode = 255

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
	detail   int32 // taint index (codeUntolerated) or constraint index (codeTopology)
	affinity int32
	topo     int32
	key      uint64 // rankKey, once scored
	group    int32  // the ranked PickN path: a candidate's group of topology domains (pickNCache)
}

// slot gathers the placement's bindings on one cluster. Bindings are named by their index
// in Input.Bindings, so slots hold no pointers (no write barriers, nothing to scan).
type slot struct {
	// live is the Scheduled or Bound binding kept for the cluster (a current one if any),
	// or -1; liveCurrent says whether it names the current policy snapshot.
	live        int32
	liveCurrent bool
	// unscheduled is the Unscheduled binding reused if the cluster is picked again, or -1.
	unscheduled int32
	deleting    bool
	found       bool
	member      int32 // index of the cluster's memo, when found
	n           int32 // bindings on the cluster
}

// duplicate is a further live binding on a cluster; it is unscheduled.
type duplicate struct{ slot, binding int32 }

// Scheduler makes scheduling decisions, reusing scratch memory and its fleet index between
// them, so it is not safe for concurrent use: give each goroutine its own.
//
// The index is brought up to date from Input.Members at every decision. It assumes, as the
// simulator's and the production hub's stores guarantee, that a member's Labels,
// Properties and Resources maps are replaced rather than written in place once a decision
// has seen them; a caller that writes them in place must call Forget first.
type Scheduler struct {
	opts   Options
	ix     fleetIndex
	memos  []memo
	memoOf []int32  // per member: its memo, valid when stamp matches gen
	stamp  []uint32 // per member
	gen    uint32
	slots  []slot
	dups   []duplicate
	cands  []int32
	picks  []ranked
	// pickSpread's scratch: each candidate's group, and the groups' members back to back.
	groupOf []int32
	spread  []ranked
	ranked  []ranked
	sets    []bitset // label selections of one decision
	match   []bool
	bslot   []int32 // per binding: its slot
	// bindingOf is steady's scratch: per member, its binding.
	bindingOf []int32
	// bcache remembers where the previous decision's bindings pointed, by position, so a
	// steady placement does not look its clusters up by name again.
	bcache struct {
		gen     uint64
		ptrs    []*placement.Binding
		targets []string
		ids     []int32
	}
	// synced is the Input.MembersVersion the index was last brought up to date with; a
	// decision at the same version skips the sync (the store says nothing changed).
	synced struct {
		version uint64
		n       int
		kind    member.Kind
	}
	// steadyMemo holds, per placement, its last decision if that was a steady PickAll
	// re-run made with store versions, and the input it was made from.
	steadyMemo map[string]*steadyMemo
	// status is the members' agent status as a column, when the store keeps a feed.
	status statusColumn
	// pcache holds, per PickN policy (its fingerprint), what its decisions derive from the
	// index alone.
	pcache map[string]*pickNCache
	// pseen is, per PickN policy, the index version its last decision saw.
	pseen map[string]uint64
	// The ranked PickN path's scratch: candidates in ranking order when some hold a
	// binding, the groups.
	vcBuf   []int32
	vgroups []vGroup
}

// maxSteadyMemos bounds the steady decisions a Scheduler remembers.
const maxSteadyMemos = 256

// steadyMemo is a steady PickAll decision and what it depends on: the members' and the
// bindings' versions and the policy snapshot. A steady decision reads no agent status and
// not the time (kept bindings stay whatever their cluster's health; every selected member
// already holds one), so while none of these change it is still the decision.
type steadyMemo struct {
	members, bindings uint64
	nMembers, nBinds  int
	snap              *placement.PolicySnapshot
	snapName          string
	policy            *placement.PlacementPolicy
	kind              member.Kind
	plan              Plan
}

// New returns a Scheduler; zero Options fields take upstream's defaults.
func New(opts Options) *Scheduler {
	if opts.Eligibility == (member.EligibilityConfig{}) {
		opts.Eligibility = member.DefaultEligibility
	}
	if opts.MaxDecisions <= 0 {
		opts.MaxDecisions = DefaultMaxDecisions
	}
	return &Scheduler{opts: opts}
}

// Forget drops the fleet index; the next decision indexes the fleet from scratch.
func (s *Scheduler) Forget() {
	s.ix = fleetIndex{}
	s.bcache.gen = 0
	s.synced.version = 0
	s.steadyMemo = nil
	s.status = statusColumn{}
	s.pcache, s.pseen = nil, nil
}

// syncIndex brings the index up to date with in.Members, unless the store's version says
// nothing the index holds changed since the last sync; it reports whether it looked.
func (s *Scheduler) syncIndex(in Input) bool {
	v := &s.synced
	if in.MembersVersion != 0 && v.version == in.MembersVersion && v.n == len(in.Members) && v.kind == in.TargetKind && s.ix.ents != nil {
		return false
	}
	s.ix.sync(in.Members, in.TargetKind)
	v.version, v.n, v.kind = in.MembersVersion, len(in.Members), in.TargetKind
	return true
}

// recalled returns the placement's last steady decision if the input it depends on is
// unchanged by the store's versions.
func (s *Scheduler) recalled(in Input) (Plan, bool) {
	if in.MembersVersion == 0 || in.BindingsVersion == 0 {
		return Plan{}, false
	}
	m := s.steadyMemo[in.Snapshot.Placement]
	if m == nil || m.members != in.MembersVersion || m.bindings != in.BindingsVersion ||
		m.nMembers != len(in.Members) || m.nBinds != len(in.Bindings) || m.kind != in.TargetKind ||
		m.snap != in.Snapshot || m.policy != in.Snapshot.Policy || m.snapName != in.Snapshot.Name {
		return Plan{}, false
	}
	return m.plan, true
}

// remember keeps a steady decision for recalled, or drops the placement's memo when the
// decision was not steady or the store keeps no versions.
func (s *Scheduler) remember(in Input, steady bool, plan Plan) {
	if !steady || in.MembersVersion == 0 || in.BindingsVersion == 0 {
		if s.steadyMemo != nil {
			delete(s.steadyMemo, in.Snapshot.Placement)
		}
		return
	}
	if s.steadyMemo == nil {
		s.steadyMemo = map[string]*steadyMemo{}
	}
	if _, ok := s.steadyMemo[in.Snapshot.Placement]; !ok && len(s.steadyMemo) >= maxSteadyMemos {
		// A placement deleted while steady is never decided again: bound what such
		// memos keep alive by starting over.
		clear(s.steadyMemo)
	}
	s.steadyMemo[in.Snapshot.Placement] = &steadyMemo{
		members: in.MembersVersion, bindings: in.BindingsVersion,
		nMembers: len(in.Members), nBinds: len(in.Bindings),
		snap: in.Snapshot, snapName: in.Snapshot.Name, policy: in.Snapshot.Policy, kind: in.TargetKind,
		plan: plan,
	}
}

// Schedule decides with default options and fresh scratch memory.
func Schedule(in Input) (Plan, error) { return New(Options{}).Schedule(in) }

// decision is the state of one Schedule call.
type decision struct {
	*Scheduler
	in       Input
	policy   *compiledPolicy
	orphans  map[string]int32 // slots of clusters not in the fleet
	terms    []affinityTerm   // PickN: the preferred terms, ready to score
	names    map[string]bool  // every binding name, to keep new names unique; built when needed
	topo     *topologyState
	wanted   int
	kept     int
	plan     Plan
	selected []placement.ClusterDecision
	scores   []placement.ClusterScore
	// eligible is CheckEligibility at in.Now with the cut-off times computed once.
	eligible member.EligibilityChecker
	picked   []int32 // the memos picked
	// The ranked PickN path (ranked.go): virtual says it is taken; pc is the policy's
	// cache; vset the virtual candidates; pickedSet the members picked.
	virtual   bool
	vc        []int32 // the candidates in ranking order (see ranked.go); read-only
	held      []int32 // the candidates holding a binding (memos), also in vc
	pc        *pickNCache
	vset      bitset
	pickedSet bitset
}

// pick marks a candidate picked.
func (d *decision) pick(mi int32) {
	d.memos[mi].picked = true
	d.picked = append(d.picked, mi)
}

// Schedule makes one decision. It fails only on input that validation rejects before it is
// ever stored: a policy that cannot be compiled or a negative numberOfClusters.
func (s *Scheduler) Schedule(in Input) (Plan, error) {
	if in.Snapshot == nil {
		return Plan{}, errors.New("schedule: no policy snapshot")
	}
	if in.Snapshot.NumberOfClusters < 0 {
		return Plan{}, fmt.Errorf("schedule %s: policy snapshot %s: numberOfClusters %d is negative",
			in.Snapshot.Placement, in.Snapshot.Name, in.Snapshot.NumberOfClusters)
	}
	if in.TargetKind == "" {
		in.TargetKind = member.KindCluster
	}
	if plan, ok := s.recalled(in); ok {
		return plan, nil
	}
	cp, err := compile(in.Snapshot.Policy)
	if err != nil {
		return Plan{}, fmt.Errorf("schedule %s: policy snapshot %s: %w", in.Snapshot.Placement, in.Snapshot.Name, err)
	}
	s.syncStatus(in, s.syncIndex(in))
	s.begin()
	d := &decision{Scheduler: s, in: in, policy: cp, eligible: member.NewEligibilityChecker(in.Now, s.opts.Eligibility)}
	steady := cp.typ == placement.PickAll && d.steady()
	s.remember(in, steady, d.plan)
	if steady {
		return d.plan, nil
	}
	d.classifyBindings()
	d.scanMembers()
	d.unscheduleDangling()
	switch cp.typ {
	case placement.PickAll:
		d.wanted = -1
		d.pickAll()
	case placement.PickFixed:
		d.wanted = len(cp.fixed)
		d.pickAll()
	case placement.PickN:
		d.wanted = int(in.Snapshot.NumberOfClusters)
		d.pickN()
	default:
		return Plan{}, fmt.Errorf("schedule %s: unsupported placement type %q", in.Snapshot.Placement, cp.typ)
	}
	d.finish()
	return d.plan, nil
}

// begin resets the per-decision scratch; per-member memo slots are invalidated by bumping
// the generation rather than by clearing.
func (s *Scheduler) begin() {
	n := len(s.ix.ents)
	if len(s.stamp) != n {
		s.stamp = make([]uint32, n)
		s.memoOf = make([]int32, n)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 {
		clear(s.stamp)
		s.gen = 1
	}
	s.memos = s.memos[:0]
	s.slots = s.slots[:0]
	s.dups = s.dups[:0]
	s.cands = s.cands[:0]
	s.sets = s.sets[:0]
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

// clusterOf finds the fleet position of a binding's cluster (-1 when absent), remembering
// it by the binding's position for the next decision.
func (d *decision) clusterOf(i int, b *placement.Binding) int32 {
	c := &d.bcache
	if c.gen == d.ix.gen && i < len(c.ptrs) && c.ptrs[i] == b && sameString(c.targets[i], b.TargetCluster) {
		return c.ids[i]
	}
	id, ok := d.ix.names()[b.TargetCluster]
	if !ok {
		id = -1
	}
	if c.gen != d.ix.gen {
		c.gen = d.ix.gen
		c.ptrs, c.targets, c.ids = c.ptrs[:0], c.targets[:0], c.ids[:0]
	}
	for len(c.ptrs) <= i {
		c.ptrs, c.targets, c.ids = append(c.ptrs, nil), append(c.targets, ""), append(c.ids, -1)
	}
	c.ptrs[i], c.targets[i], c.ids[i] = b, b.TargetCluster, id
	return id
}

// steady is the short cut for a PickAll placement that is already in place, the common
// re-run: every binding is live, of the current policy snapshot, alone on a cluster of the
// fleet that is not leaving; every member the required affinity selects holds one; and the
// kept clusters fill MaxDecisions. Then nothing is picked, unscheduled or reported besides
// the kept clusters, so the decision is one pass over the bindings. It reports false, having
// changed nothing but scratch, when any condition fails.
func (d *decision) steady() bool {
	bs := d.in.Bindings
	n := len(d.ix.ents)
	if len(bs) == 0 || len(bs) < d.opts.MaxDecisions {
		return false
	}
	held := d.newSet()
	held.zero()
	if cap(d.bindingOf) < n {
		d.bindingOf = make([]int32, n)
	}
	bindingOf := d.bindingOf[:n]
	for i, b := range bs {
		if b.Deleting || b.State == placement.Unscheduled || !d.isCurrent(b) {
			return false
		}
		id := d.clusterOf(i, b)
		if id < 0 || held.has(id) {
			return false
		}
		held.set(id)
		bindingOf[id] = int32(i)
	}
	if len(d.policy.required) == 0 {
		if len(bs) != n {
			return false
		}
	} else {
		req := d.requiredSet()
		for w := range req {
			if req[w]&^held[w] != 0 {
				return false // a selected member holds no binding: a candidate, maybe
			}
		}
	}
	selected := make([]placement.ClusterDecision, 0, len(bs))
	sorted := d.ix.sortedByName
	for w, word := range held {
		for ; word != 0; word &= word - 1 {
			id := int32(w*64 + bits.TrailingZeros64(word))
			e := &d.ix.ents[id]
			if e.m.Leaving {
				return false
			}
			dec := bs[bindingOf[id]].ClusterDecision
			if dec.ClusterName == "" {
				dec = placement.ClusterDecision{ClusterName: e.name, Selected: true, Reason: ReasonPicked}
			} else if !sameString(dec.ClusterName, e.name) {
				sorted = false
			}
			selected = append(selected, dec)
		}
	}
	if !sorted {
		slices.SortFunc(selected, func(a, b placement.ClusterDecision) int { return cmp.Compare(a.ClusterName, b.ClusterName) })
	}
	d.wanted, d.kept = -1, len(bs)
	d.plan = Plan{Create: []Change{}, Decisions: selected, Wanted: -1, Placed: len(bs)}
	d.plan.Scheduled = d.condition(len(bs))
	return true
}

// classifyBindings groups the placement's bindings by cluster. Within a cluster they are
// taken in name order, so the choice among duplicates does not depend on input order.
func (d *decision) classifyBindings() {
	bs := d.in.Bindings
	if len(d.bcache.ptrs) > len(bs) {
		d.bcache.ptrs = d.bcache.ptrs[:len(bs)]
		d.bcache.targets = d.bcache.targets[:len(bs)]
		d.bcache.ids = d.bcache.ids[:len(bs)]
	}
	d.bslot = d.bslot[:0]
	multi := false
	for i, b := range bs {
		id := d.clusterOf(i, b)
		var si int32
		if id >= 0 {
			mi := d.memoIndex(id)
			if si = d.memos[mi].slot; si < 0 {
				si = d.newSlot()
				d.slots[si].found, d.slots[si].member = true, mi
				d.memos[mi].slot = si
			}
		} else {
			if d.orphans == nil {
				d.orphans = map[string]int32{}
			}
			var ok bool
			if si, ok = d.orphans[b.TargetCluster]; !ok {
				si = d.newSlot()
				d.orphans[b.TargetCluster] = si
			}
		}
		d.bslot = append(d.bslot, si)
		sl := &d.slots[si]
		if sl.n++; sl.n > 1 {
			multi = true
		}
		d.classify(si, int32(i))
	}
	if multi {
		// Clusters with several bindings: classify them again in name order.
		d.dups = slices.DeleteFunc(d.dups, func(x duplicate) bool { return d.slots[x.slot].n > 1 })
		var group []int32
		for si := range d.slots {
			sl := &d.slots[si]
			if sl.n < 2 {
				continue
			}
			group = group[:0]
			for i := range bs {
				if d.bslot[i] == int32(si) {
					group = append(group, int32(i))
				}
			}
			slices.SortFunc(group, func(a, b int32) int { return cmp.Compare(bs[a].Name, bs[b].Name) })
			sl.live, sl.liveCurrent, sl.unscheduled, sl.deleting = -1, false, -1, false
			for _, i := range group {
				d.classify(int32(si), i)
			}
		}
	}
	for si := range d.slots {
		if sl := &d.slots[si]; sl.found && sl.live >= 0 && !sl.liveCurrent {
			d.memos[sl.member].obsolete = true
		}
	}
}

func (d *decision) newSlot() int32 {
	d.slots = append(d.slots, slot{live: -1, unscheduled: -1, member: -1})
	return int32(len(d.slots) - 1)
}

// binding is the input binding at index i.
func (d *decision) binding(i int32) *placement.Binding { return d.in.Bindings[i] }

func (d *decision) classify(si, i int32) {
	sl, b := &d.slots[si], d.in.Bindings[i]
	switch {
	case b.Deleting:
		sl.deleting = true
	case b.State == placement.Unscheduled:
		if sl.unscheduled < 0 {
			sl.unscheduled = i
		}
	case sl.live < 0:
		sl.live, sl.liveCurrent = i, d.isCurrent(b)
	case !sl.liveCurrent && d.isCurrent(b):
		d.dups = append(d.dups, duplicate{si, sl.live})
		sl.live, sl.liveCurrent = i, true
	default:
		d.dups = append(d.dups, duplicate{si, i})
	}
}

// bindingNames is the set of every binding name, built the first time a name is made.
func (d *decision) bindingNames() map[string]bool {
	if d.names == nil {
		d.names = make(map[string]bool, len(d.in.Bindings))
		for _, b := range d.in.Bindings {
			d.names[b.Name] = true
		}
	}
	return d.names
}

func (d *decision) isCurrent(b *placement.Binding) bool {
	return b.SchedulingPolicySnapshotName == d.in.Snapshot.Name
}

// scanMembers finds the candidates. Members holding a binding are filtered one by one;
// the others are candidates only if the required affinity selects them (a set operation
// over the index), they are eligible and they tolerate their taints. Members that are not
// candidates get their filter code only if a decision or a reason needs it.
func (d *decision) scanMembers() {
	cp := d.policy
	for si := range d.slots {
		if sl := &d.slots[si]; sl.found {
			d.filter(&d.memos[sl.member])
		}
	}
	if len(cp.topology) > 0 {
		d.topo = newTopologyState(cp.topology, &d.ix)
		for i := range d.memos {
			if d.memos[i].code == codeKept {
				d.topo.add(d.memos[i].id)
			}
		}
	}
	scoring := cp.typ == placement.PickN
	if scoring {
		if d.scanRanked() {
			return
		}
		d.prepareAffinity()
	}
	consider := func(id int32) {
		if d.stamp[id] == d.gen {
			if mi := d.memoOf[id]; d.memos[mi].code == codeCandidate {
				d.cands = append(d.cands, mi)
				if scoring {
					d.scoreCandidate(&d.memos[mi])
				}
			}
			return
		}
		elig := d.check(id)
		if !elig.OK() {
			return
		}
		if cp.typ != placement.PickFixed && d.ix.tainted.has(id) && placement.FirstUntolerated(d.ix.ents[id].m.Taints, cp.tolerations) >= 0 {
			return
		}
		mi := d.memoIndex(id)
		d.memos[mi].code, d.memos[mi].elig = codeCandidate, elig
		d.cands = append(d.cands, mi)
		if scoring {
			d.scoreCandidate(&d.memos[mi])
		}
	}
	switch {
	case cp.typ == placement.PickFixed:
		var named []int32
		for n := range cp.fixed {
			if id, ok := d.ix.names()[n]; ok {
				named = append(named, id)
			}
		}
		slices.Sort(named)
		for _, id := range named {
			d.filtered(id)
			consider(id)
		}
	case len(cp.required) == 0:
		for id := range int32(len(d.ix.ents)) {
			consider(id)
		}
	default:
		d.requiredSet().each(consider)
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

// filter runs the filter plugins in order; the first that rejects a member wins.
func (d *decision) filter(mm *memo) {
	cp := d.policy
	m := d.member(mm)
	mm.code = codeCandidate
	if cp.typ == placement.PickFixed && !cp.fixed[m.Name] {
		mm.code = codeNotNamed
		return
	}
	if mm.slot >= 0 {
		sl := &d.slots[mm.slot]
		if sl.live >= 0 && sl.liveCurrent && !m.Leaving {
			mm.code = codeKept
			if cp.typ == placement.PickFixed {
				// PickFixed is only fulfilled while every named cluster is eligible, even
				// one that keeps its placement (CRP-POL-PICKFIXED).
				mm.elig = d.check(mm.id)
			}
			return
		}
		if sl.deleting {
			mm.code = codeDeleting
			return
		}
	}
	if mm.elig = d.check(mm.id); !mm.elig.OK() {
		mm.code = codeIneligible
		return
	}
	if cp.typ == placement.PickFixed {
		return // PickFixed ignores taints and has no affinity (TAINT-SCOPE).
	}
	if i := placement.FirstUntolerated(m.Taints, cp.tolerations); i >= 0 {
		mm.code, mm.detail = codeUntolerated, int32(i)
		return
	}
	if !cp.matchesRequired(m) {
		mm.code = codeNoAffinity
	}
}

// unscheduleDangling unschedules live bindings whose cluster left or is gone, and duplicates.
func (d *decision) unscheduleDangling() {
	for _, x := range d.dups {
		d.unschedule(d.binding(x.binding), "another binding of this placement already targets the cluster")
	}
	for si := range d.slots {
		sl := &d.slots[si]
		if sl.live < 0 {
			continue
		}
		switch {
		case !sl.found:
			d.unschedule(d.binding(sl.live), "cluster is not found in the fleet")
			sl.live = -1
		case sl.liveCurrent && d.memos[sl.member].code != codeKept && d.member(&d.memos[sl.member]).Leaving:
			d.unschedule(d.binding(sl.live), "cluster has left the fleet")
			sl.live = -1
		case sl.liveCurrent:
			d.kept++
		}
	}
}

// pickAll picks every candidate (PickAll, PickFixed); obsolete bindings that no longer pass
// the filters are unscheduled.
func (d *decision) pickAll() {
	for _, i := range d.cands {
		d.pick(i)
	}
	d.unscheduleObsoleteNotPicked()
}

// pickN picks numberOfClusters minus the clusters already kept.
func (d *decision) pickN() {
	need := d.wanted - d.kept
	if need < 0 {
		d.scaleIn(-need)
	}
	switch {
	case d.virtual:
		d.pickRanked(max(need, 0))
	case d.topo != nil:
		d.pickSpread(max(need, 0))
	case need > 0:
		d.picks = topK(d.picks[:0], d.rankedCands(), need)
		for _, r := range d.picks {
			d.pick(r.mi)
		}
	}
	d.unscheduleObsoleteNotPicked()
}

// scaleIn unschedules n kept bindings, weakest first: Scheduled before Bound, then the lower
// stored topology score, then the lower affinity score, then the smaller name (CRP-POL-SCALE).
func (d *decision) scaleIn(n int) {
	var kept []int32
	for si := range d.slots {
		if sl := &d.slots[si]; sl.live >= 0 && sl.liveCurrent {
			kept = append(kept, int32(si))
		}
	}
	rank := func(b *placement.Binding) (int, int32, int32) {
		state := 1
		if b.State == placement.Scheduled {
			state = 0
		}
		var topo, aff int32
		if s := b.ClusterDecision.ClusterScore; s != nil {
			topo, aff = s.TopologySpreadScore, s.AffinityScore
		}
		return state, topo, aff
	}
	slices.SortFunc(kept, func(x, y int32) int {
		a, b := d.binding(d.slots[x].live), d.binding(d.slots[y].live)
		as, at, aa := rank(a)
		bs, bt, ba := rank(b)
		return cmp.Or(cmp.Compare(as, bs), cmp.Compare(at, bt), cmp.Compare(aa, ba), cmp.Compare(a.TargetCluster, b.TargetCluster))
	})
	for _, si := range kept[:n] {
		sl := &d.slots[si]
		d.unschedule(d.binding(sl.live), fmt.Sprintf("placement scaled in to %d cluster(s) and this cluster ranks lowest", d.wanted))
		sl.live = -1
		d.kept--
	}
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

// unscheduleObsoleteNotPicked unschedules Scheduled or Bound bindings of an older policy
// snapshot whose cluster was not picked again.
func (d *decision) unscheduleObsoleteNotPicked() {
	for si := range d.slots {
		sl := &d.slots[si]
		if !sl.found {
			continue
		}
		mm := &d.memos[sl.member]
		if !mm.obsolete || mm.picked {
			continue
		}
		why := "no longer picked by the scheduling policy: " + d.reasonFor(mm)
		if mm.code == codeNotNamed {
			why = "no longer in the placement's clusterNames"
		}
		d.unschedule(d.binding(sl.live), why)
	}
}

func (d *decision) unschedule(b *placement.Binding, why string) {
	nb := *b
	nb.PreviousState = b.State
	nb.State = placement.Unscheduled
	d.plan.Unschedule = append(d.plan.Unschedule, Change{Binding: nb, Reason: why})
}

// finish turns picks into binding writes and builds decisions and the condition. Members
// are visited in fleet order; when the fleet is sorted by name (as the stores hand it
// over) the lists come out sorted and are not sorted again.
func (d *decision) finish() {
	snap := d.in.Snapshot
	placed := d.kept
	nPicked := 0
	sel := d.newSet()
	sel.zero()
	for _, i := range d.picked {
		nPicked++
		sel.set(d.memos[i].id)
	}
	for si := range d.slots {
		if sl := &d.slots[si]; sl.found && sl.live >= 0 && d.memos[sl.member].code == codeKept {
			sel.set(d.memos[sl.member].id)
		}
	}
	// One slice holds the selected decisions and then the unselected ones (up to the limit).
	unselected := min(max(d.opts.MaxDecisions-(nPicked+d.kept), 0), len(d.ix.ents)+len(d.policy.fixed))
	d.selected = make([]placement.ClusterDecision, 0, nPicked+d.kept+unselected)
	d.plan.Create = make([]Change, 0, nPicked)
	if d.policy.typ == placement.PickN {
		d.scores = make([]placement.ClusterScore, 0, nPicked+d.opts.MaxDecisions)
	}
	sorted := d.ix.sortedByName
	sel.each(func(id int32) {
		mm := &d.memos[d.memoOf[id]]
		name := d.ix.ents[id].name
		if !mm.picked {
			dec := d.binding(d.slots[mm.slot].live).ClusterDecision
			if dec.ClusterName == "" {
				dec = placement.ClusterDecision{ClusterName: name, Selected: true, Reason: ReasonPicked}
			} else if !sameString(dec.ClusterName, name) {
				sorted = false
			}
			d.selected = append(d.selected, dec)
			return
		}
		placed++
		dec := d.pickedDecision(mm)
		d.selected = append(d.selected, dec)
		var sl *slot
		if mm.slot >= 0 {
			sl = &d.slots[mm.slot]
		}
		switch {
		case sl != nil && sl.live >= 0: // obsolete, picked again under the new policy
			nb := *d.binding(sl.live)
			nb.SchedulingPolicySnapshotName, nb.ClusterDecision = snap.Name, dec
			d.plan.Update = append(d.plan.Update, Change{Binding: nb, Reason: "picked again by the new scheduling policy snapshot " + snap.Name})
		case sl != nil && sl.unscheduled >= 0:
			nb := *d.binding(sl.unscheduled)
			nb.State = nb.PreviousState
			if nb.State != placement.Bound {
				nb.State = placement.Scheduled
			}
			nb.PreviousState = ""
			nb.SchedulingPolicySnapshotName, nb.ClusterDecision = snap.Name, dec
			d.plan.Update = append(d.plan.Update, Change{Binding: nb, Reason: fmt.Sprintf("picked again; restoring the unscheduled binding to %s", nb.State)})
		default:
			bn := ""
			for attempt := 0; ; attempt++ {
				if bn = placement.BindingName(snap.Placement, name, attempt); !d.bindingNames()[bn] {
					break
				}
			}
			d.plan.Create = append(d.plan.Create, Change{
				Binding: placement.Binding{
					Name: bn, Placement: snap.Placement, TargetCluster: name,
					State: placement.Scheduled, SchedulingPolicySnapshotName: snap.Name, ClusterDecision: dec,
				},
				Reason: ReasonPicked,
			})
		}
	})
	byCluster := func(a, b Change) int { return cmp.Compare(a.Binding.TargetCluster, b.Binding.TargetCluster) }
	if !d.ix.sortedByName {
		slices.SortFunc(d.plan.Create, byCluster)
		slices.SortFunc(d.plan.Update, byCluster)
	}
	slices.SortStableFunc(d.plan.Unschedule, func(a, b Change) int {
		return cmp.Or(byCluster(a, b), cmp.Compare(a.Binding.Name, b.Binding.Name))
	})
	if !sorted {
		slices.SortFunc(d.selected, func(a, b placement.ClusterDecision) int { return cmp.Compare(a.ClusterName, b.ClusterName) })
	}
	d.plan.Decisions = d.unselectedDecisions(d.selected, d.opts.MaxDecisions-len(d.selected))
	d.plan.Wanted, d.plan.Placed = d.wanted, placed
	d.plan.Scheduled = d.condition(placed)
}

func (d *decision) pickedDecision(mm *memo) placement.ClusterDecision {
	dec := placement.ClusterDecision{ClusterName: d.ix.ents[mm.id].name, Selected: true, Reason: ReasonPicked}
	if d.policy.typ == placement.PickN {
		dec.ClusterScore = d.score(mm)
	}
	return dec
}

// score points into one slice per decision rather than allocating a score per cluster.
func (d *decision) score(mm *memo) *placement.ClusterScore {
	d.scores = append(d.scores, placement.ClusterScore{AffinityScore: mm.affinity, TopologySpreadScore: mm.topo})
	return &d.scores[len(d.scores)-1]
}

func (d *decision) condition(placed int) condition.Condition {
	fulfilled := true
	switch d.policy.typ {
	case placement.PickN:
		fulfilled = placed >= d.wanted
	case placement.PickFixed:
		// Every named cluster must exist and be eligible, whatever bindings remain.
		eligible := 0
		for i := range d.memos {
			if mm := &d.memos[i]; mm.code != codeNotNamed && mm.code != codeUnset && mm.elig.OK() {
				eligible++
			}
		}
		fulfilled = eligible == len(d.policy.fixed)
	}
	if fulfilled {
		return condition.True(condition.TypeScheduled, condition.ReasonSchedulingPolicyFulfilled, condition.MessageFulfilled)
	}
	return condition.False(condition.TypeScheduled, condition.ReasonSchedulingPolicyUnfulfilled, condition.MessageUnfulfilled)
}

// unselectedDecisions appends to selected up to limit clusters that were not picked:
// PickFixed names not found; scored candidates by rank; then filtered members by name.
func (d *decision) unselectedDecisions(selected []placement.ClusterDecision, limit int) []placement.ClusterDecision {
	out := selected
	n0 := len(selected)
	if d.policy.typ == placement.PickFixed {
		var missing []string
		for n := range d.policy.fixed {
			if _, ok := d.ix.names()[n]; !ok {
				missing = append(missing, n)
			}
		}
		slices.Sort(missing)
		for _, n := range missing[:min(len(missing), max(limit, 0))] {
			out = append(out, placement.ClusterDecision{ClusterName: n, Reason: ReasonNotFound})
		}
	}
	if limit-(len(out)-n0) <= 0 {
		return out
	}
	if d.virtual {
		out = d.unselectedRanked(out, limit-(len(out)-n0))
	} else {
		d.picks = topK(d.picks[:0], d.rankedCands(), limit-(len(out)-n0))
		for _, r := range d.picks {
			mm := &d.memos[r.mi]
			out = append(out, placement.ClusterDecision{
				ClusterName:  d.ix.ents[mm.id].name,
				ClusterScore: d.score(mm),
				Reason:       ReasonNotHighEnough,
			})
		}
	}
	// Filtered members by name: walk the fleet in name order until the limit is reached.
	for r := 0; r < len(d.ix.ents) && (len(out)-n0) < limit; r++ {
		id := int32(r)
		if !d.ix.sortedByName {
			id = d.ix.order()[r]
		}
		if d.policy.typ == placement.PickFixed && !d.policy.fixed[d.ix.ents[id].name] {
			continue
		}
		if ok, vm := d.virtualFiltered(id); ok {
			if vm.code != codeCandidate {
				out = append(out, placement.ClusterDecision{ClusterName: d.ix.ents[id].name, Reason: d.reasonFor(&vm), Plugin: d.pluginFor(&vm)})
			}
			continue
		}
		mm := d.filtered(id)
		switch {
		case mm.picked, mm.code == codeKept, mm.code == codeNotNamed, mm.code == codeCandidate:
			continue
		}
		out = append(out, placement.ClusterDecision{ClusterName: d.ix.ents[id].name, Reason: d.reasonFor(mm), Plugin: d.pluginFor(mm)})
	}
	return out
}

// reasonFor renders why a member was not picked.
func (d *decision) reasonFor(mm *memo) string {
	switch mm.code {
	case codeCandidate:
		return ReasonNotHighEnough
	case codeIneligible:
		if d.policy.typ == placement.PickFixed {
			return reasonNotEligibleYet + mm.elig.String()
		}
		return unschedulablePrefix + mm.elig.String()
	case codeDeleting:
		return unschedulablePrefix + "a binding of this placement on the cluster is still being deleted"
	case codeUntolerated:
		return unschedulablePrefix + "cluster has an untolerated taint " + d.member(mm).Taints[mm.detail].String()
	case codeNoAffinity:
		return unschedulablePrefix + reasonAffinityNoMatch
	case codeTopology:
		c := d.policy.topology[mm.detail]
		return fmt.Sprintf("%sviolated topology spread constraint %q (max skew %d)", unschedulablePrefix, c.key, c.maxSkew)
	case codeNotNamed:
		return "cluster is not in the placement's clusterNames"
	}
	return ""
}

func (d *decision) pluginFor(mm *memo) string {
	switch mm.code {
	case codeIneligible:
		return PluginClusterEligibility
	case codeDeleting:
		return PluginSamePlacementAntiAffinity
	case codeUntolerated:
		return PluginTaintToleration
	case codeNoAffinity:
		return PluginClusterAffinity
	case codeTopology:
		return PluginTopologySpread
	}
	return ""
}
