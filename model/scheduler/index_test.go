package scheduler_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/model/scheduler/internal/reference"
)

// propDrawOptions draws scheduler options; a small MaxDecisions reaches the filtered
// members' decisions and the caps.
func propDrawOptions(t *rapid.T) scheduler.Options {
	return scheduler.Options{MaxDecisions: rapid.SampledFrom([]int{0, 1, 2, 3, 5, 8, 20}).Draw(t, "maxDecisions")}
}

// propVariant reorders the fleet (the stores hand it over sorted by name; the scheduler
// must not care) and mixes in members of another kind, which every decision ignores.
func propVariant(t *rapid.T, c propCase) propCase {
	switch rapid.IntRange(0, 2).Draw(t, "order") {
	case 0:
		slices.SortFunc(c.Members, func(a, b *member.Member) int { return strings.Compare(a.Name, b.Name) })
	case 1:
		slices.SortFunc(c.Members, func(a, b *member.Member) int { return strings.Compare(b.Name, a.Name) })
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "machines") {
		m := propDrawMember(t, fmt.Sprintf("machine-%d", i))
		m.Kind = member.KindMachine
		at := rapid.IntRange(0, len(c.Members)).Draw(t, "machineAt")
		c.Members = slices.Insert(c.Members, at, m)
	}
	return c
}

