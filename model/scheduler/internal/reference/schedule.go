package reference

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/labels"

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

// memo is the per-member scratch of one decision.
type memo struct {
	m        *member.Member
	slot     *slot
	elig     member.Eligibility
	code     filterCode
	detail   int32 // taint index (codeUntolerated) or constraint index (codeTopology)
	affinity int32
	topo     int32
	picked   bool
}

// slot gathers the placement's bindings on one cluster.
type slot struct {
	cluster string
	// live is the Scheduled or Bound binding kept for the cluster (a current one if any).
	live *placement.Binding
	// duplicates are further live bindings on the same cluster; they are unscheduled.
	duplicates []*placement.Binding
	// unscheduled is the Unscheduled binding reused if the cluster is picked again.
	unscheduled *placement.Binding
	deleting    bool
	found       bool
	member      int32 // index of the cluster's memo, when found
}

// Scheduler makes scheduling decisions, reusing scratch memory between them, so it is not
// safe for concurrent use: give each goroutine its own.
type Scheduler struct {
	opts     Options
	memos    []memo
	domains  []int32   // len(memos) × len(topology): domain index per constraint, -1 for none
	sortVals []float64 // len(memos) × len(sorters): property value, NaN when not reported
	cands    []int32
	picks    []int32
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

// Schedule decides with default options and fresh scratch memory.
func Schedule(in Input) (Plan, error) { return New(Options{}).Schedule(in) }

// decision is the state of one Schedule call.
type decision struct {
	*Scheduler
	in       Input
	policy   *compiledPolicy
	slots    map[string]*slot
	names    map[string]bool // every binding name, to keep new names unique
	topo     *topologyState
	minVal   []float64
	maxVal   []float64
	wanted   int
	kept     int
	plan     Plan
	selected []placement.ClusterDecision
	scores   []placement.ClusterScore
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
	cp, err := compile(in.Snapshot.Policy)
	if err != nil {
		return Plan{}, fmt.Errorf("schedule %s: policy snapshot %s: %w", in.Snapshot.Placement, in.Snapshot.Name, err)
	}
	d := &decision{Scheduler: s, in: in, policy: cp}
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

// classifyBindings groups the placement's bindings by cluster.
func (d *decision) classifyBindings() {
	d.slots = make(map[string]*slot, len(d.in.Bindings))
	d.names = make(map[string]bool, len(d.in.Bindings))
	current := d.in.Snapshot.Name
	// Sorting first makes the choice among duplicates independent of input order.
	bs := slices.Clone(d.in.Bindings)
	slices.SortFunc(bs, func(a, b *placement.Binding) int { return cmp.Compare(a.Name, b.Name) })
	for _, b := range bs {
		d.names[b.Name] = true
		sl := d.slots[b.TargetCluster]
		if sl == nil {
			sl = &slot{cluster: b.TargetCluster}
			d.slots[b.TargetCluster] = sl
		}
		switch {
		case b.Deleting:
			sl.deleting = true
		case b.State == placement.Unscheduled:
			if sl.unscheduled == nil {
				sl.unscheduled = b
			}
		case sl.live == nil:
			sl.live = b
		case sl.live.SchedulingPolicySnapshotName != current && b.SchedulingPolicySnapshotName == current:
			sl.duplicates = append(sl.duplicates, sl.live)
			sl.live = b
		default:
			sl.duplicates = append(sl.duplicates, b)
		}
	}
}

func (d *decision) isCurrent(b *placement.Binding) bool {
	return b.SchedulingPolicySnapshotName == d.in.Snapshot.Name
}

// scanMembers is the one pass over the fleet: domains, sorter ranges and filters.
func (d *decision) scanMembers() {
	cp := d.policy
	nTopo, nSort := len(cp.topology), len(cp.sorters)
	d.memos = d.memos[:0]
	d.domains = d.domains[:0]
	d.sortVals = d.sortVals[:0]
	d.cands = d.cands[:0]
	d.minVal = make([]float64, nSort)
	d.maxVal = make([]float64, nSort)
	for i := range d.minVal {
		d.minVal[i], d.maxVal[i] = math.Inf(1), math.Inf(-1)
	}
	if nTopo > 0 {
		d.topo = newTopologyState(cp.topology)
	}
	for _, m := range d.in.Members {
		if m.Kind != d.in.TargetKind && !(m.Kind == "" && d.in.TargetKind == member.KindCluster) {
			continue
		}
		idx := int32(len(d.memos))
		d.memos = append(d.memos, memo{m: m})
		mm := &d.memos[idx]
		if len(d.slots) > 0 {
			if sl := d.slots[m.Name]; sl != nil {
				sl.found, sl.member = true, idx
				mm.slot = sl
			}
		}
		// Topology domains come from every member carrying the key, filtered or not (TOPO-SKEW).
		for c := range nTopo {
			dom := int32(-1)
			if v, ok := m.Labels[cp.topology[c].key]; ok {
				dom = d.topo.domain(c, v)
			}
			d.domains = append(d.domains, dom)
		}
		// Sorter ranges span every member reporting the property (AFF-PROPERTY-SORTER).
		for si := range nSort {
			v := math.NaN()
			if q, ok := m.Property(cp.sorters[si]); ok {
				v = q.AsApproximateFloat64()
				d.minVal[si] = min(d.minVal[si], v)
				d.maxVal[si] = max(d.maxVal[si], v)
			}
			d.sortVals = append(d.sortVals, v)
		}
		d.filter(mm)
		if mm.code == codeCandidate {
			d.cands = append(d.cands, idx)
		}
	}
	if d.topo != nil {
		for i := range d.memos {
			if d.memos[i].code == codeKept {
				d.topo.add(d.domainsOf(int32(i)))
			}
		}
	}
}

func (d *decision) domainsOf(i int32) []int32 {
	n := int32(len(d.policy.topology))
	return d.domains[i*n : (i+1)*n]
}

// filter runs the filter plugins in order; the first that rejects a member wins.
func (d *decision) filter(mm *memo) {
	cp := d.policy
	if cp.typ == placement.PickFixed && !cp.fixed[mm.m.Name] {
		mm.code = codeNotNamed
		return
	}
	if sl := mm.slot; sl != nil {
		if sl.live != nil && d.isCurrent(sl.live) && !mm.m.Leaving {
			mm.code = codeKept
			if cp.typ == placement.PickFixed {
				// PickFixed is only fulfilled while every named cluster is eligible, even
				// one that keeps its placement (CRP-POL-PICKFIXED).
				mm.elig = mm.m.CheckEligibility(d.in.Now, d.opts.Eligibility)
			}
			return
		}
		if sl.deleting {
			mm.code = codeDeleting
			return
		}
	}
	if mm.elig = mm.m.CheckEligibility(d.in.Now, d.opts.Eligibility); !mm.elig.OK() {
		mm.code = codeIneligible
		return
	}
	if cp.typ == placement.PickFixed {
		return // PickFixed ignores taints and has no affinity (TAINT-SCOPE).
	}
	if i := placement.FirstUntolerated(mm.m.Taints, cp.tolerations); i >= 0 {
		mm.code, mm.detail = codeUntolerated, int32(i)
		return
	}
	if !cp.matchesRequired(mm.m) {
		mm.code = codeNoAffinity
	}
}

// unscheduleDangling unschedules live bindings whose cluster left or is gone, and duplicates.
func (d *decision) unscheduleDangling() {
	for _, sl := range d.slots {
		for _, b := range sl.duplicates {
			d.unschedule(b, "another binding of this placement already targets the cluster")
		}
		if sl.live == nil {
			continue
		}
		switch {
		case !sl.found:
			d.unschedule(sl.live, "cluster is not found in the fleet")
			sl.live = nil
		case d.isCurrent(sl.live) && d.memos[sl.member].m.Leaving:
			d.unschedule(sl.live, "cluster has left the fleet")
			sl.live = nil
		case d.isCurrent(sl.live):
			d.kept++
		}
	}
}

// pickAll picks every candidate (PickAll, PickFixed); obsolete bindings that no longer pass
// the filters are unscheduled.
func (d *decision) pickAll() {
	for _, i := range d.cands {
		d.memos[i].picked = true
	}
	d.unscheduleObsoleteNotPicked()
}

// pickN picks numberOfClusters minus the clusters already kept.
func (d *decision) pickN() {
	need := d.wanted - d.kept
	if need < 0 {
		d.scaleIn(-need)
	}
	// Candidates are scored even when nothing is to be picked, so that the decisions report
	// true scores for the clusters that were passed over.
	d.scoreAffinity()
	switch {
	case d.topo != nil:
		d.pickSpread(max(need, 0))
	case need > 0:
		d.picks = topK(d.picks[:0], d.cands, need, d.better)
		for _, i := range d.picks {
			d.memos[i].picked = true
		}
	}
	d.unscheduleObsoleteNotPicked()
}

// scaleIn unschedules n kept bindings, weakest first: Scheduled before Bound, then the lower
// stored topology score, then the lower affinity score, then the smaller name (CRP-POL-SCALE).
func (d *decision) scaleIn(n int) {
	var kept []*placement.Binding
	for _, sl := range d.slots {
		if sl.live != nil && d.isCurrent(sl.live) {
			kept = append(kept, sl.live)
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
	slices.SortFunc(kept, func(a, b *placement.Binding) int {
		as, at, aa := rank(a)
		bs, bt, ba := rank(b)
		return cmp.Or(cmp.Compare(as, bs), cmp.Compare(at, bt), cmp.Compare(aa, ba), cmp.Compare(a.TargetCluster, b.TargetCluster))
	})
	for _, b := range kept[:n] {
		d.unschedule(b, fmt.Sprintf("placement scaled in to %d cluster(s) and this cluster ranks lowest", d.wanted))
		d.slots[b.TargetCluster].live = nil
		d.kept--
	}
}

// scoreAffinity computes affinity scores for the candidates (PickN).
func (d *decision) scoreAffinity() {
	cp := d.policy
	if len(cp.preferred) == 0 {
		return
	}
	nSort := len(cp.sorters)
	for _, i := range d.cands {
		mm := &d.memos[i]
		var total int32
		for pi := range cp.preferred {
			p := &cp.preferred[pi]
			if p.labels != nil && !p.labels.Matches(labels.Set(mm.m.Labels)) {
				continue
			}
			if p.sorter < 0 {
				total += p.weight
				continue
			}
			v := d.sortVals[int(i)*nSort+p.sorter]
			lo, hi := d.minVal[p.sorter], d.maxVal[p.sorter]
			if math.IsNaN(v) || hi <= lo {
				continue // no value, or no spread: the term adds nothing
			}
			ratio := (v - lo) / (hi - lo)
			if !p.desc {
				ratio = 1 - ratio
			}
			total += int32(math.Round(float64(p.weight) * ratio))
		}
		mm.affinity = total
	}
}

// better ranks candidates: topology score, affinity score, an existing obsolete binding
// (less churn), then the greater name (SCHED-SORT, DC-2).
func (d *decision) better(a, b int32) bool {
	ma, mb := &d.memos[a], &d.memos[b]
	if ma.topo != mb.topo {
		return ma.topo > mb.topo
	}
	if ma.affinity != mb.affinity {
		return ma.affinity > mb.affinity
	}
	if oa, ob := d.obsolete(ma), d.obsolete(mb); oa != ob {
		return oa
	}
	return ma.m.Name > mb.m.Name
}

func (d *decision) obsolete(mm *memo) bool {
	return mm.slot != nil && mm.slot.live != nil && !d.isCurrent(mm.slot.live)
}

// unscheduleObsoleteNotPicked unschedules Scheduled or Bound bindings of an older policy
// snapshot whose cluster was not picked again.
func (d *decision) unscheduleObsoleteNotPicked() {
	for i := range d.memos {
		mm := &d.memos[i]
		if !d.obsolete(mm) || mm.picked {
			continue
		}
		why := "no longer picked by the scheduling policy: " + d.reasonFor(mm)
		if mm.code == codeNotNamed {
			why = "no longer in the placement's clusterNames"
		}
		d.unschedule(mm.slot.live, why)
	}
}

func (d *decision) unschedule(b *placement.Binding, why string) {
	nb := *b
	nb.PreviousState = b.State
	nb.State = placement.Unscheduled
	d.plan.Unschedule = append(d.plan.Unschedule, Change{Binding: nb, Reason: why})
}

// finish turns picks into binding writes and builds decisions and the condition.
func (d *decision) finish() {
	snap := d.in.Snapshot
	placed := d.kept
	nPicked := 0
	for i := range d.memos {
		if d.memos[i].picked {
			nPicked++
		}
	}
	d.selected = make([]placement.ClusterDecision, 0, nPicked+d.kept)
	d.plan.Create = make([]Change, 0, nPicked)
	if d.policy.typ == placement.PickN {
		d.scores = make([]placement.ClusterScore, 0, nPicked+d.opts.MaxDecisions)
	}
	for i := range d.memos {
		mm := &d.memos[i]
		switch {
		case mm.code == codeKept && mm.slot.live != nil:
			dec := mm.slot.live.ClusterDecision
			if dec.ClusterName == "" {
				dec = placement.ClusterDecision{ClusterName: mm.m.Name, Selected: true, Reason: ReasonPicked}
			}
			d.selected = append(d.selected, dec)
		case mm.picked:
			placed++
			dec := d.pickedDecision(mm)
			d.selected = append(d.selected, dec)
			sl := mm.slot
			switch {
			case sl != nil && sl.live != nil: // obsolete, picked again under the new policy
				nb := *sl.live
				nb.SchedulingPolicySnapshotName, nb.ClusterDecision = snap.Name, dec
				d.plan.Update = append(d.plan.Update, Change{Binding: nb, Reason: "picked again by the new scheduling policy snapshot " + snap.Name})
			case sl != nil && sl.unscheduled != nil:
				nb := *sl.unscheduled
				nb.State = nb.PreviousState
				if nb.State != placement.Bound {
					nb.State = placement.Scheduled
				}
				nb.PreviousState = ""
				nb.SchedulingPolicySnapshotName, nb.ClusterDecision = snap.Name, dec
				d.plan.Update = append(d.plan.Update, Change{Binding: nb, Reason: fmt.Sprintf("picked again; restoring the unscheduled binding to %s", nb.State)})
			default:
				name := ""
				for attempt := 0; ; attempt++ {
					if name = placement.BindingName(snap.Placement, mm.m.Name, attempt); !d.names[name] {
						break
					}
				}
				d.plan.Create = append(d.plan.Create, Change{
					Binding: placement.Binding{
						Name: name, Placement: snap.Placement, TargetCluster: mm.m.Name,
						State: placement.Scheduled, SchedulingPolicySnapshotName: snap.Name, ClusterDecision: dec,
					},
					Reason: ReasonPicked,
				})
			}
		}
	}
	byCluster := func(a, b Change) int { return cmp.Compare(a.Binding.TargetCluster, b.Binding.TargetCluster) }
	slices.SortFunc(d.plan.Create, byCluster)
	slices.SortFunc(d.plan.Update, byCluster)
	slices.SortStableFunc(d.plan.Unschedule, func(a, b Change) int {
		return cmp.Or(byCluster(a, b), cmp.Compare(a.Binding.Name, b.Binding.Name))
	})
	slices.SortFunc(d.selected, func(a, b placement.ClusterDecision) int { return cmp.Compare(a.ClusterName, b.ClusterName) })
	d.plan.Decisions = append(d.selected, d.unselectedDecisions(d.opts.MaxDecisions-len(d.selected))...)
	d.plan.Wanted, d.plan.Placed = d.wanted, placed
	d.plan.Scheduled = d.condition(placed)
}

func (d *decision) pickedDecision(mm *memo) placement.ClusterDecision {
	dec := placement.ClusterDecision{ClusterName: mm.m.Name, Selected: true, Reason: ReasonPicked}
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
			if mm := &d.memos[i]; mm.code != codeNotNamed && mm.elig.OK() {
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

// unselectedDecisions reports up to limit clusters that were not picked: PickFixed names not
// found; scored candidates by rank; then filtered members by name.
func (d *decision) unselectedDecisions(limit int) []placement.ClusterDecision {
	var out []placement.ClusterDecision
	if d.policy.typ == placement.PickFixed {
		present := make(map[string]bool, len(d.memos))
		for i := range d.memos {
			present[d.memos[i].m.Name] = true
		}
		var missing []string
		for n := range d.policy.fixed {
			if !present[n] {
				missing = append(missing, n)
			}
		}
		slices.Sort(missing)
		for _, n := range missing[:min(len(missing), max(limit, 0))] {
			out = append(out, placement.ClusterDecision{ClusterName: n, Reason: ReasonNotFound})
		}
	}
	var scored, filtered []int32
	for i := range d.memos {
		mm := &d.memos[i]
		switch {
		case mm.picked, mm.code == codeKept, mm.code == codeNotNamed:
		case mm.code == codeCandidate:
			scored = append(scored, int32(i))
		default:
			filtered = append(filtered, int32(i))
		}
	}
	for _, i := range topK(nil, scored, limit-len(out), d.better) {
		mm := &d.memos[i]
		out = append(out, placement.ClusterDecision{
			ClusterName:  mm.m.Name,
			ClusterScore: d.score(mm),
			Reason:       ReasonNotHighEnough,
		})
	}
	byName := func(a, b int32) bool { return d.memos[a].m.Name < d.memos[b].m.Name }
	for _, i := range topK(nil, filtered, limit-len(out), byName) {
		mm := &d.memos[i]
		out = append(out, placement.ClusterDecision{ClusterName: mm.m.Name, Reason: d.reasonFor(mm), Plugin: d.pluginFor(mm)})
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
		return unschedulablePrefix + "cluster has an untolerated taint " + mm.m.Taints[mm.detail].String()
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
