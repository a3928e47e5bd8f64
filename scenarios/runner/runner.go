package runner

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/model/status"
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
)

// MaxTimeline caps the notable events kept in a report, and MaxSubjects the subjects named
// by one entry (a million members joining at once is one entry); the JSONL trace has them all.
const (
	MaxTimeline = 500
	MaxSubjects = 100
)

// Options override what the scenario file says.
type Options struct {
	Seed  *uint64
	Until *time.Duration
	// Trace receives the JSONL event log.
	Trace io.Writer
	// Progress, when set, is called as simulated time advances (about every 1% of the run).
	Progress func(done, total time.Duration)
	// TolerateStepErrors records a timeline step that cannot run (an approval whose request
	// a fault prevented) as a step-failed event and goes on, instead of ending the run: for
	// the fuzzer, whose faults may legitimately leave a scripted step nothing to act on.
	TolerateStepErrors bool
	// Setup, when set, sees the simulation before it starts (with the run's length), to
	// attach observers, barriers and counters (capacity plans measure runs this way).
	Setup func(s *sim.Sim, until time.Duration)
}

// Error is a problem found while running a scenario that is the scenario's fault, such as a
// step naming a member that has already left. It names the file and line.
type Error struct {
	Path   string
	Line   int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Reason) }

// notable are the event kinds shown in a report's timeline.
var notable = map[string]bool{
	"member-created": true, "member-condition": true, "member-failed": true, "member-healed": true,
	"member-left": true, "member-changed": true, "member-tainted": true, "clock-skew": true,
	"placement-created": true, "placement-updated": true, "placement-deleted": true, "placement-condition": true,
	"policy-snapshot-created": true, "policy-snapshot-scaled": true,
	"binding-scheduled": true, "binding-repicked": true, "binding-unscheduled": true, "binding-rolled": true,
	"binding-deleted": true, "binding-waiting": true, "binding-condition": true, "placement-status": true, "workload-behavior": true, "member-edit": true,
	"override-snapshot-created": true, "eviction-created": true, "eviction-condition": true,
	"unit-submit": true, "unit-load": true, "unit-start": true, "unit-stop": true, "unit-unload": true, "unit-destroyed": true,
	"unit-scheduled": true, "unit-unscheduled": true, "unit-unschedulable": true, "unit-duplicate": true, "unit-duplicate-ended": true,
	"engine-lease-acquired": true, "engine-write-rejected": true, "systemd-start": true, "systemd-stop": true, "systemd-task-failed": true,
	"staged-run-created": true, "staged-run-condition": true, "approval-requested": true, "approval-approved": true,
	"hub-stopped": true, "hub-started": true, "apply-rejected": true, "resource-applied": true, "resource-deleted": true,
	"resource-snapshot-created": true, "placement-selection-failed": true,
}

type run struct {
	sc       *scenarios.Scenario
	tolerate bool
	s        *sim.Sim
	report   *Report
	err      error
	// groupAt and groups merge same-instant timeline events of one kind and detail.
	groupAt time.Duration
	groups  map[string]int
}

