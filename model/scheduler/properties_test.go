package scheduler_test

// Property tests for the scheduling decision (SCHED-*, CRP-POL-*, AFF-*, TOPO-*, TAINT-*,
// MC-HEARTBEAT-HEALTH): the properties. Their cases and generators are in
// propcase_test.go, their oracles in proporacle_test.go. Every helper of theirs is prefixed
// with prop so that it cannot clash with the table-driven tests' helpers in the same
// package.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
)

// ---------------------------------------------------------------------------------------
// Properties

// Property 1: every new pick is feasible. New picks are Plan.Create and Plan.Update (which
// only ever moves an obsolete or Unscheduled binding back to live). The member exists and is
// eligible; for PickAll/PickN it matches a required term (if any) and tolerates every taint;
// for PickFixed it is named. The written binding is live and points at the current snapshot.
func TestPropNewPicksAreFeasible(t *testing.T) {
	type facts struct {
		MemberExists        bool
		Eligible            bool
		PassesRequiredTerms bool
		ToleratesTaints     bool
		NamedByPickFixed    bool
		WasUnschedOrObsol   bool // Update only: the binding was Unscheduled or obsolete before
		LiveOnCurrentSnap   bool
		CreatedAsScheduled  bool // Create only
		State               placement.BindingState
	}
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		members := propMemberByName(c.Members)
		before := propBindingByName(c.Bindings)
		p := c.Snapshot.Policy
		named := map[string]bool{}
		if p != nil {
			for _, n := range p.ClusterNames {
				named[n] = true
			}
		}
		got, want := map[string]facts{}, map[string]facts{}
		check := func(kind string, ch scheduler.Change) {
			b := ch.Binding
			m := members[b.TargetCluster]
			f := facts{
				MemberExists:      m != nil,
				LiveOnCurrentSnap: propLive(&b) && b.SchedulingPolicySnapshotName == propCurrentSnap,
			}
			if m != nil {
				f.Eligible = m.CheckEligibility(propNow, member.DefaultEligibility).OK()
				f.PassesRequiredTerms = propPassesRequired(p, m)
				f.ToleratesTaints = placement.FirstUntolerated(m.Taints, propTolerationsOf(p)) == -1
			}
			f.NamedByPickFixed = named[b.TargetCluster]
			w := facts{MemberExists: true, Eligible: true, PassesRequiredTerms: true, ToleratesTaints: true, NamedByPickFixed: true, LiveOnCurrentSnap: true}
			if c.policyType() == placement.PickFixed {
				// Taints and affinity do not apply to PickFixed (TAINT-SCOPE, CRP-POL-FIELDS).
				w.PassesRequiredTerms, w.ToleratesTaints = f.PassesRequiredTerms, f.ToleratesTaints
			} else {
				w.NamedByPickFixed = f.NamedByPickFixed
			}
			switch kind {
			case "create":
				f.CreatedAsScheduled = b.State == placement.Scheduled && b.ResourceSnapshotName == ""
				w.CreatedAsScheduled = true
			case "update":
				// An obsolete binding keeps its state; an Unscheduled one gets its previous
				// state back, Bound or else Scheduled (SCHED-BIND).
				f.State, w.State = b.State, b.State
				if old := before[b.Name]; old != nil {
					f.WasUnschedOrObsol = !old.Deleting && (old.State == placement.Unscheduled || old.SchedulingPolicySnapshotName != propCurrentSnap)
					switch {
					case old.State != placement.Unscheduled:
						w.State = old.State
					case old.PreviousState == placement.Bound:
						w.State = placement.Bound
					default:
						w.State = placement.Scheduled
					}
				}
				w.WasUnschedOrObsol = true
			}
			key := kind + " " + b.Name + " -> " + b.TargetCluster
			got[key], want[key] = f, w
		}
		for _, ch := range plan.Create {
			check("create", ch)
		}
		for _, ch := range plan.Update {
			check("update", ch)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nnew picks are not all feasible (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 2: PickN places at most numberOfClusters, and Plan.Placed is the number of
// clusters holding a live binding once the plan is applied.
func TestPropPickNPlacesAtMostN(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickN).Draw(t, "case")
		plan := propSchedule(t, c)
		live := propLiveClusters(propApplyPlan(c.Bindings, plan))
		n := int(c.Snapshot.NumberOfClusters)
		if len(live) > n {
			t.Fatalf("Schedule(%#v) = %s\nlive clusters after the plan = %d %v, want <= numberOfClusters %d", c, propDescribePlan(plan), len(live), slices.Sorted(maps.Keys(live)), n)
		}
		if diff := cmp.Diff(len(live), plan.Placed); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nPlaced = %d, want %d live clusters after the plan %v (-want +got):\n%s", c, propDescribePlan(plan), plan.Placed, len(live), slices.Sorted(maps.Keys(live)), diff)
		}
		if plan.Wanted != n {
			t.Fatalf("Schedule(%#v) = %s\nWanted = %d, want %d", c, propDescribePlan(plan), plan.Wanted, n)
		}
	})
}

