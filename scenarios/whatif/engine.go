package whatif

// The preview: the snapshot's scenario runs until the fleet has settled (the state "now"),
// the change is applied, the run goes on for a horizon, and the two states and what
// happened in between are compared.

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
	"github.com/fleetsim/fleetsim/sim"
)

// Defaults of Options.
const (
	DefaultSettle  = 15 * time.Minute
	DefaultHorizon = time.Hour
	// sampleEvery is how often availability is sampled after the change.
	sampleEvery = time.Second
)

// Options tune a preview.
type Options struct {
	// Settle is how long the snapshot's scenario runs after its last step before the change
	// (default 15m): long enough for the captured bindings to be rolled out again.
	Settle time.Duration
	// Horizon is how long the preview runs after the change (default 1h).
	Horizon time.Duration
	// HubModel, when set, is the calibrated model of the production hub (sim/timing) the
	// timeline is predicted with.
	HubModel *sim.HubModel
	// MaxUnavailable, when 0 or more, is the user's budget: no placement may have more
	// clusters unavailable at once.
	MaxUnavailable int
	// MustKeep are clusters that no placement that holds them now may lose.
	MustKeep []string
}

// BadInputError is a problem with the snapshot or a change file (exit code 2).
type BadInputError struct{ Err error }

func (e *BadInputError) Error() string { return e.Err.Error() }
func (e *BadInputError) Unwrap() error { return e.Err }

// Result is a preview run: the report and the two states it compares.
type Result struct {
	Report *Report
	Before State
	After  State
	// Steps are the change's steps as parsed, in the order they run.
	Steps []scenarios.Step
}

// Preview runs the snapshot scenario (snapshotPath, its text snapshot) with the changes.
func Preview(snapshotPath string, snapshot []byte, changes []*Change, opts Options) (*Result, error) {
	if opts.Settle <= 0 {
		opts.Settle = DefaultSettle
	}
	if opts.Horizon <= 0 {
		opts.Horizon = DefaultHorizon
	}
	if len(changes) == 0 {
		return nil, &BadInputError{errors.New("no change given")}
	}
	base, err := scenarios.Parse(snapshotPath, snapshot)
	if err != nil {
		return nil, &BadInputError{err}
	}
	var last time.Duration
	for _, st := range base.Timeline {
		last = max(last, st.At)
	}
	for _, g := range base.Members {
		last = max(last, g.JoinAt)
	}
	start := last + opts.Settle
	end := start + opts.Horizon
	for _, c := range changes {
		for _, o := range c.offsets {
			if o >= opts.Horizon {
				return nil, &BadInputError{fmt.Errorf("%s: a step at %s is beyond the horizon (%s)", c.Path, o, opts.Horizon)}
			}
		}
	}
	text, err := combine(snapshot, changes, start, end)
	if err != nil {
		return nil, &BadInputError{fmt.Errorf("%s: %w", snapshotPath, err)}
	}
	sc, err := scenarios.Parse(snapshotPath, text)
	if err != nil {
		return nil, &BadInputError{changeError(err, len(base.Timeline), changes)}
	}

	res := &Result{}
	for _, st := range sc.Timeline {
		if st.At >= start {
			for _, m := range st.Apply {
				serverDefaults(m.Object)
			}
			res.Steps = append(res.Steps, st)
		}
	}
	rec := newRecorder(start)
	captured, afterCaptured := false, false
	var simulator *sim.Sim
	inv := &invariantWatch{start: start, broken: map[string]bool{}}
	ropts := runner.Options{HubModel: opts.HubModel, Setup: func(s *sim.Sim, until time.Duration) {
		simulator = s
		s.Barrier(start-1, func() {
			res.Before, captured = Capture(s), true
			inv.watch(s)
		})
		s.AfterEvent(func() { inv.check(s) })
		for t := start; t <= until; t += sampleEvery {
			s.Barrier(t, func() { rec.sample(t, captureBindings(s)) })
		}
		s.Barrier(until, func() { res.After, afterCaptured = Capture(s), true })
		s.Observe(func(at time.Duration, kind, subject, detail string) {
			if at < start {
				return
			}
			switch kind {
			case "binding-waiting":
				p, _ := bindingOf(s, subject)
				rec.wait(at, p, subject, detail)
			case "binding-unscheduled":
				if p, c := bindingOf(s, subject); p != "" {
					rec.unscheduled[p+"/"+c] = detail
				}
			}
		})
	}}
	rep, err := runner.Run(sc, ropts)
	if err != nil {
		var re *runner.Error
		if errors.As(err, &re) && re.Line > 0 {
			return nil, &BadInputError{changeError(err, len(base.Timeline), changes)}
		}
		return nil, err
	}
	r := &Report{Snapshot: snapshotPath, ChangeAt: start.String(), Horizon: opts.Horizon.String(), Placements: []PlacementReport{}, Invariants: []Broken{}, Budgets: []Broken{}}
	for _, c := range changes {
		r.Changes = append(r.Changes, c.Path)
	}
	if sc.Initial != nil {
		for _, b := range sc.Initial.Bindings {
			if got := res.Before.Clusters(b.Placement); !slices.Equal(got, b.Clusters) {
				r.Warnings = append(r.Warnings, fmt.Sprintf("the simulator does not reproduce placement %s before the change: it holds %v, the snapshot %v", b.Placement, got, b.Clusters))
			}
		}
	}
	if !captured {
		return nil, fmt.Errorf("%s: the simulation stopped before the change (at %s)", snapshotPath, time.Duration(rep.SimulatedTime))
	}
	{
		at := time.Duration(rep.SimulatedTime)
		inv.finish(at)
		if !afterCaptured {
			// The rollout watch stopped the run at a violation: "after" is the state then.
			res.After = Capture(simulator)
			r.Warnings = append(r.Warnings, fmt.Sprintf("the simulation stopped at +%s, where an invariant broke: the state after the change is the state then", at-start))
		}
	}
	r.Invariants = append(r.Invariants, inv.found...)
	r.Placements = comparePlacements(res.Before, res.After, rec)
	r.Budgets = checkBudgets(r.Placements, res.Before, res.After, opts)
	r.Safe = len(r.Invariants) == 0 && len(r.Budgets) == 0
	res.Report = r
	return res, nil
}

