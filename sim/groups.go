package sim

// Group faults: a step that acts on many members at once (a name pattern, a label
// selector) picks them here, in name order, so that the order of their events in the trace
// is the same on every run.

import (
	"fmt"
	"strconv"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/rollout"
)

// SelectMembers returns the members, in name order, that match reports as selected (given
// the member's name and its labels now). Members leaving the fleet are included: a step may
// still fail or heal them, as it may one named member.
func (s *Sim) SelectMembers(match func(name string, labels map[string]string) bool) []string {
	var out []string
	for _, name := range s.store.MemberClusterNames() {
		if r := s.store.members[name]; r != nil && match(name, r.Member.Labels) {
			out = append(out, name)
		}
	}
	return out
}

// PartitionGroup cuts every named member off the network (Fail in Partition mode, each
// recorded as member-failed) and, when heal is positive, heals them that long after, in the
// same order. It records one partition event naming the group (what) and how many members
// it holds, so a timeline shows the group fault as one entry.
func (s *Sim) PartitionGroup(what string, names []string, heal time.Duration) error {
	if len(names) == 0 {
		return fmt.Errorf("partition: %s selects no member", what)
	}
	s.Record("partition-started", what, fmt.Sprintf("%d member(s)", len(names)))
	for _, n := range names {
		if err := s.Fail(n, Partition); err != nil {
			return err
		}
	}
	if heal > 0 {
		s.At(s.now+heal, "partition-heal", func() {
			s.Record("partition-ended", what, fmt.Sprintf("%d member(s)", len(names)))
			for _, n := range names {
				_ = s.Heal(n) // a member deleted meanwhile has nothing left to heal
			}
		})
	}
	return nil
}

// RolloutView is what the run's measures (scenarios/runner) read of a placement at an
// instant: which clusters hold its resources and are available there, and whether its
// rollout of the latest resource snapshot is complete.
type RolloutView struct {
	// Available and Unavailable are the clusters of Bound or Unscheduled bindings (those
	// holding the placement's resources) whose Available condition is, or is not, True at
	// the binding's generation (model/rollout.Ready without the untrackable wait: a
	// measure, not a rollout decision).
	Available, Unavailable []string
	// LatestIndex is the latest resource snapshot's index (-1 before the first).
	LatestIndex    int
	LatestSnapshot string
	// Complete: the placement is Available at the latest resource snapshot.
	Complete bool
}

// Rollout returns a placement's RolloutView; false when there is no such placement.
func (s *Sim) Rollout(name string) (RolloutView, bool) {
	p := s.store.placements[name]
	if p == nil {
		return RolloutView{}, false
	}
	v := RolloutView{LatestIndex: -1}
	if r := p.LatestResources(); r != nil {
		v.LatestIndex, v.LatestSnapshot = r.Index, r.Name
	}
	now := s.Now()
	for _, b := range s.store.byCRP[name] {
		if b.State != placement.Bound && b.State != placement.Unscheduled {
			continue
		}
		if ok, _ := rollout.Ready(b, now, 0); ok {
			v.Available = append(v.Available, b.TargetCluster)
		} else {
			v.Unavailable = append(v.Unavailable, b.TargetCluster)
		}
	}
	if c, ok := condition.Find(p.Status.Conditions, "ClusterResourcePlacementAvailable"); ok && c.Status == "True" && v.LatestIndex >= 0 {
		v.Complete = p.Status.ObservedResourceIndex == strconv.Itoa(v.LatestIndex)
	}
	return v, true
}

// MemberLabels returns a member's labels (not to be modified); false when there is no
// such member.
func (s *Sim) MemberLabels(name string) (map[string]string, bool) {
	r := s.store.members[name]
	if r == nil {
		return nil, false
	}
	return r.Member.Labels, true
}
