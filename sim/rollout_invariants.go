package sim

// The rollout invariants (package model/invariants: maxUnavailable, maxSurge, tolerated
// and known picks, eviction budgets, convergence), checked against the simulator's store
// after every event. The simulator processes one reconcile (or one action, one message) per
// event, so "what changed in this event" is "what that one step did"; an AfterEvent hook
// keeps the copy of the state before each event (invariants.Rollout).

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/model/invariants"
)

// invTracker keeps the state before the event being processed, and the first violation.
//
// The rollout check is incremental (invariants.Rollout.CheckTouched): it looks only at the
// placements whose bindings the event changed, as the store's bindings versions tell. Every
// invVerifyEvery events and at the end of the run the incremental copy of the state is
// compared with a full one (invariants.Rollout.Verify), so a binding changed behind the
// store's versions stops the run instead of going unchecked.
type invTracker struct {
	rollout *invariants.Rollout
	// full, when set (tests), runs the full check next to the incremental one after every
	// event; any disagreement is a violation.
	full *invariants.Rollout
	// events counts the events checked, for the sampled verification.
	events uint64
	// err is the first violation; the run stops there.
	err error
	// extra are further checks run after every event (the test adds the simulator's named
	// invariants).
	extra []func() error
	// log keeps the last recorded events (heartbeats and work-apply/work-status plumbing
	// excluded) for failure reports, unformatted: most runs never report a failure, so a
	// line is only built when one is read (recent).
	log  []logEntry
	next int
}

// logEntry is one recorded event of the log.
type logEntry struct {
	at                    time.Duration
	kind, subject, detail string
}

func (e logEntry) String() string {
	return fmt.Sprintf("%s %s %s %s", e.at, e.kind, e.subject, e.detail)
}

const invLogSize = 400

// invVerifyEvery is how often (in events) the incremental rollout copy is verified. The
// verification copies every binding (a full snapshot), which at every 64th event was a
// tenth of a fuzz run's CPU; the incremental and full checks are proven to agree by
// TestIncrementalRolloutAgreesWithFull, so the sample only guards against a store change
// that forgets to move a version, which the check at the end of every run also catches.
const invVerifyEvery = 1024

// invWatch installs the invariant hooks: an observer keeping recent events for reports and
// an AfterEvent hook that runs every per-event invariant, stops the run at the first
// violation and then takes the copy of the state the next event is compared with.
func (s *Sim) invWatch() *invTracker {
	tr := &invTracker{log: make([]logEntry, 0, invLogSize), rollout: invariants.NewRollout(s.store)}
	s.Observe(func(at time.Duration, kind, subject, detail string) {
		if kind == "work-apply" || kind == "work-status" {
			return // plumbing: the binding conditions they lead to are recorded
		}
		line := logEntry{at: at, kind: kind, subject: subject, detail: detail}
		if len(tr.log) < invLogSize {
			tr.log = append(tr.log, line)
		} else {
			tr.log[tr.next] = line
			tr.next = (tr.next + 1) % invLogSize
		}
	})
	s.AfterEvent(func() {
		if tr.err != nil {
			return
		}
		if err := s.invCheckEvent(tr); err != nil {
			tr.err = fmt.Errorf("at %s: %w", s.now, err)
			s.Stop()
			return
		}
		tr.rollout.SnapshotTouched(s.store, s.store)
		if tr.full != nil {
			tr.full.Snapshot(s.store)
		}
		tr.events++
		if tr.events%invVerifyEvery == 0 || tr.full != nil {
			tr.verify(s)
		}
	})
	s.AtEnd(func() {
		if tr.err == nil {
			tr.verify(s)
		}
		if tr.err == nil {
			if err := invariants.PickNSettled(s.store); err != nil {
				tr.err = fmt.Errorf("at %s: %w", s.now, err)
			}
		}
	})
	return tr
}

// verify compares the incremental copy of the state with a full one.
func (tr *invTracker) verify(s *Sim) {
	if err := tr.rollout.Verify(s.store); err != nil {
		tr.err = fmt.Errorf("at %s: %w", s.now, err)
		s.Stop()
	}
}

// recent returns the last recorded events that mention any of words (all when none).
func (tr *invTracker) recent(limit int, words ...string) []string {
	ordered := append(slices.Clone(tr.log[tr.next:]), tr.log[:tr.next]...)
	var out []string
	for _, e := range ordered {
		l := e.String()
		if len(words) == 0 || slices.ContainsFunc(words, func(w string) bool { return strings.Contains(l, w) }) {
			out = append(out, l)
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}

// invCheckEvent runs the per-event invariants: the rollout budgets, then the extra checks.
func (s *Sim) invCheckEvent(tr *invTracker) error {
	err := tr.rollout.CheckTouched(s.store, s.store, s.newBindings, s.Now())
	if tr.full != nil {
		ferr := tr.full.Check(s.store, s.newBindings, s.Now())
		if fmt.Sprint(err) != fmt.Sprint(ferr) {
			return fmt.Errorf("the incremental rollout check found %v, the full one %v", err, ferr)
		}
	}
	if err != nil {
		return err
	}
	if tr.full != nil {
		if err := s.invCrossCheckNamed(); err != nil {
			return err
		}
	}
	for _, f := range tr.extra {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// invConverged checks convergence (invariants.Converged) now.
func (s *Sim) invConverged() error {
	if err := invariants.Converged(s.store, s.Now()); err != nil {
		return fmt.Errorf("at %s: %w", s.now, err)
	}
	return nil
}