// Run runs a scenario to its end and reports.
func Run(sc *scenarios.Scenario, opts Options) (*Report, error) {
	seed := sc.Seed
	if opts.Seed != nil {
		seed = *opts.Seed
	}
	until := sc.Duration
	if opts.Until != nil {
		until = *opts.Until
	}
	cfg := sim.Config{Seed: seed, Trace: opts.Trace}
	if nw := sc.Network; nw != nil {
		cfg.Network = sim.Network{
			Delay: sim.Distribution{Kind: sim.DistributionKind(nw.Distribution), Mean: nw.Mean, Min: nw.Min, Max: nw.Max},
			Loss:  nw.Loss,
		}
	}
	if hc := sc.Hub; hc != nil {
		cfg.Hub = &sim.HubCapacity{Workers: hc.Workers, QPS: hc.QPS, Burst: hc.Burst, CallsPerDecision: hc.CallsPerDecision, DecisionTime: hc.DecisionTime}
	}
	s, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.Path, err)
	}
	r := &run{sc: sc, s: s, groupAt: -1, tolerate: opts.TolerateStepErrors,
		report: &Report{Scenario: sc.Name, File: sc.Path, Seed: seed, Expectations: []ExpectationResult{}, Invariants: []InvariantResult{}, Timeline: []TimelineEntry{}}}
	s.Observe(func(at time.Duration, kind, subject, detail string) {
		if !notable[kind] {
			return
		}
		tl := r.report.Timeline
		if at != r.groupAt {
			r.groupAt, r.groups = at, map[string]int{}
		}
		if i, ok := r.groups[kind+"\x00"+detail]; ok {
			if len(tl[i].Subjects) < MaxSubjects {
				tl[i].Subjects = append(tl[i].Subjects, subject)
			} else {
				tl[i].MoreSubjects++
			}
			return
		}
		if len(tl) >= MaxTimeline {
			r.report.TimelineDropped++
			return
		}
		entry := TimelineEntry{At: at.String(), Kind: kind, Detail: detail}
		if subject != "" {
			entry.Subjects = []string{subject}
		}
		r.groups[kind+"\x00"+detail] = len(tl)
		r.report.Timeline = append(tl, entry)
	})
	for _, g := range sc.Members {
		if err := r.scheduleGroup(g); err != nil {
			return nil, err
		}
	}
	for i := range sc.Timeline {
		st := &sc.Timeline[i]
		if st.At > until {
			r.report.SkippedSteps++
			continue
		}
		s.At(st.At, "step-"+string(st.Action), func() { r.step(st) })
	}
	if f := sc.Faults; f != nil {
		modes := make([]sim.FailMode, 0, len(f.Modes))
		for _, m := range f.Modes {
			modes = append(modes, sim.FailMode(m))
		}
		faultsUntil := f.Until
		if faultsUntil == 0 {
			faultsUntil = until * 3 / 4
		}
		// Drawn once members exist, so "every member" means every member the scenario declares.
		lastJoin := time.Duration(0)
		for _, g := range sc.Members {
			lastJoin = max(lastJoin, g.JoinAt)
		}
		s.At(lastJoin, "faults-drawn", func() {
			if err := s.RandomFaults(sim.RandomFaults{MeanTimeBetweenFailures: f.MeanTimeBetweenFailures, MeanDuration: f.MeanDuration, Modes: modes, Until: faultsUntil}); err != nil {
				r.fail(f.Line, err.Error())
			}
		})
	}
	r.watchInvariants()
	for i := range sc.Expect {
		e := &sc.Expect[i]
		at := e.At
		if e.AtEnd {
			at = until
		}
		if at > until {
			r.report.SkippedExpectations++
			continue
		}
		s.Barrier(at, func() { r.check(e, at) })
	}
	if opts.Setup != nil {
		opts.Setup(s, until)
	}
	if opts.Progress != nil {
		step := max(until/100, time.Second)
		for t := step; t < until; t += step {
			s.Barrier(t, func() { opts.Progress(t, until) })
		}
	}
	res, err := s.Run(until)
	if err != nil {
		return nil, fmt.Errorf("%s: writing the trace: %w", sc.Path, err)
	}
	if r.err != nil {
		return nil, r.err
	}
	rep := r.report
	rep.TraceHash, rep.Events, rep.SimulatedTime = res.TraceHash, res.Events, res.SimulatedTime.String()
	r.finalState()
	rep.Passed = true
	for _, e := range rep.Expectations {
		rep.Passed = rep.Passed && e.Passed
	}
	for _, i := range rep.Invariants {
		rep.Passed = rep.Passed && i.Passed
	}
	return rep, nil
}

// fail stops the run with an error that points at the scenario file.
func (r *run) fail(line int, reason string) {
	if r.err == nil {
		r.err = &Error{Path: r.sc.Path, Line: line, Reason: reason}
	}
	r.s.Stop()
}

func (r *run) scheduleGroup(g scenarios.MemberGroup) error {
	props := map[string]resource.Quantity{}
	for k, v := range g.Properties {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return &Error{Path: r.sc.Path, Line: g.Line, Reason: fmt.Sprintf("property %s: %v", k, err)}
		}
		props[k] = q
	}
	labels := map[string]string{}
	for k, v := range g.Labels {
		labels[k] = v
	}
	if g.Kind == member.KindMachine {
		// Machine metadata doubles as labels, so placement selectors can use it too.
		for k, vs := range g.Metadata {
			if len(vs) > 0 {
				labels[k] = vs[0]
			}
		}
	}
	// One event adds the whole group, in name order: a group of 100,000 members does not
	// hold 100,000 pending closures.
	r.s.At(g.JoinAt, "step-members", func() {
		for _, name := range g.Names {
			spec := sim.MemberSpec{Name: name, Kind: g.Kind, Labels: labels, Taints: g.Taints, Properties: props, Resources: g.Resources, HeartbeatPeriod: g.HeartbeatPeriod}
			if err := r.s.AddMember(spec); err != nil {
				r.fail(g.Line, err.Error())
				return
			}
		}
	})
	return nil
}