// Property 2b: for every placement type, Plan.Placed is the number of clusters holding a
// live binding once the plan is applied (its documented meaning).
func TestPropPlacedMatchesAppliedPlan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		live := propLiveClusters(propApplyPlan(c.Bindings, plan))
		if diff := cmp.Diff(len(live), plan.Placed); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nPlaced = %d, want %d live clusters after the plan %v (-want +got):\n%s", c, propDescribePlan(plan), plan.Placed, len(live), slices.Sorted(maps.Keys(live)), diff)
		}
	})
}

// Property 3: the plan does not depend on the order of members or bindings.
func TestPropPermutationInvariance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		shuffled := c
		shuffled.Members = rapid.Permutation(c.Members).Draw(t, "members")
		shuffled.Bindings = rapid.Permutation(c.Bindings).Draw(t, "bindings")
		plan2 := propSchedule(t, shuffled)
		if diff := cmp.Diff(plan, plan2, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nwant the plan of the unshuffled input %#v = %s\n(-unshuffled +shuffled):\n%s", shuffled, propDescribePlan(plan2), c, propDescribePlan(plan), diff)
		}
	})
}

// Property 3b: a Scheduler reused across decisions (scratch memory) decides as a fresh one.
func TestPropReusedSchedulerMatchesFresh(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := scheduler.New(scheduler.Options{})
		for i := range rapid.IntRange(2, 4).Draw(t, "decisions") {
			c := propGenCase().Draw(t, fmt.Sprintf("case%d", i))
			fresh := propSchedule(t, c)
			reused, err := s.Schedule(c.input())
			if err != nil {
				t.Fatalf("reused Scheduler: Schedule(%#v) error = %v, want nil", c, err)
			}
			if diff := cmp.Diff(fresh, reused); diff != "" {
				t.Fatalf("reused Scheduler (decision %d): Schedule(%#v) = %s, want %s\n(-fresh +reused):\n%s", i, c, propDescribePlan(reused), propDescribePlan(fresh), diff)
			}
		}
	})
}

// Property 3c: Schedule does not modify its input.
func TestPropScheduleDoesNotMutateInput(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		before := propCloneCase(c)
		plan := propSchedule(t, c)
		if diff := cmp.Diff(before, c, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Schedule(%#v) = %s modified its input (-before +after):\n%s", before, propDescribePlan(plan), diff)
		}
	})
}