// TestPropIndexedMatchesReference: the indexed scheduler decides exactly as the scheduler
// did before the index (internal/reference) on random fleets, policies and bindings; PickN
// decisions by the ranked path over the policy cache, or (a quarter of the cases) by the
// path without it, which they take when topology domains are too many to number.
func TestPropIndexedMatchesReference(t *testing.T) {
	defer scheduler.SetForceUnranked(false)
	rapid.Check(t, func(t *rapid.T) {
		scheduler.SetForceUnranked(rapid.IntRange(0, 3).Draw(t, "unranked") == 0)
		c := propVariant(t, propGenCase().Draw(t, "case"))
		opts := propDrawOptions(t)
		want, werr := reference.New(opts).Schedule(c.input())
		s := scheduler.New(opts)
		// The first decision derives no policy cache (the index is new); the second, at
		// the same index, derives it and takes the ranked path.
		for range 2 {
			got, gerr := s.Schedule(c.input())
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("Schedule(%#v) error = %v, the reference's = %v", c, gerr, werr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Schedule(%#v) = %s\nwant the reference's %s\n(-reference +indexed):\n%s", c, propDescribePlan(got), propDescribePlan(want), diff)
			}
		}
	})
}

// TestPropIndexFollowsFleetChanges: one Scheduler, whose index is kept up to date between
// decisions, decides as the reference after every random change to the fleet (made as the
// stores make them: maps replaced, taints edited in place, status written in place,
// members added and removed) and to the bindings (the previous plan applied). Half the
// runs hand over store versions (Input.MembersVersion, Input.BindingsVersion) changed as
// the stores change them, so that decisions skip the sync and recall steady decisions,
// and a feed of status writes (Input.Status, remembering 1 to 8 writes or the default),
// so that decisions keep status as a column and re-read only the members it names.
func TestPropIndexFollowsFleetChanges(t *testing.T) {
	defer scheduler.SetForceUnranked(false)
	rapid.Check(t, func(t *rapid.T) {
		scheduler.SetForceUnranked(rapid.IntRange(0, 3).Draw(t, "unranked") == 0)
		c := propVariant(t, propGenCase().Draw(t, "case"))
		opts := propDrawOptions(t)
		s := scheduler.New(opts)
		now := propNow
		next := 0
		versioned := rapid.Bool().Draw(t, "versioned")
		var feed *member.StatusFeed
		if versioned {
			feed = member.NewStatusFeed(rapid.IntRange(0, 8).Draw(t, "feedSize"))
		}
		var membersVersion, bindingsVersion uint64 = 1, 1
		for step := range rapid.IntRange(1, 6).Draw(t, "steps") {
			label := fmt.Sprint("step", step)
			in := c.input()
			in.Now = now
			if versioned {
				in.MembersVersion, in.BindingsVersion, in.Status = membersVersion, bindingsVersion, feed
			}
			got := scheduleLikeReference(t, s, opts, in, step, c)
			if rapid.Bool().Draw(t, label+"again") {
				got = scheduleLikeReference(t, s, opts, in, step, c) // the index held still: ranked
			}
			if rapid.Bool().Draw(t, label+"apply") && !got.Empty() {
				c.Bindings = propApplyPlan(c.Bindings, got)
				bindingsVersion++
			}
			for range rapid.IntRange(0, 3).Draw(t, label+"changes") {
				switch propChangeFleet(t, &c, label, &next, feed) {
				case changedMembers:
					membersVersion++
				case changedBindings:
					bindingsVersion++
				}
			}
			now = now.Add(rapid.SampledFrom([]time.Duration{0, time.Second, time.Minute, 10 * time.Minute}).Draw(t, label+"elapse"))
		}
	})
}

// What propChangeFleet changed, for the store versions.
type propChange int

const (
	changedMembers  propChange = iota // the list, or a member's spec or Leaving
	changedStatus                     // a member's agent status only
	changedBindings                   // a binding
	changedSnapshot                   // the policy snapshot (a new one)
)

// propChangeFleet makes one random change; a status write is told to feed (when not nil).
func propChangeFleet(t *rapid.T, c *propCase, label string, next *int, feed *member.StatusFeed) propChange {
	if len(c.Members) == 0 {
		c.Members = append(c.Members, propDrawMember(t, fmt.Sprint("new", *next)))
		*next++
		return changedMembers
	}
	i := rapid.IntRange(0, len(c.Members)-1).Draw(t, label+"member")
	m := c.Members[i]
	switch rapid.IntRange(0, 10).Draw(t, label+"change") {
	case 0:
		ls := maps.Clone(m.Labels)
		k := rapid.SampledFrom(propLabelKeys).Draw(t, label+"key")
		if v := rapid.SampledFrom(append([]string{""}, propLabelValues[k]...)).Draw(t, label+"value"); v == "" {
			delete(ls, k)
		} else {
			ls[k] = v
		}
		m.Labels = ls
	case 1:
		m.Properties = map[string]resource.Quantity{member.NodeCountProperty: *resource.NewQuantity(int64(rapid.IntRange(0, 8).Draw(t, label+"nodes")), resource.DecimalSI)}
	case 2:
		m.Resources = member.ResourceUsage{Available: member.ResourceList{"cpu": *resource.NewMilliQuantity(int64(500*rapid.IntRange(0, 12).Draw(t, label+"cpu")), resource.DecimalSI)}}
	case 3:
		m.Taints = slices.DeleteFunc(m.Taints, func(x member.Taint) bool { return x.Key == "maint" })
		m.Taints = append(m.Taints, rapid.SampledFrom(propTaints).Draw(t, label+"taint"))
	case 4:
		m.Taints = slices.DeleteFunc(m.Taints, func(member.Taint) bool { return true })
	case 5:
		m.Agent.LastHeartbeat = propNow.Add(time.Duration(rapid.IntRange(-600, 600).Draw(t, label+"beat")) * time.Second)
		m.Agent.Healthy = rapid.IntRange(0, 3).Draw(t, label+"healthy") > 0
		if rapid.IntRange(0, 3).Draw(t, label+"transition") == 0 {
			m.Agent.HealthTransition = propNow.Add(time.Duration(rapid.IntRange(-600, 600).Draw(t, label+"transitionAt")) * time.Second)
		}
		if feed != nil {
			feed.Changed(m)
		}
		return changedStatus
	case 6:
		m.Leaving = !m.Leaving
	case 7:
		c.Members = slices.Delete(c.Members, i, i+1)
	case 8:
		c.Members = slices.Insert(c.Members, i, propDrawMember(t, fmt.Sprint("new", *next)))
		*next++
	case 10: // a binding's recorded decision names no cluster, or another one (written in place)
		if len(c.Bindings) > 0 {
			b := c.Bindings[rapid.IntRange(0, len(c.Bindings)-1).Draw(t, label+"binding")]
			b.ClusterDecision.ClusterName = rapid.SampledFrom([]string{"", "a", "zz", b.TargetCluster}).Draw(t, label+"decisionName")
		}
		return changedBindings
	case 9:
		n := *c.Snapshot
		if n.Policy != nil && n.Policy.Type() == placement.PickN {
			n.NumberOfClusters = int32(rapid.IntRange(0, 10).Draw(t, label+"n"))
			c.Snapshot = &n
		}
		return changedSnapshot
	}
	return changedMembers
}

// TestSteadyPickAllMatchesReference: the short cut for a PickAll placement already in place
// decides as the reference, also when a binding's recorded decision names no cluster or
// another one, and when the fleet is not sorted by name.
func TestSteadyPickAllMatchesReference(t *testing.T) {
	for _, names := range [][]string{{"a", "b", "c"}, {"c", "a", "b"}} {
		for _, recorded := range [][]string{{"a", "b", "c"}, {"", "b", "c"}, {"a", "zz", "c"}, {"c", "b", "a"}} {
			var ms []*member.Member
			for _, n := range names {
				ms = append(ms, cluster(n))
			}
			var bs []*placement.Binding
			for i, n := range []string{"a", "b", "c"} {
				b := binding(n, placement.Bound, "crp-0")
				b.ClusterDecision.ClusterName = recorded[i]
				bs = append(bs, b)
			}
			in := scheduler.Input{Snapshot: snapshot(policy(t, "placementType: PickAll"), 0), Members: ms, Bindings: bs, Now: now}
			for _, max := range []int{1, 3, 4} {
				opts := scheduler.Options{MaxDecisions: max}
				want, err := reference.New(opts).Schedule(in)
				if err != nil {
					t.Fatal(err)
				}
				s := scheduler.New(opts)
				for range 2 { // the second decision reuses the index and the binding positions
					got, err := s.Schedule(in)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("members %v, recorded %q, MaxDecisions %d: Schedule (-reference +indexed):\n%s", names, recorded, max, diff)
					}
				}
			}
		}
	}
}