func (r *run) step(st *scenarios.Step) {
	s := r.s
	var err error
	switch st.Action {
	case scenarios.ActionApply:
		for _, m := range st.Apply {
			if aerr := r.apply(m); aerr != nil {
				s.Record("apply-rejected", resources.ObjectName(m.Object), fmt.Sprintf("line %d: %v", m.Line, aerr))
			}
		}
	case scenarios.ActionDelete:
		err = r.delete(st.Delete)
	case scenarios.ActionFail:
		err = s.Fail(st.Fail.Member, sim.FailMode(st.Fail.Mode))
	case scenarios.ActionHeal:
		err = s.Heal(st.Heal.Member)
	case scenarios.ActionTaint:
		err = s.Taint(st.Taint.Member, st.Taint.Taint)
	case scenarios.ActionUntaint:
		err = s.Untaint(st.Untaint.Member, st.Untaint.Key)
	case scenarios.ActionLabel:
		err = s.Label(st.Label.Member, st.Label.Set, st.Label.Remove)
	case scenarios.ActionRestartHub:
		s.RestartHub()
	case scenarios.ActionWorkload:
		w := st.Workload
		err = s.SetWorkload(sim.Workload{Member: w.Member, Kind: w.Kind, Name: w.Name, Namespace: w.Namespace, Image: w.Image, Behavior: sim.WorkloadBehavior(w.Behavior)})
	case scenarios.ActionApprove:
		err = s.Approve(st.Approve.Name)
	case scenarios.ActionSkew:
		err = s.SetClockSkew(st.Skew.Member, st.Skew.Offset)
	case scenarios.ActionFleetctl:
		err = s.Fleetctl(string(st.Fleetctl.Command), st.Fleetctl.Unit, st.Fleetctl.File)
	case scenarios.ActionMemberEdit:
		err = s.EditMemberObject(st.MemberEdit.Member, st.MemberEdit.Object)
	default:
		err = fmt.Errorf("unknown action %q", st.Action)
	}
	if err != nil {
		field := string(st.Action)
		if st.Field != "" {
			field = st.Field + "." + field
		}
		if r.tolerate {
			s.Record("step-failed", field, fmt.Sprintf("line %d: %v", st.Line, err))
			return
		}
		r.fail(st.Line, fmt.Sprintf("%s: the step at %s failed: %v", field, st.At, err))
	}
}

func (r *run) apply(m scenarios.Manifest) error {
	o := m.Object
	switch o.GetKind() {
	case placement.KindPlacement:
		var crp placement.ClusterResourcePlacement
		if err := decodeInto(o, &crp); err != nil {
			return err
		}
		return r.s.ApplyPlacement(crp)
	case "MemberCluster":
		return r.applyMemberCluster(o)
	case override.KindClusterResourceOverride:
		var cro override.ClusterResourceOverride
		if err := decodeInto(o, &cro); err != nil {
			return err
		}
		return r.s.ApplyClusterResourceOverride(cro)
	case override.KindResourceOverride:
		var ro override.ResourceOverride
		if err := decodeInto(o, &ro); err != nil {
			return err
		}
		return r.s.ApplyResourceOverride(ro)
	case eviction.KindEviction:
		var e eviction.Eviction
		if err := decodeInto(o, &e); err != nil {
			return err
		}
		return r.s.ApplyEviction(e)
	case eviction.KindDisruptionBudget:
		var b eviction.DisruptionBudget
		if err := decodeInto(o, &b); err != nil {
			return err
		}
		return r.s.ApplyDisruptionBudget(b)
	case staged.KindStrategy, staged.KindRun:
		return r.s.ApplyStaged(o)
	default:
		return r.s.ApplyResource(o)
	}
}

// decodeInto converts an unstructured manifest into a typed object, refusing unknown fields
// as the API server does.
func decodeInto(o *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true)
}

