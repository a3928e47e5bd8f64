// scheduler.go holds the framework's cycle: the Scheduler and what it keeps between
// decisions, the state of one decision, and Schedule, which runs the stages in order
// (recall or the steady short cut, bindings, filtering and scoring, selection, the plan).

package scheduler

import (
	"errors"
	"fmt"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

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
	// dec is the state of the decision being made (of the last one, between decisions),
	// kept here rather than allocated per decision: the plugin table's functions take it
	// through indirect calls, so it would not stay on the stack.
	dec decision
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
	// scratch is the memo of a member that has none, for a plugin's function to read
	// (narrowEach, reported virtual candidates).
	scratch memo
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
	d := s.start(in, cp)
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

// start brings the index and the status column up to date with the input and starts a
// decision of the compiled policy.
func (s *Scheduler) start(in Input, cp *compiledPolicy) *decision {
	s.syncStatus(in, s.syncIndex(in))
	s.begin()
	s.dec = decision{Scheduler: s, in: in, policy: cp, eligible: member.NewEligibilityChecker(in.Now, s.opts.Eligibility)}
	return &s.dec
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
