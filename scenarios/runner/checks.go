package runner

// Checks: the `always` invariants after every event and the expectations at their
// times, each with the description and the result the report shows. Separate from the
// actions (actions.go): these only read the simulation.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/model/status"
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
)

// watchInvariants checks every `always` invariant after every event and keeps the first
// violation of each.
func (r *run) watchInvariants() {
	for _, name := range r.sc.Always {
		r.report.Invariants = append(r.report.Invariants, InvariantResult{Name: name, Passed: true})
	}
	if len(r.sc.Always) == 0 {
		return
	}
	// rolloutBudgets compares each event's state with the state before it: the simulator
	// keeps that copy only when asked.
	var rollout func() error
	if slices.Contains(r.sc.Always, "rolloutBudgets") {
		rollout = r.s.WatchRollout()
	}
	checkAll := func() {
		for i := range r.report.Invariants {
			inv := &r.report.Invariants[i]
			if !inv.Passed {
				continue
			}
			check := func() error { return r.s.CheckInvariant(inv.Name) }
			if inv.Name == "rolloutBudgets" {
				check = rollout
			}
			if err := check(); err != nil {
				inv.Passed, inv.At, inv.Detail = false, r.s.Elapsed().String(), err.Error()
			}
		}
	}
	r.s.AfterEvent(checkAll)
	// Once more at the end: the simulator checks some invariants incrementally and fully
	// at the end of the run.
	r.s.AtEnd(checkAll)
}

func (r *run) check(e *scenarios.Expectation, at time.Duration) {
	res := ExpectationResult{Line: e.Line, At: Seconds(at)}
	switch {
	case e.Placement != nil:
		res.Description, res.Passed, res.Detail = r.checkPlacement(e.Placement)
	case e.Member != nil:
		res.Description, res.Passed, res.Detail = r.checkMember(e.Member)
	case e.Eviction != nil:
		res.Description, res.Passed, res.Detail = r.checkObject("eviction", e.Eviction, func(name string) ([]sim.Condition, bool) {
			st, ok := r.s.Eviction(name)
			return st.Conditions, ok
		})
	case e.ClusterProfile != nil:
		res.Description, res.Passed, res.Detail = r.checkClusterProfile(e.ClusterProfile)
	case e.Unit != nil:
		res.Description, res.Passed, res.Detail = r.checkUnit(e.Unit)
	case e.UpdateRun != nil:
		res.Description, res.Passed, res.Detail = r.checkObject("staged update run", e.UpdateRun, func(name string) ([]sim.Condition, bool) {
			st, ok := r.s.UpdateRun(name)
			return st.Conditions, ok
		})
	}
	r.report.Expectations = append(r.report.Expectations, res)
}