func (r *run) applyMemberCluster(o *unstructured.Unstructured) error {
	var spec struct {
		Spec struct {
			HeartbeatPeriodSeconds int            `json:"heartbeatPeriodSeconds"`
			Taints                 []member.Taint `json:"taints"`
			DeleteOptions          *struct {
				ValidationMode member.DeleteValidationMode `json:"validationMode"`
			} `json:"deleteOptions"`
		} `json:"spec"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &spec); err != nil {
		return err
	}
	name := o.GetName()
	var validation member.DeleteValidationMode
	if d := spec.Spec.DeleteOptions; d != nil {
		validation = d.ValidationMode
	}
	if cur, ok := r.s.Member(name); ok {
		if err := r.s.SetDeleteValidation(name, validation); err != nil {
			return err
		}
		// An update, like kubectl apply: the manifest's labels and taints replace the
		// member's, so ones left out are removed. They are what scheduling sees change.
		var removed []string
		for _, k := range slices.Sorted(maps.Keys(cur.Labels)) {
			if _, keep := o.GetLabels()[k]; !keep {
				removed = append(removed, k)
			}
		}
		if err := r.s.Label(name, o.GetLabels(), removed); err != nil {
			return err
		}
		for _, t := range cur.Taints {
			if !slices.ContainsFunc(spec.Spec.Taints, func(n member.Taint) bool { return n.Key == t.Key }) {
				if err := r.s.Untaint(name, t.Key); err != nil {
					return err
				}
			}
		}
		for _, t := range spec.Spec.Taints {
			if t.Effect == "" {
				t.Effect = member.NoSchedule
			}
			if slices.Contains(cur.Taints, t) {
				continue
			}
			if err := r.s.Taint(name, t); err != nil {
				return err
			}
		}
		return nil
	}
	return r.s.AddMember(sim.MemberSpec{
		Name: name, Kind: member.KindCluster, Labels: o.GetLabels(), Taints: spec.Spec.Taints,
		HeartbeatPeriod:  time.Duration(spec.Spec.HeartbeatPeriodSeconds) * time.Second,
		DeleteValidation: validation,
	})
}

func (r *run) delete(ref *scenarios.ObjectRef) error {
	switch ref.Kind {
	case placement.KindPlacement:
		return r.s.DeletePlacement(ref.Name)
	case "MemberCluster":
		return r.s.DeleteMember(ref.Name)
	case eviction.KindEviction:
		return r.s.DeleteEviction(ref.Name)
	case eviction.KindDisruptionBudget:
		return r.s.DeleteDisruptionBudget(ref.Name)
	}
	return r.s.DeleteResource(ref.Kind, ref.Namespace, ref.Name)
}

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
	r.s.AfterEvent(func() {
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
	})
}

func (r *run) check(e *scenarios.Expectation, at time.Duration) {
	res := ExpectationResult{Line: e.Line, At: at.String()}
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

func (r *run) finalState() {
	for _, p := range r.s.Placements() {
		pr := PlacementReport{Name: p.Name, PolicySnapshot: p.PolicySnapshot, Wanted: p.Wanted, Clusters: p.Clusters,
			Conditions: conditions(p.Conditions), ObservedResourceIndex: p.Status.ObservedResourceIndex}
		for _, cs := range p.Status.PlacementStatuses {
			pr.PlacementStatuses = append(pr.PlacementStatuses, ClusterStatusReport{ClusterName: cs.ClusterName, Conditions: conditions(sim.ConditionsOf(cs.Conditions)), FailedPlacements: cs.FailedPlacements})
		}
		r.report.Placements = append(r.report.Placements, pr)
	}
	for _, e := range r.s.Evictions() {
		r.report.Evictions = append(r.report.Evictions, ObjectReport{Name: e.Name, Conditions: conditions(e.Conditions)})
	}
	r.report.Units = r.s.Units()
	for _, u := range r.s.UpdateRuns() {
		r.report.UpdateRuns = append(r.report.UpdateRuns, ObjectReport{Name: u.Name, Conditions: conditions(u.Conditions)})
	}
	// One member at a time: a million members are not copied twice.
	names := r.s.MemberNames()
	r.report.Members = make([]MemberReport, 0, len(names))
	for _, n := range names {
		m, _ := r.s.Member(n)
		r.report.Members = append(r.report.Members, MemberReport{
			Name: m.Name, Kind: m.Kind, Conditions: conditions(m.Conditions), Taints: m.Taints,
			Eligible: m.Eligible, IneligibleReason: m.IneligibleReason, Failure: m.Failure, Leaving: m.Leaving,
		})
	}
	if r.report.Placements == nil {
		r.report.Placements = []PlacementReport{}
	}
	if r.report.Members == nil {
		r.report.Members = []MemberReport{}
	}
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