// invariantWatch checks every invariant after every event from the change on (the
// snapshot's own start, seeding bindings the scheduler did not pick in this run, is not
// the change's doing) and keeps the first violation of each.
type invariantWatch struct {
	start   time.Duration
	rollout func() error
	broken  map[string]bool
	found   []Broken
}

func (w *invariantWatch) watch(s *sim.Sim) { w.rollout = s.WatchRollout() }

// finish catches a rollout violation found by the event the simulator stopped at (the
// rollout watch stops the run, possibly after this watch's check of that event).
func (w *invariantWatch) finish(at time.Duration) {
	if w.rollout == nil || w.broken["rolloutBudgets"] {
		return
	}
	if err := w.rollout(); err != nil {
		w.broken["rolloutBudgets"] = true
		w.found = append(w.found, Broken{Name: "rolloutBudgets", At: "+" + (at - w.start).String(), Detail: err.Error()})
	}
}

func (w *invariantWatch) check(s *sim.Sim) {
	if w.rollout == nil {
		return
	}
	for _, name := range scenarios.InvariantNames() {
		if w.broken[name] {
			continue
		}
		var err error
		if name == "rolloutBudgets" {
			err = w.rollout()
		} else {
			err = s.CheckInvariant(name)
		}
		if err != nil {
			w.broken[name] = true
			w.found = append(w.found, Broken{Name: name, At: "+" + (s.Elapsed() - w.start).String(), Detail: err.Error()})
		}
	}
}

// serverDefaults sets on a manifest of the change what the API server sets when it is
// created, so that the manifests predicted for the members are the ones the hub will select:
// a Namespace gets its kubernetes.io/metadata.name label and the kubernetes finalizer. (The
// snapshot's own resources already carry them: they come from the hub.)
func serverDefaults(o *unstructured.Unstructured) {
	if o.GetAPIVersion() != "v1" || o.GetKind() != "Namespace" {
		return
	}
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["kubernetes.io/metadata.name"] = o.GetName()
	o.SetLabels(labels)
	if _, found, _ := unstructured.NestedSlice(o.Object, "spec", "finalizers"); !found {
		_ = unstructured.SetNestedSlice(o.Object, []any{"kubernetes"}, "spec", "finalizers")
	}
}

// recorder follows the run after the change: availability samples and budget waits.
type recorder struct {
	start   time.Duration
	samples []sample
	waits   map[string][]Wait // by placement
	// unscheduled holds the scheduler's reason for each binding it unscheduled after the
	// change, by placement/cluster.
	unscheduled map[string]string
}

type sample struct {
	at    time.Duration
	state State
}

func newRecorder(start time.Duration) *recorder {
	return &recorder{start: start, waits: map[string][]Wait{}, unscheduled: map[string]string{}}
}

func (r *recorder) sample(at time.Duration, st State) {
	r.samples = append(r.samples, sample{at: at, state: st})
}

func (r *recorder) wait(at time.Duration, placementName, binding, reason string) {
	r.waits[placementName] = append(r.waits[placementName], Wait{At: "+" + (at - r.start).String(), Binding: binding, Reason: reason})
}

// bindingOf finds the placement and cluster of a binding (a rare look-up: budget waits
// and unscheduled bindings only).
func bindingOf(s *sim.Sim, binding string) (string, string) {
	for _, p := range s.Placements() {
		for _, b := range p.Bindings {
			if b.Name == binding {
				return p.Name, b.Cluster
			}
		}
	}
	return "", ""
}

// timeline computes a placement's predicted timeline from the samples. A cluster counts as
// unavailable while the placement has fewer ready bindings than it had before the change
// (capped at the clusters it holds in the end): a new placement or a new cluster disrupts
// nothing that was serving.
func (r *recorder) timeline(name string, before, after State) Timeline {
	tl := Timeline{ToAvailable: "never within the horizon"}
	final := after.Placements[name]
	want := 0
	if b := before.Placements[name]; b != nil {
		want = b.ready
	}
	if final != nil {
		want = min(want, len(final.Clusters))
	} else {
		want = 0
	}
	settled := -1
	for i, s := range r.samples {
		p := s.state.Placements[name]
		ready := 0
		if p != nil {
			ready = p.ready
		}
		tl.PeakUnavailable = max(tl.PeakUnavailable, want-ready)
		if done(p, final) {
			if settled < 0 {
				settled = i
			}
		} else {
			settled = -1
		}
	}
	if settled >= 0 {
		tl.ToAvailable = (r.samples[settled].at - r.start).String()
		tl.Available = true
	}
	tl.BudgetWaits = r.waits[name]
	return tl
}

// done: the placement holds its final clusters and every one is available (or it is gone
// and stays gone).
func done(p, final *PlacementState) bool {
	if final == nil || p == nil {
		return final == nil && p == nil
	}
	if !slices.Equal(sortedKeys(p.Clusters), sortedKeys(final.Clusters)) {
		return false
	}
	for _, c := range p.Clusters {
		if !c.Available {
			return false
		}
	}
	return true
}