func (r *run) checkPlacement(p *scenarios.PlacementExpectation) (string, bool, string) {
	var want, got []string
	st, ok := r.s.Placement(p.Name)
	if p.Clusters != nil {
		want = append(want, fmt.Sprintf("clusters [%s]", strings.Join(p.Clusters, " ")))
	}
	if p.ClusterCount != nil {
		want = append(want, fmt.Sprintf("%d cluster(s)", *p.ClusterCount))
	}
	if p.Condition != nil {
		want = append(want, describeCondition(p.Condition))
	}
	if p.Details != nil {
		want = append(want, describeDetails(p.Details))
	}
	if br := p.BackReported; br != nil {
		want = append(want, fmt.Sprintf("its Work on %s reporting back [%s]", br.Cluster, strings.Join(br.Objects, " ")))
	}
	if so := p.StatusObject; so != nil {
		if so.Absent {
			want = append(want, "no ClusterResourcePlacementStatus")
		} else {
			want = append(want, fmt.Sprintf("a ClusterResourcePlacementStatus in %s mirroring its status", so.Namespace))
		}
	}
	desc := fmt.Sprintf("placement %s has %s", p.Name, strings.Join(want, ", "))
	if !ok {
		return desc, false, fmt.Sprintf("placement %s does not exist", p.Name)
	}
	passed := true
	if p.Clusters != nil {
		passed = passed && slices.Equal(p.Clusters, st.Clusters)
		got = append(got, fmt.Sprintf("clusters [%s]", strings.Join(st.Clusters, " ")))
	}
	if p.ClusterCount != nil {
		passed = passed && len(st.Clusters) == *p.ClusterCount
		got = append(got, fmt.Sprintf("%d cluster(s)", len(st.Clusters)))
	}
	if p.Condition != nil {
		conds := st.Conditions
		if c := p.Condition.Cluster; c != "" {
			conds = nil
			for _, ps := range st.Status.PlacementStatuses {
				if ps.ClusterName == c {
					conds = sim.ConditionsOf(ps.Conditions)
				}
			}
		}
		ok, text := matchCondition(p.Condition, conds)
		passed = passed && ok
		got = append(got, text)
	}
	if br := p.BackReported; br != nil {
		objs := []string{}
		for _, b := range r.s.BackReported(p.Name, br.Cluster) {
			if b.Reported["kind"] != strings.SplitN(b.Object, "/", 2)[0] {
				passed = false // the report must describe the object it is for
			}
			objs = append(objs, b.Object)
		}
		passed = passed && slices.Equal(objs, br.Objects)
		got = append(got, fmt.Sprintf("its Work on %s reporting back [%s]", br.Cluster, strings.Join(objs, " ")))
	}
	if so := p.StatusObject; so != nil {
		ok, text := checkStatusObject(so, st)
		passed = passed && ok
		got = append(got, text)
	}
	if d := p.Details; d != nil {
		var cs status.ClusterStatus
		for _, ps := range st.Status.PlacementStatuses {
			if ps.ClusterName == d.Cluster {
				cs = ps
			}
		}
		var reasons, drifted, diffed []string
		for _, f := range cs.FailedPlacements {
			reasons = append(reasons, f.Condition.Reason)
		}
		for _, x := range cs.DriftedPlacements {
			for _, pd := range x.ObservedDrifts {
				drifted = append(drifted, pd.Path)
			}
		}
		for _, x := range cs.DiffedPlacements {
			for _, pd := range x.ObservedDiffs {
				diffed = append(diffed, pd.Path)
			}
		}
		slices.Sort(drifted)
		slices.Sort(diffed)
		if d.FailedReason != "" {
			passed = passed && slices.Contains(reasons, d.FailedReason)
		}
		if d.DriftedPaths != nil {
			passed = passed && slices.Equal(d.DriftedPaths, drifted)
		}
		if d.DiffedPaths != nil {
			passed = passed && slices.Equal(d.DiffedPaths, diffed)
		}
		got = append(got, fmt.Sprintf("on %s failed reasons [%s], drifted paths [%s], diffed paths [%s]", d.Cluster,
			strings.Join(reasons, " "), strings.Join(drifted, " "), strings.Join(diffed, " ")))
	}
	return desc, passed, "got " + strings.Join(got, ", ")
}

func describeDetails(d *scenarios.DetailsExpectation) string {
	var parts []string
	if d.FailedReason != "" {
		parts = append(parts, "a failed placement "+d.FailedReason)
	}
	if d.DriftedPaths != nil {
		parts = append(parts, fmt.Sprintf("drifted paths [%s]", strings.Join(d.DriftedPaths, " ")))
	}
	if d.DiffedPaths != nil {
		parts = append(parts, fmt.Sprintf("diffed paths [%s]", strings.Join(d.DiffedPaths, " ")))
	}
	return "on " + d.Cluster + " " + strings.Join(parts, ", ")
}

func (r *run) checkMember(m *scenarios.MemberExpectation) (string, bool, string) {
	if o := m.Object; o != nil {
		return r.checkMemberObject(m.Name, o)
	}
	if m.Gone {
		desc := fmt.Sprintf("member %s has left the fleet", m.Name)
		if _, ok := r.s.Member(m.Name); ok {
			return desc, false, fmt.Sprintf("member %s still exists", m.Name)
		}
		return desc, true, fmt.Sprintf("member %s does not exist", m.Name)
	}
	desc := fmt.Sprintf("member %s has %s", m.Name, describeCondition(m.Condition))
	st, ok := r.s.Member(m.Name)
	if !ok {
		return desc, false, fmt.Sprintf("member %s does not exist", m.Name)
	}
	passed, text := matchCondition(m.Condition, st.Conditions)
	return desc, passed, "got " + text
}

// checkMemberObject checks whether an object is on a member and whether a Work owns it.
func (r *run) checkMemberObject(member string, o *scenarios.MemberObjectExpectation) (string, bool, string) {
	what := o.Kind + " " + o.Name
	if o.Namespace != "" {
		what = o.Kind + " " + o.Namespace + "/" + o.Name
	}
	desc := fmt.Sprintf("member %s: %s is %s", member, what, o.State)
	got := scenarios.ObjectAbsent
	if u := r.s.MemberObject(member, o.Group, o.Kind, o.Namespace, o.Name); u != nil {
		got = scenarios.ObjectUnowned
		for _, ref := range u.GetOwnerReferences() {
			if ref.Kind == agentk8s.AppliedWorkKind {
				got = scenarios.ObjectOwned
			}
		}
	}
	return desc, got == o.State, "got " + got
}

