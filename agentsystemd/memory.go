package agentsystemd

import (
	"fmt"
	"sort"
	"sync"
)

// Memory is what a fleet agent remembers between its rounds: for each unit, the target state
// it has acted on and for which content (Acted). Upstream fleet's agent kept the same record
// (its agent cache) and published it as the unit's current state; here it serves two
// decisions:
//
//   - the current state the agent reports (CurrentUnit.State, UnitState.Current) is the state
//     it has acted on, so fleet's clients, which wait for an exact current state, see
//     launched once the agent has started a unit (or found it cannot: a unit systemd rejects
//     is launched too) and loaded once it has stopped one, whatever systemd did next;
//   - Decide starts a launched unit once per change of its desired state or content, not
//     again in every round after it fails (no restart storm), and does not stop a loaded unit
//     that systemd itself started.
//
// A new agent starts with an empty Memory: its first round acts on every unit again, and
// units already in their target state need nothing. The zero value is ready to use; a Memory
// must not be copied once used. Its methods may be called concurrently, but an agent's rounds
// are meant to run one at a time (two concurrent rounds would each act on what they saw).
type Memory struct {
	mu    sync.Mutex
	acted map[string]Acted
}

// Acted returns what the agent last acted on for the unit; zero if nothing.
func (m *Memory) Acted(name string) Acted {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acted[name]
}

// Recall returns current with each unit's Acted set from the memory (a copy: current is not
// modified).
func (m *Memory) Recall(current []CurrentUnit) []CurrentUnit {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]CurrentUnit, len(current))
	for i, c := range current {
		c.Acted = m.acted[c.Name]
		out[i] = c
	}
	return out
}

// Learn records the outcome of a round: plan is what Decide returned for desired and done
// the tasks Apply completed (a prefix of plan). A unit whose tasks all completed, or that had
// none, has been acted on: a desired unit with target loaded or launched is remembered at
// that state for its desired content, any other unit is forgotten. A unit with a task that
// did not run, or whose file was written or removed without the daemon-reload that follows
// completing, keeps what was remembered, so the next round acts on it again.
//
// The one exception is a start at which the round stopped: systemd was asked to start the
// unit and refused or failed it, and that counts as acted on (upstream's agent recorded
// launched before it asked systemd and never looked at the answer). A failing start is so
// made once per desired-state change, like any other.
//
// Desired entries that Decide ignores (DesiredUnit.Validate) leave the memory as it was.
func (m *Memory) Learn(desired []DesiredUnit, plan Plan, done []Task) {
	if len(done) > len(plan) {
		done = plan
	}
	pending := plan[len(done):]
	unfinished := map[string]bool{}
	reloadPending := false
	for i, t := range pending {
		switch {
		case i == 0 && t.Kind == TaskStart:
			// asked of systemd: acted on (see above)
		case t.Kind == TaskDaemonReload:
			reloadPending = true
		default:
			unfinished[t.Unit] = true
		}
	}
	if reloadPending {
		for _, t := range plan {
			if t.Kind == TaskLoad || t.Kind == TaskUnload {
				unfinished[t.Unit] = true
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acted == nil {
		m.acted = map[string]Acted{}
	}
	want := indexDesired(desired)
	for _, name := range sortedNames(want) {
		d := want[name]
		if d.check() != nil || unfinished[name] {
			continue
		}
		if d.State == TargetInactive {
			delete(m.acted, name)
			continue
		}
		m.acted[name] = Acted{State: d.State, Hash: d.EffectiveHash()}
	}
	for name := range m.acted {
		if _, ok := want[name]; !ok && !unfinished[name] {
			delete(m.acted, name)
		}
	}
}

// Reconcile runs one round as Reconcile does, deciding with what the memory recalls, and
// learns from its outcome.
func (m *Memory) Reconcile(desired []DesiredUnit, sys Systemd) (plan Plan, done []Task, err error) {
	current, err := sys.Units()
	if err != nil {
		return nil, nil, fmt.Errorf("list units: %w", err)
	}
	plan = Decide(desired, m.Recall(current))
	done, err = Apply(plan, sys.Run)
	m.Learn(desired, plan, done)
	return plan, done, err
}

// ReportStates is ReportStates with each unit's current state the one the agent has acted on.
func (m *Memory) ReportStates(current []CurrentUnit, machineID string) []UnitState {
	return ReportStates(m.Recall(current), machineID)
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
