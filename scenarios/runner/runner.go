package runner

// Running a scenario: Run builds the simulator, schedules the scenario's members, steps,
// faults and checks, keeps the report's timeline of notable events, runs to the end and
// fills in the final state. What the steps do is actions.go; what the checks check is
// checks.go.

import (
	"fmt"
	"io"
	"time"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
)

// MaxSubjects caps the subjects named by one timeline entry (a million members joining at
// once is one entry, which counts the others in MoreSubjects); the JSONL trace names them
// all. Every notable event is kept in the report's timeline: text output shows the first
// ones and filters (Report.FilterTimeline) narrow it.
const MaxSubjects = 100

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
	// NoMeasures leaves out the run's measures (rollout durations, peaks, unhealthy
	// groups: Report.Measures), which sample every placement once per busy instant:
	// capacity plans measure runs of their own and skip that cost. A scenario with
	// rollout, peakUnavailable or unhealthy expectations is measured anyway.
	NoMeasures bool
	// HubModel, when set, is the calibrated hub model the run uses instead of the
	// scenario's hub: section or the simulator's default (`fleetsim run --calibration`,
	// capacity plans).
	HubModel *sim.HubModel
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
	"partition-started": true, "partition-ended": true,
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
	// measures takes the run's measures (nil with Options.NoMeasures).
	measures *measurer
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
	if opts.HubModel != nil {
		cfg.Hub, cfg.HubModel = nil, opts.HubModel
	}
	cfg.Propagation = sc.Propagation
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
		entry := TimelineEntry{At: Seconds(at), Kind: kind, Detail: detail}
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
	if err := r.seed(); err != nil {
		return nil, err
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
	var measured []*scenarios.Expectation
	for i := range sc.Expect {
		e := &sc.Expect[i]
		if e.Rollout != nil || e.Peak != nil || e.Unhealthy != nil {
			measured = append(measured, e)
			continue
		}
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
	if !opts.NoMeasures || len(measured) > 0 {
		r.watchMeasures()
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
	rep.TraceHash, rep.Events, rep.SimulatedTime = res.TraceHash, res.Events, Seconds(res.SimulatedTime)
	r.finalState()
	if r.measures != nil {
		for _, e := range measured {
			rep.Expectations = append(rep.Expectations, r.checkMeasured(e, until))
		}
		ms := r.measures.result(until)
		rep.Measures = &ms
	}
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

func (r *run) finalState() {
	for _, p := range r.s.Placements() {
		pr := PlacementReport{Name: p.Name, PolicySnapshot: p.PolicySnapshot, Wanted: p.Wanted, Clusters: p.Clusters,
			Conditions: conditions(p.Conditions), ObservedResourceIndex: p.Status.ObservedResourceIndex}
		if v, ok := r.s.Rollout(p.Name); ok {
			pr.ResourceSnapshot = v.LatestSnapshot
		}
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
	r.report.MemberGroups = r.memberGroups()
	if r.report.Placements == nil {
		r.report.Placements = []PlacementReport{}
	}
	if r.report.Members == nil {
		r.report.Members = []MemberReport{}
	}
}

// memberGroups sums up the members by `members` entry, then the others (created by
// MemberCluster manifests), from the member reports.
func (r *run) memberGroups() []MemberGroupSummary {
	groupOf := map[string]int{}
	out := make([]MemberGroupSummary, 0, len(r.sc.Members)+1)
	for i, g := range r.sc.Members {
		out = append(out, MemberGroupSummary{Group: groupLabel(g)})
		for _, n := range g.Names {
			groupOf[n] = i
		}
	}
	other := -1
	for _, m := range r.report.Members {
		i, ok := groupOf[m.Name]
		if !ok {
			if other < 0 {
				other = len(out)
				out = append(out, MemberGroupSummary{Group: "other"})
			}
			i = other
		}
		g := &out[i]
		g.Members++
		for _, c := range m.Conditions {
			switch {
			case c.Type == "Joined" && c.Status == "True":
				g.Joined++
			case c.Type == "Healthy" && c.Status == "True":
				g.Healthy++
			}
		}
		if len(m.Taints) > 0 {
			g.Tainted++
		}
		if m.Failure != "" {
			g.Failed++
		}
	}
	return out
}