// checkUnit checks a fleet unit's state and where it runs.
func (r *run) checkUnit(e *scenarios.UnitExpectation) (string, bool, string) {
	var want []string
	if e.State != "" {
		want = append(want, "state "+e.State)
	}
	if e.Machine == "-" {
		want = append(want, "no machine")
	} else if e.Machine != "" {
		want = append(want, "machine "+e.Machine)
	}
	if e.Machines != nil {
		want = append(want, fmt.Sprintf("running on [%s]", strings.Join(e.Machines, " ")))
	}
	desc := fmt.Sprintf("unit %s has %s", e.Name, strings.Join(want, ", "))
	st, ok := r.s.Unit(e.Name)
	if !ok {
		return desc, false, fmt.Sprintf("unit %s does not exist", e.Name)
	}
	passed := true
	if e.State != "" {
		passed = passed && st.State == e.State
	}
	switch e.Machine {
	case "":
	case "-":
		passed = passed && st.Machine == ""
	default:
		passed = passed && st.Machine == e.Machine
	}
	if e.Machines != nil {
		passed = passed && slices.Equal(e.Machines, st.Running)
	}
	machine := st.Machine
	if machine == "" {
		machine = "none"
	}
	return desc, passed, fmt.Sprintf("got state %s (desired %s), machine %s, running on [%s]", st.State, st.DesiredState, machine, strings.Join(st.Running, " "))
}

// checkObject checks a condition of a named object of some kind.
func (r *run) checkClusterProfile(e *scenarios.ClusterProfileExpectation) (string, bool, string) {
	_, ok := r.s.ClusterProfile(e.Name)
	if e.Gone {
		desc := fmt.Sprintf("member %s has no ClusterProfile", e.Name)
		if ok {
			return desc, false, "its ClusterProfile exists"
		}
		return desc, true, "no ClusterProfile"
	}
	return r.checkObject("the ClusterProfile of member", &scenarios.ObjectExpectation{Name: e.Name, Condition: e.Condition},
		func(name string) ([]sim.Condition, bool) {
			p, ok := r.s.ClusterProfile(name)
			return p.Conditions, ok
		})
}

func (r *run) checkObject(kind string, e *scenarios.ObjectExpectation, get func(string) ([]sim.Condition, bool)) (string, bool, string) {
	desc := fmt.Sprintf("%s %s has %s", kind, e.Name, describeCondition(e.Condition))
	conds, ok := get(e.Name)
	if !ok {
		return desc, false, fmt.Sprintf("%s %s does not exist", kind, e.Name)
	}
	passed, text := matchCondition(e.Condition, conds)
	return desc, passed, "got " + text
}

func describeCondition(c *scenarios.ConditionExpectation) string {
	if c == nil {
		return "no condition"
	}
	s := c.Type
	if c.Cluster != "" {
		s = c.Cluster + "'s " + s
	}
	if c.Status != "" {
		s += "=" + c.Status
	}
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	return s
}

func matchCondition(want *scenarios.ConditionExpectation, cs []sim.Condition) (bool, string) {
	if want == nil {
		return true, ""
	}
	c, ok := sim.ConditionOf(cs, want.Type)
	if !ok {
		return false, "no " + want.Type + " condition"
	}
	text := fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message)
	return (want.Status == "" || want.Status == c.Status) && (want.Reason == "" || want.Reason == c.Reason), text
}

// checkStatusObject compares a placement's ClusterResourcePlacementStatus with the
// expectation: its namespace, and conditions equal to the placement's but for StatusSynced.
func checkStatusObject(so *scenarios.StatusObjectExpectation, st sim.PlacementStatus) (bool, string) {
	m := st.StatusObject
	if m == nil {
		return so.Absent, "no ClusterResourcePlacementStatus"
	}
	text := fmt.Sprintf("a ClusterResourcePlacementStatus in %s", m.Namespace)
	if so.Absent || m.Namespace != so.Namespace {
		return false, text
	}
	var want, got []string
	for _, c := range st.Status.Conditions {
		if c.Type != status.TypePlacementStatusSynced {
			want = append(want, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
		}
	}
	for _, c := range m.Status.Conditions {
		got = append(got, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	if !slices.Equal(want, got) || len(m.Status.PlacementStatuses) != len(st.Status.PlacementStatuses) {
		return false, fmt.Sprintf("%s with conditions [%s] and %d cluster entries; the placement has [%s] and %d", text,
			strings.Join(got, " "), len(m.Status.PlacementStatuses), strings.Join(want, " "), len(st.Status.PlacementStatuses))
	}
	return true, text + " mirroring its status"
}
