package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/model/invariants"
)

// Observer sees every recorded event except heartbeats (which are only hashed), for
// timelines and progress reporting.
type Observer func(at time.Duration, kind, subject, detail string)

// Observe registers an observer of recorded events.
func (s *Sim) Observe(o Observer) { s.observers = append(s.observers, o) }

// InvariantNames lists the invariants CheckInvariant knows, sorted.
func InvariantNames() []string {
	return slices.Sorted(slices.Values(append(invariants.Names(), invariants.HeartbeatTimeoutName, invariants.ReportedUnhealthyName, invariants.GlobalDisplacesName)))
}

// CheckInvariant checks one named invariant (package model/invariants) against the current
// state and the bindings the event being processed created; unit invariants read the fleet
// registry and what each machine's systemd runs.
func (s *Sim) CheckInvariant(name string) error {
	if f, ok := invariants.Checks[name]; ok {
		return s.memoized(name, func() error { return f(s.store, s.newBindings) })
	}
	if name == invariants.HeartbeatTimeoutName {
		return s.invMemo.beats.Check(s.memberViewNow(), s.Now(), s.cfg.Eligibility.HeartbeatTimeout, invariants.HeartbeatReaction)
	}
	if name == invariants.ReportedUnhealthyName {
		return s.invMemo.health.Check(s.memberViewNow(), s.Now(), invariants.HealthReaction)
	}
	if name == invariants.GlobalDisplacesName {
		if s.invNothingToCheck() {
			return nil
		}
		return s.invMemo.displace.Check(s.unitViewNow())
	}
	if f, ok := invariants.UnitChecks[name]; ok {
		if s.invNothingToCheck() {
			return nil
		}
		return f(s.unitViewNow())
	}
	return fmt.Errorf("unknown invariant %q", name)
}