// TestPropSteadyRecallMatchesReference: a PickAll placement brought into place on a healthy
// fleet, then decided again and again with store versions while the fleet, its status, the
// bindings and the snapshot change at random (and the plans are applied or not). Each
// decision, recalled from the previous steady one or made afresh, is the reference's.
func TestPropSteadyRecallMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickAll).Draw(t, "case")
		for _, m := range c.Members {
			m.Taints, m.Leaving = nil, false
			m.Agent = member.AgentStatus{Present: true, Joined: true, LastHeartbeat: propNow, HealthKnown: true, Healthy: true}
		}
		c.Bindings = nil
		opts := scheduler.Options{MaxDecisions: rapid.IntRange(1, 6).Draw(t, "maxDecisions")}
		s := scheduler.New(opts)
		next := 0
		var membersVersion, bindingsVersion uint64 = 1, 1
		for step := range rapid.IntRange(2, 8).Draw(t, "steps") {
			label := fmt.Sprint("step", step)
			in := c.input()
			in.MembersVersion, in.BindingsVersion = membersVersion, bindingsVersion
			in.Now = propNow.Add(time.Duration(step) * time.Minute)
			got := scheduleLikeReference(t, s, opts, in, step, c)
			if !got.Empty() && (step == 0 || rapid.IntRange(0, 3).Draw(t, label+"apply") > 0) {
				c.Bindings = propApplyPlan(c.Bindings, got)
				bindingsVersion++
			}
			if step == 0 {
				continue
			}
			for range rapid.IntRange(0, 2).Draw(t, label+"changes") {
				switch propChangeFleet(t, &c, label, &next, nil) {
				case changedMembers:
					membersVersion++
				case changedBindings:
					bindingsVersion++
				}
			}
		}
	})
}

// TestSteadyRecallManyPlacements: one Scheduler deciding more placements than it keeps
// steady decisions for (it starts over past maxSteadyMemos) still decides each as the
// reference, recalled or not.
func TestSteadyRecallManyPlacements(t *testing.T) {
	ms := []*member.Member{cluster("a"), cluster("b")}
	opts := scheduler.Options{MaxDecisions: 1}
	s := scheduler.New(opts)
	type placed struct {
		snap *placement.PolicySnapshot
		bs   []*placement.Binding
	}
	var ps []placed
	for i := range 300 {
		snap := snapshot(policy(t, "placementType: PickAll"), 0)
		snap.Placement = fmt.Sprint("crp-", i)
		ps = append(ps, placed{snap: snap})
	}
	for round := range 4 {
		for j := range ps {
			i := j
			if round%2 == 1 { // the placements decided last first: their memos are kept
				i = len(ps) - 1 - j
			}
			p := &ps[i]
			in := scheduler.Input{Snapshot: p.snap, Members: ms, Bindings: p.bs, Now: now, MembersVersion: 1, BindingsVersion: uint64(len(p.bs) + 1)}
			got := scheduleLikeReference(t, s, opts, in, round, p.snap.Placement)
			if round == 0 {
				for _, c := range got.Create {
					b := c.Binding
					p.bs = append(p.bs, &b)
				}
			}
		}
	}
}

// scheduleLikeReference decides in with s and fails t unless the frozen reference
// scheduler decides the same (step and c describe the case in the failure).
func scheduleLikeReference(t interface{ Fatalf(string, ...any) }, s *scheduler.Scheduler, opts scheduler.Options, in scheduler.Input, step int, c any) scheduler.Plan {
	want, werr := reference.New(opts).Schedule(in)
	got, gerr := s.Schedule(in)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("step %d: Schedule(%#v) error = %v, the reference's = %v", step, c, gerr, werr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("step %d: Schedule(%#v) = %s\nwant the reference's %s\n(-reference +indexed):\n%s", step, c, propDescribePlan(got), propDescribePlan(want), diff)
	}
	return got
}

