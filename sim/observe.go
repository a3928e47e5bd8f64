package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/model/placement"
)

// Observer sees every recorded event except heartbeats (which are only hashed), for
// timelines and progress reporting.
type Observer func(at time.Duration, kind, subject, detail string)

// Observe registers an observer of recorded events.
func (s *Sim) Observe(o Observer) { s.observers = append(s.observers, o) }

// Invariants the simulator can check after every event. Names match scenarios.Invariants.
var invariantChecks = map[string]func(*Sim) error{
	"oneBindingPerCluster":     (*Sim).checkOneBindingPerCluster,
	"pickNWithinLimit":         (*Sim).checkPickNWithinLimit,
	"noUntoleratedNewBindings": (*Sim).checkNewBindingsTolerated,
	"bindingsOnKnownMembers":   (*Sim).checkNewBindingsOnKnownMembers,
}

// InvariantNames lists the invariants CheckInvariant knows, sorted.
func InvariantNames() []string {
	var names []string
	for n := range invariantChecks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// CheckInvariant checks one named invariant against the current state.
func (s *Sim) CheckInvariant(name string) error {
	f, ok := invariantChecks[name]
	if !ok {
		return fmt.Errorf("unknown invariant %q", name)
	}
	return f(s)
}

func (s *Sim) checkOneBindingPerCluster() error {
	for _, crp := range s.store.PlacementNames() {
		seen := map[string]string{}
		for _, b := range s.store.byCRP[crp] {
			if b.Deleting || (b.State != placement.Scheduled && b.State != placement.Bound) {
				continue
			}
			if other, ok := seen[b.TargetCluster]; ok {
				return fmt.Errorf("placement %s has two live bindings on %s: %s and %s", crp, b.TargetCluster, other, b.Name)
			}
			seen[b.TargetCluster] = b.Name
		}
	}
	return nil
}

// checkPickNWithinLimit: the scheduler never picks beyond numberOfClusters. It looks at
// placements that gained a binding in this event: after a scale-in the snapshot is scaled
// before the scheduler unpicks the surplus, and that moment is not a violation.
func (s *Sim) checkPickNWithinLimit() error {
	checked := map[string]bool{}
	for _, nb := range s.newBindings {
		crp := nb.Placement
		if checked[crp] {
			continue
		}
		checked[crp] = true
		snap := s.store.latest(crp)
		if snap == nil || snap.Policy.Type() != placement.PickN {
			continue
		}
		live := 0
		for _, b := range s.store.byCRP[crp] {
			if b.Live() {
				live++
			}
		}
		if live > int(snap.NumberOfClusters) {
			return fmt.Errorf("PickN placement %s holds %d clusters after picking %s, more than numberOfClusters %d", crp, live, nb.TargetCluster, snap.NumberOfClusters)
		}
	}
	return nil
}

func (s *Sim) checkNewBindingsTolerated() error {
	for _, b := range s.newBindings {
		snap := s.store.latest(b.Placement)
		r := s.store.members[b.TargetCluster]
		if snap == nil || r == nil || snap.Policy.Type() == placement.PickFixed {
			continue
		}
		var tolerations []placement.Toleration
		if snap.Policy != nil {
			tolerations = snap.Policy.Tolerations
		}
		if i := placement.FirstUntolerated(r.Member.Taints, tolerations); i >= 0 {
			return fmt.Errorf("binding %s was created on %s, whose taint %s placement %s does not tolerate", b.Name, b.TargetCluster, r.Member.Taints[i], b.Placement)
		}
	}
	return nil
}

func (s *Sim) checkNewBindingsOnKnownMembers() error {
	for _, b := range s.newBindings {
		r := s.store.members[b.TargetCluster]
		switch {
		case r == nil:
			return fmt.Errorf("binding %s was created on %s, which is not a member", b.Name, b.TargetCluster)
		case r.Member.Leaving:
			return fmt.Errorf("binding %s was created on %s, which is leaving", b.Name, b.TargetCluster)
		}
	}
	return nil
}