func propCloneCase(c propCase) propCase {
	out := propCase{}
	for _, m := range c.Members {
		nm := *m
		nm.Labels = maps.Clone(m.Labels)
		nm.Taints = slices.Clone(m.Taints)
		nm.Properties = maps.Clone(m.Properties)
		nm.Resources = member.ResourceUsage{Capacity: maps.Clone(m.Resources.Capacity), Allocatable: maps.Clone(m.Resources.Allocatable), Available: maps.Clone(m.Resources.Available)}
		out.Members = append(out.Members, &nm)
	}
	for _, b := range c.Bindings {
		nb := *b
		if s := b.ClusterDecision.ClusterScore; s != nil {
			ns := *s
			nb.ClusterDecision.ClusterScore = &ns
		}
		out.Bindings = append(out.Bindings, &nb)
	}
	snap := *c.Snapshot
	if c.Snapshot.Policy != nil {
		raw, err := json.Marshal(c.Snapshot.Policy)
		if err != nil {
			panic(err)
		}
		var p placement.PlacementPolicy
		if err := json.Unmarshal(raw, &p); err != nil {
			panic(err)
		}
		snap.Policy = &p
	}
	out.Snapshot = &snap
	return out
}

// Property 4: applying the plan and deciding again changes nothing.
func TestPropIdempotent(t *testing.T) {
	type outcome struct {
		Create, Update, Unschedule []scheduler.Change
		Scheduled                  any
		Placed                     int
	}
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		again := c
		again.Bindings = propApplyPlan(c.Bindings, plan)
		plan2 := propSchedule(t, again)
		want := outcome{Scheduled: plan.Scheduled, Placed: plan.Placed}
		got := outcome{Create: plan2.Create, Update: plan2.Update, Unschedule: plan2.Unschedule, Scheduled: plan2.Scheduled, Placed: plan2.Placed}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || !plan2.Empty() {
			t.Fatalf("Schedule(%#v) = %s\nafter applying the first plan %s of %#v,\nwant an empty plan with the same Scheduled condition (-want +got):\n%s",
				again, propDescribePlan(plan2), propDescribePlan(plan), c, diff)
		}
	})
}

