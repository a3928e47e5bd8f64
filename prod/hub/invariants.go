package hub

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	"github.com/fleetsim/fleetsim/model/invariants"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Invariant checks on the live hub (Options.CheckInvariants, `fleet hub
// --check-invariants`): after each decision that wrote successfully, the hub evaluates the
// fleet invariants of model/invariants, the same checks the simulator runs after every
// event, on the decision's state (read from the informer cache, then changed by the
// decision). A violation is reported as a log line, a Warning event on the placement and
// fleetsim_invariant_violations_total{invariant}; the hub goes on deciding.
//
//   - The rollout budgets (invariants.Rollout: maxUnavailable, maxSurge, tolerated and known
//     picks, eviction budgets) compare the decision's state with a copy taken before it, in
//     decisions that read all of a placement's bindings.
//   - The state checks (invariants.Checks: one binding per cluster, PickN within its limit,
//     staged-run order, approvals and maxConcurrency) read the state after the decision;
//     those about new bindings (no untolerated taint, known members) see the bindings the
//     decision created and the bindings someone else wrote since the hub last looked at the
//     placement (a binding written directly through the API is new to the hub).
//
// A violation of a state check is reported once while it lasts (with the same detail),
// not at every decision that still sees it.

// eventNoteMax bounds an event's note (the API refuses more than 1 kB).
const eventNoteMax = 1000

// invariantChecker is the hub's memory for the checks; decisions run in parallel.
type invariantChecker struct {
	mu sync.Mutex
	// seen are the bindings the checker saw, by placement; a placement is in seen once a
	// decision read all its bindings.
	seen map[string]map[string]bool
	// reported holds the detail last reported per placement and state check.
	reported map[string]map[string]string
}

func newInvariantChecker() *invariantChecker {
	for _, n := range invariantNames() {
		invariantViolations.WithLabelValues(n) // present at 0 from the start
	}
	return &invariantChecker{seen: map[string]map[string]bool{}, reported: map[string]map[string]string{}}
}

// invariantNames are the names the hub reports under: the state checks and the rollout
// budgets.
func invariantNames() []string {
	names := append(slices.Collect(maps.Keys(invariants.Checks)), "maxUnavailable", "maxSurge", "tolerated", "evictionBudget")
	slices.Sort(names)
	return names
}

// invariantProbe is what the checker keeps of a decision's state before the decision.
type invariantProbe struct {
	rollout *invariants.Rollout // nil unless the decision reads all of a placement's bindings
	before  map[string]bool     // binding names
}

// before is called on the state as loaded, before the decision.
func (ic *invariantChecker) before(st *state) *invariantProbe {
	p := &invariantProbe{before: map[string]bool{}}
	for n := range st.bindings {
		p.before[n] = true
	}
	if st.scope.allBindings && !st.scope.bindingOnly() {
		p.rollout = invariants.NewRollout(st)
	}
	return p
}

// violation is one failed check.
type violation struct {
	invariant, detail string
	lasting           bool // a state check: reported once while it lasts
}

// after runs the checks on the state after the decision and returns what to report.
func (ic *invariantChecker) after(st *state, p *invariantProbe, now time.Time) []violation {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	crp := st.scope.placement
	var created []placement.Binding
	seen, known := ic.seen[crp]
	for _, name := range slices.Sorted(maps.Keys(st.bindings)) {
		b := st.bindings[name]
		if b.Placement != crp {
			continue
		}
		if !p.before[name] || (known && !seen[name]) {
			created = append(created, *b)
		}
	}
	var out []violation
	if p.rollout != nil {
		if err := p.rollout.Check(st, created, now); err != nil {
			out = append(out, violation{invariant: invariantOf(err, "rolloutBudgets"), detail: err.Error()})
		}
	}
	reported := ic.reported[crp]
	if reported == nil {
		reported = map[string]string{}
		ic.reported[crp] = reported
	}
	for _, name := range slices.Sorted(maps.Keys(invariants.Checks)) {
		err := invariants.Checks[name](scoped{st}, created)
		if err == nil {
			delete(reported, name)
			continue
		}
		if reported[name] == err.Error() {
			continue
		}
		reported[name] = err.Error()
		out = append(out, violation{invariant: name, detail: err.Error(), lasting: true})
	}
	if len(reported) == 0 {
		delete(ic.reported, crp)
	}
	// Remember what this decision saw. A decision that read all the placement's bindings
	// starts the placement's record afresh (forgetting bindings that are gone); one about a
	// single binding adds to it once there is one.
	switch {
	case st.scope.allBindings:
		seen = map[string]bool{}
		ic.seen[crp] = seen
	case !known:
		return out
	}
	for name, b := range st.bindings {
		if b.Placement == crp {
			seen[name] = true
		}
	}
	return out
}

// scoped is a decision's state as the state checks read it: of the staged update runs, only
// the one the decision is about, whose approval requests are the ones loaded.
type scoped struct{ *state }

func (s scoped) UpdateRunNames() []string {
	if s.scope.run == "" || s.runs[s.scope.run] == nil {
		return nil
	}
	return []string{s.scope.run}
}

// invariantOf reads the name from an "invariant NAME: ..." error.
func invariantOf(err error, def string) string {
	if rest, ok := strings.CutPrefix(err.Error(), "invariant "); ok {
		if name, _, ok := strings.Cut(rest, ":"); ok && !strings.Contains(name, " ") {
			return name
		}
	}
	return def
}

// report logs a violation, counts it and records it as a Warning event on the placement.
func (h *Hub) reportViolation(st *state, log logr.Logger, v violation) {
	crp := st.scope.placement
	invariantViolations.WithLabelValues(v.invariant).Inc()
	log.Error(errors.New(v.detail), "invariant violated", "invariant", v.invariant, "placement", crp)
	if obj := st.crps[crp]; obj != nil && h.Events != nil {
		note := v.invariant + ": " + strings.TrimPrefix(v.detail, "invariant "+v.invariant+": ")
		if len(note) > eventNoteMax {
			note = note[:eventNoteMax-3] + "..."
		}
		// The action names the invariant: the recorder folds events that differ only in
		// their note into one series, which would hide a second invariant's violation.
		h.Events.Eventf(obj, nil, corev1.EventTypeWarning, "InvariantViolated", v.invariant, "%s", note)
	}
}