// TestPropStatusColumnFollowsTime: one Scheduler kept with a status feed decides as the
// reference while the time moves by small steps across the eligibility windows' edges
// (so the cached eligibility bits must be decided again exactly when a heartbeat or a
// health transition crosses a cut-off, also backwards) and statuses are written, told to
// the feed or replaced with the member (and MembersVersion moved).
func TestPropStatusColumnFollowsTime(t *testing.T) {
	ages := []time.Duration{0, time.Second, time.Minute, 4*time.Minute + 59*time.Second, 5 * time.Minute, 5*time.Minute + 1, 5*time.Minute + time.Second, 6 * time.Minute, time.Hour}
	drawStatus := func(t *rapid.T, label string, at time.Time) member.AgentStatus {
		return member.AgentStatus{
			Present: rapid.IntRange(0, 15).Draw(t, label+"present") > 0, Joined: rapid.IntRange(0, 15).Draw(t, label+"joined") > 0,
			HealthKnown: rapid.IntRange(0, 15).Draw(t, label+"known") > 0, Healthy: rapid.Bool().Draw(t, label+"healthy"),
			LastHeartbeat:    at.Add(-rapid.SampledFrom(ages).Draw(t, label+"beat")),
			HealthTransition: at.Add(-rapid.SampledFrom(ages).Draw(t, label+"transition")),
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		var ms []*member.Member
		for i := range rapid.IntRange(1, 12).Draw(t, "members") {
			m := cluster(fmt.Sprintf("m%02d", i), labels("zone="+rapid.SampledFrom([]string{"a", "b"}).Draw(t, "zone")))
			m.Agent = drawStatus(t, "", propNow)
			ms = append(ms, m)
		}
		n := int32(rapid.IntRange(0, len(ms)).Draw(t, "n"))
		p := &placement.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n}
		if rapid.Bool().Draw(t, "spread") {
			skew := int32(1)
			p.TopologySpreadConstraints = []placement.TopologySpreadConstraint{{MaxSkew: &skew, TopologyKey: "zone", WhenUnsatisfiable: placement.DoNotSchedule}}
		}
		snap := snapshot(p, 0)
		opts := scheduler.Options{MaxDecisions: rapid.SampledFrom([]int{0, 2}).Draw(t, "maxDecisions")}
		s := scheduler.New(opts)
		feed := member.NewStatusFeed(rapid.IntRange(0, 4).Draw(t, "feedSize"))
		at := propNow
		var version uint64 = 1
		for step := range rapid.IntRange(1, 10).Draw(t, "steps") {
			label := fmt.Sprint("step", step)
			in := scheduler.Input{Snapshot: snap, Members: ms, Now: at, MembersVersion: version, Status: feed}
			scheduleLikeReference(t, s, opts, in, step, ms)
			scheduleLikeReference(t, s, opts, in, step, ms) // the index held still: ranked
			for range rapid.IntRange(0, 2).Draw(t, label+"writes") {
				i := rapid.IntRange(0, len(ms)-1).Draw(t, label+"member")
				if rapid.Bool().Draw(t, label+"replace") {
					m := *ms[i]
					m.Agent = drawStatus(t, label, at)
					ms = slices.Clone(ms)
					ms[i] = &m
					version++
				} else {
					ms[i].Agent = drawStatus(t, label, at)
					feed.Changed(ms[i])
				}
			}
			// Mostly forwards; a clock that goes back must not see bits decided later.
			at = at.Add(rapid.SampledFrom([]time.Duration{0, 1, time.Second, 59 * time.Second, time.Minute, 4*time.Minute + 59*time.Second, 5 * time.Minute, -1, -time.Minute, -5 * time.Minute}).Draw(t, label+"elapse"))
		}
	})
}

// TestManyPickNPolicies: one Scheduler deciding more distinct PickN policies than it keeps
// policy caches for (the rest take the unranked path; caches of an older index make room)
// decides each as the reference, round after round, also after the fleet changed.
func TestManyPickNPolicies(t *testing.T) {
	ms := []*member.Member{cluster("a", labels("zone=1")), cluster("b", labels("zone=2")), cluster("c", labels("zone=1")), cluster("d")}
	opts := scheduler.Options{MaxDecisions: 3}
	s := scheduler.New(opts)
	var snaps []*placement.PolicySnapshot
	for i := range 70 {
		p := policy(t, fmt.Sprintf(`placementType: PickN
numberOfClusters: 2
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: %d
        preference:
          labelSelector:
            matchLabels: {zone: "1"}
topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
`, i-35))
		snap := snapshot(p, 0)
		snap.Placement = fmt.Sprint("crp-", i)
		snaps = append(snaps, snap)
	}
	for round := range 4 {
		if round == 2 { // the index moves on: every cache is of an older index
			m := *ms[3]
			m.Labels = map[string]string{"zone": "2"}
			ms = append(slices.Clone(ms[:3]), &m)
		}
		for _, snap := range snaps {
			in := scheduler.Input{Snapshot: snap, Members: ms, Now: now, MembersVersion: uint64(1 + round/2)}
			scheduleLikeReference(t, s, opts, in, round, snap.Placement)
		}
	}
}