// Property 5: after the plan, no cluster has two live bindings, binding names are unique,
// and the plan writes each binding once: creates new names, updates and unschedules
// existing ones.
func TestPropOneLiveBindingPerCluster(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		before := propBindingByName(c.Bindings)
		var problems []string
		written := map[string]int{}
		for _, part := range []struct {
			kind    string
			changes []scheduler.Change
		}{{"create", plan.Create}, {"update", plan.Update}, {"unschedule", plan.Unschedule}} {
			for _, ch := range part.changes {
				written[ch.Binding.Name]++
				_, existed := before[ch.Binding.Name]
				if existed == (part.kind == "create") {
					problems = append(problems, fmt.Sprintf("%s %s: existed before = %t", part.kind, ch.Binding.Name, existed))
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(written)) {
			if written[name] > 1 {
				problems = append(problems, fmt.Sprintf("binding %s written %d times", name, written[name]))
			}
		}
		after := propApplyPlan(c.Bindings, plan)
		names := map[string]int{}
		for _, b := range after {
			names[b.Name]++
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			if names[name] > 1 {
				problems = append(problems, fmt.Sprintf("binding name %s used %d times after the plan", name, names[name]))
			}
		}
		live := propLiveClusters(after)
		for _, cl := range slices.Sorted(maps.Keys(live)) {
			if len(live[cl]) > 1 {
				problems = append(problems, fmt.Sprintf("cluster %s has %d live bindings after the plan: %v", cl, len(live[cl]), live[cl]))
			}
		}
		if diff := cmp.Diff([]string(nil), problems); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nbinding invariants broken (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 6: IgnoredDuringExecution (CRP-POL-IDE). A current, non-deleting Scheduled or
// Bound binding whose member is present and not leaving is never unscheduled, however the
// member's labels, taints, properties or health changed, except:
//   - PickN scale-in: when such bindings sit on more clusters than numberOfClusters, at most
//     the surplus clusters lose theirs;
//   - PickFixed, when its cluster is not in clusterNames;
//   - duplicates: a cluster holding several such bindings may lose all but one of them
//     (SamePlacementAntiAffinity; property 5 requires it).
func TestPropIgnoredDuringExecution(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		members := propMemberByName(c.Members)
		protected := map[string][]string{} // cluster → protected binding names
		for _, b := range c.Bindings {
			if m := members[b.TargetCluster]; propLive(b) && b.SchedulingPolicySnapshotName == propCurrentSnap && m != nil && !m.Leaving {
				protected[b.TargetCluster] = append(protected[b.TargetCluster], b.Name)
			}
		}
		unscheduled := map[string]string{} // name → reason
		for _, ch := range plan.Unschedule {
			unscheduled[ch.Binding.Name] = ch.Reason
		}
		named := map[string]bool{}
		if p := c.Snapshot.Policy; p != nil {
			for _, n := range p.ClusterNames {
				named[n] = true
			}
		}
		var violations, lost []string
		for _, cl := range slices.Sorted(maps.Keys(protected)) {
			var gone []string
			for _, n := range protected[cl] {
				if why, ok := unscheduled[n]; ok {
					gone = append(gone, fmt.Sprintf("%s (%s)", n, why))
				}
			}
			if len(gone) < len(protected[cl]) {
				continue // at least one stays: only duplicates were dropped
			}
			entry := fmt.Sprintf("cluster %s lost every current binding: %v", cl, gone)
			switch c.policyType() {
			case placement.PickN:
				lost = append(lost, entry)
			case placement.PickFixed:
				if named[cl] {
					violations = append(violations, entry+" although it is in clusterNames")
				}
			default:
				violations = append(violations, entry)
			}
		}
		if c.policyType() == placement.PickN {
			if surplus := len(protected) - int(c.Snapshot.NumberOfClusters); len(lost) > max(surplus, 0) {
				for _, e := range lost {
					violations = append(violations, fmt.Sprintf("%s; scale-in may remove only %d of %d clusters (numberOfClusters %d)", e, max(surplus, 0), len(protected), c.Snapshot.NumberOfClusters))
				}
			}
		}
		if diff := cmp.Diff([]string(nil), violations); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nIgnoredDuringExecution broken (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 8 (TOPO-SKEW, TOPO-SCORE): a DoNotSchedule constraint is never broken by a pick.
// Upstream's rule rejects any pick after which the skew would exceed maxSkew, and a pick on
// a member without the key changes no count, so whenever the plan newly picks a member
// carrying the key, the skew once the plan is applied is at most maxSkew. Domains are the
// key's values over every member; counts are the clusters holding a live binding.
func TestPropDoNotScheduleSkewRespected(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickN).Draw(t, "case")
		plan := propSchedule(t, c)
		members := propMemberByName(c.Members)
		live := propLiveClusters(propApplyPlan(c.Bindings, plan))
		var problems []string
		for i, tc := range c.Snapshot.Policy.TopologySpreadConstraints {
			if tc.Action() != placement.DoNotSchedule {
				continue
			}
			var keyedPicks []string
			for _, ch := range slices.Concat(plan.Create, plan.Update) {
				if m := members[ch.Binding.TargetCluster]; m != nil {
					if _, ok := m.Labels[tc.TopologyKey]; ok {
						keyedPicks = append(keyedPicks, m.Name)
					}
				}
			}
			if len(keyedPicks) == 0 {
				continue
			}
			counts := map[string]int{}
			for _, m := range c.Members {
				if v, ok := m.Labels[tc.TopologyKey]; ok {
					counts[v] += min(len(live[m.Name]), 1)
				}
			}
			lo, hi := slices.Min(slices.Collect(maps.Values(counts))), slices.Max(slices.Collect(maps.Values(counts)))
			if int32(hi-lo) > tc.Skew() {
				problems = append(problems, fmt.Sprintf("constraint %d (key %q, maxSkew %d): picks %v leave domain counts %v, skew %d", i, tc.TopologyKey, tc.Skew(), keyedPicks, counts, hi-lo))
			}
		}
		if diff := cmp.Diff([]string(nil), problems); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nDoNotSchedule topology spread broken (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 9 (SCHED-SORT): without topology constraints, PickN picks by rank: no new pick
// scores lower (affinity score) than a candidate reported "does not score high enough".
func TestPropPickNPicksByScore(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickN).Draw(t, "case")
		if len(c.Snapshot.Policy.TopologySpreadConstraints) > 0 {
			return
		}
		plan := propSchedule(t, c)
		lowestPick, lowestName := int32(math.MaxInt32), ""
		for _, ch := range slices.Concat(plan.Create, plan.Update) {
			if s := ch.Binding.ClusterDecision.ClusterScore; s == nil {
				t.Fatalf("Schedule(%#v) = %s\nPickN pick %s has no score, want one", c, propDescribePlan(plan), ch.Binding.Name)
			} else if s.AffinityScore < lowestPick {
				lowestPick, lowestName = s.AffinityScore, ch.Binding.TargetCluster
			}
		}
		var problems []string
		for _, d := range plan.Decisions {
			if d.Reason == scheduler.ReasonNotHighEnough && d.ClusterScore != nil && d.ClusterScore.AffinityScore > lowestPick {
				problems = append(problems, fmt.Sprintf("%s (affinity %d) passed over for %s (affinity %d)", d.ClusterName, d.ClusterScore.AffinityScore, lowestName, lowestPick))
			}
		}
		if diff := cmp.Diff([]string(nil), problems); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\ncandidates passed over for lower-scoring ones (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 10 (AFF-PREFERRED, AFF-PROPERTY-SORTER): the affinity score the scheduler reports
// for a PickN candidate it scored now (a new pick, or one passed over) is the documented sum:
// a label-only term adds its weight when its selector matches; a sorter term adds
// round(weight × (v − min)/(max − min)) (Descending) or round(weight × (1 − (v − min)/(max − min)))
// (Ascending) when its selector (if any) matches, the member reports the property and
// max > min, with min and max over every member reporting it.
func TestPropAffinityScoreFormula(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickN).Draw(t, "case")
		plan := propSchedule(t, c)
		var prefs []placement.PreferredClusterSelector
		if a := c.Snapshot.Policy.Affinity; a != nil && a.ClusterAffinity != nil {
			prefs = a.ClusterAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
		expected := func(m *member.Member) int32 {
			var total int32
			for _, p := range prefs {
				if ls := p.Preference.LabelSelector; ls != nil {
					sel, err := metav1.LabelSelectorAsSelector(ls)
					if err != nil {
						panic(err)
					}
					if !sel.Matches(klabels.Set(m.Labels)) {
						continue
					}
				}
				s := p.Preference.PropertySorter
				if s == nil {
					total += p.Weight
					continue
				}
				q, ok := propPropertyValue(m, s.Name)
				if !ok {
					continue
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, o := range c.Members {
					if oq, ok := propPropertyValue(o, s.Name); ok {
						lo, hi = min(lo, oq.AsApproximateFloat64()), max(hi, oq.AsApproximateFloat64())
					}
				}
				if hi <= lo {
					continue
				}
				r := (q.AsApproximateFloat64() - lo) / (hi - lo)
				if s.SortOrder == placement.Ascending {
					r = 1 - r
				}
				total += int32(math.Round(float64(p.Weight) * r))
			}
			return total
		}
		members := propMemberByName(c.Members)
		got, want := map[string]int32{}, map[string]int32{}
		record := func(cluster string, s *placement.ClusterScore) {
			m := members[cluster]
			if m == nil || s == nil {
				return
			}
			got[cluster], want[cluster] = s.AffinityScore, expected(m)
		}
		for _, ch := range slices.Concat(plan.Create, plan.Update) {
			record(ch.Binding.TargetCluster, ch.Binding.ClusterDecision.ClusterScore)
		}
		for _, d := range plan.Decisions {
			if d.Reason == scheduler.ReasonNotHighEnough {
				record(d.ClusterName, d.ClusterScore)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\naffinity scores differ from the documented formula (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}
