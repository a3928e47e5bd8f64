// steady.go holds the short cuts for a PickAll placement already in place: the steady
// decision (one pass over the bindings) and the memo that recalls it while the store's
// versions say nothing changed.

package scheduler

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

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

// steady is the short cut for a PickAll placement that is already in place, the common
// re-run: every binding is live, of the current policy snapshot, alone on a cluster of the
// fleet that is not leaving; every member the required affinity selects holds one; and the
// kept clusters fill MaxDecisions. Then nothing is picked, unscheduled or reported besides
// the kept clusters, so the decision is one pass over the bindings. It reports false, having
// changed nothing but scratch, when any condition fails. (Only the required affinity is
// looked at: a member it does not select is filtered out by ClusterAffinity, and a member
// it selects that holds no binding may be a candidate whatever the other filters say; any
// filter plugin added can only filter out more.)
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
