package sim

import (
	"fmt"
	"slices"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/invariants"
	"github.com/fleetsim/fleetsim/model/units"
)

// What the named invariants of CheckInvariant can skip after an event: a check that
// passed and whose inputs the event did not change passes again, so it is not run.
//
//   - oneBindingPerCluster reads every live binding: the store's bindings clock moves
//     whenever a binding is created, replaced or deleted, so while it stands still the
//     last pass holds (a placement created without bindings cannot break it).
//     noBindingsOnGoneMembers reads the bindings and the members: the bindings clock and
//     the store's member generation (which moves whenever a member is added or removed).
//   - The unit invariants read the fleet registry and the machines: with no unit and no
//     machine there is nothing for them to check; otherwise they share one reading of them
//     per event (unitViewNow).
//
// The other named invariants already look only at what the event created (pickNWithinLimit,
// noUntoleratedNewBindings, bindingsOnKnownMembers) or at staged runs, which most
// scenarios do not have.

// invMemo remembers, per invariant, the input version at its last pass, and the unit
// view of the event being checked (every unit invariant reads the same one).
type invMemo struct {
	passed map[string][2]uint64
	// view is read once in the after-event hooks of an event (inHooks), where nothing
	// changes between checks, and dropped after them.
	view    *cachedUnitView
	inHooks bool
	// beats is memberHeartbeatTimeout's memory of when each heartbeat arrived.
	beats invariants.HeartbeatWatch
	// health is memberReportedUnhealthy's memory of when each unhealthy report arrived.
	health invariants.HealthReportWatch
	// displace is noUnitDisplacedByGlobal's memory of where each unit last ran.
	displace invariants.DisplaceWatch
	// members is what the member invariants read (memberView).
	members memberView
	// beatsFull and healthFull (tests) run the member invariants on the store itself, for
	// invCrossCheckNamed.
	beatsFull  invariants.HeartbeatWatch
	healthFull invariants.HealthReportWatch
}

// memberView is the invariants.MemberReader of memberHeartbeatTimeout and
// memberReportedUnhealthy, which read every member after every event (a quarter of a fuzz
// run's CPU went there): the store's sorted names without the copy MemberClusterNames
// makes for other callers (the checks only range over them), and the records in the same
// order, so that a check reading them in name order gets each one without a map lookup.
// Both are kept while the member generation stands still (the store's only ways to add or
// remove a record move it, and a record is held by pointer). A read out of order falls
// back to the store.
type memberView struct {
	st    *store
	valid bool
	gen   uint64
	names []string
	recs  []*mhub.MemberCluster
	next  int
}

// memberViewNow returns the member view, current, for a check reading in name order.
func (s *Sim) memberViewNow() *memberView {
	v, st := &s.invMemo.members, s.store
	if !v.valid || v.gen != st.memberGen {
		v.st, v.valid, v.gen = st, true, st.memberGen
		v.names = sortedKeys(st.members)
		v.recs = make([]*mhub.MemberCluster, len(v.names))
		for i, n := range v.names {
			v.recs[i] = &st.members[n].MemberCluster
		}
	}
	v.next = 0
	return v
}

func (v *memberView) MemberClusterNames() []string { return v.names }

func (v *memberView) MemberCluster(name string) *mhub.MemberCluster {
	if i := v.next; i < len(v.names) && v.names[i] == name {
		v.next++
		return v.recs[i]
	}
	return v.st.MemberCluster(name)
}

// cachedUnitView is the unit invariants' view of the registry and machines, read once per
// event for all of them (nothing changes between the checks of one event).
type cachedUnitView struct {
	jobs     []units.Job
	machines []invariants.UnitMachine
}

func (v *cachedUnitView) Jobs() []units.Job                      { return v.jobs }
func (v *cachedUnitView) UnitMachines() []invariants.UnitMachine { return v.machines }

// unitViewNow returns the unit view of the current event.
func (s *Sim) unitViewNow() invariants.UnitReader {
	if !s.invMemo.inHooks {
		return unitView{s}
	}
	if s.invMemo.view == nil {
		v := unitView{s}
		s.invMemo.view = &cachedUnitView{jobs: v.Jobs(), machines: v.UnitMachines()}
	}
	return s.invMemo.view
}

// invKey returns the version of what a named invariant reads, and false when it has none
// (it is always run).
func (s *Sim) invKey(name string) ([2]uint64, bool) {
	switch name {
	case "oneBindingPerCluster":
		return [2]uint64{s.store.bindingsClock}, true
	case "noBindingsOnGoneMembers":
		return [2]uint64{s.store.bindingsClock, s.store.memberGen}, true
	}
	return [2]uint64{}, false
}

// invNothingToCheck: a unit invariant over no unit and no machine.
func (s *Sim) invNothingToCheck() bool {
	return len(s.fleet.units) == 0 && len(s.store.members) == len(s.store.clusters)
}

// memoized runs check unless the invariant passed at the current version of its input.
func (s *Sim) memoized(name string, check func() error) error {
	key, ok := s.invKey(name)
	if !ok {
		return check()
	}
	if s.invMemo.passed == nil {
		s.invMemo.passed = map[string][2]uint64{}
	}
	if k, done := s.invMemo.passed[name]; done && k == key {
		return nil
	}
	if err := check(); err != nil {
		delete(s.invMemo.passed, name)
		return err
	}
	s.invMemo.passed[name] = key
	return nil
}

// invCrossCheckNamed (tests) runs every named invariant both as CheckInvariant runs it
// (skipping what it may skip, reading the member view) and in full on the store, and
// reports any disagreement.
func (s *Sim) invCrossCheckNamed() error {
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range invariants.Checks {
			if !yield(n) {
				return
			}
		}
	}) {
		got, want := s.CheckInvariant(name), invariants.Checks[name](s.store, s.newBindings)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("invariant %s: the incremental check found %v, the full one %v", name, got, want)
		}
	}
	// The member invariants through the member view and on the store itself (each with its
	// own memory: checking twice in one event changes nothing).
	now, timeout := s.Now(), s.cfg.Eligibility.HeartbeatTimeout
	if got, want := s.CheckInvariant(invariants.HeartbeatTimeoutName), s.invMemo.beatsFull.Check(s.store, now, timeout, invariants.HeartbeatReaction); fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("invariant %s: the member view found %v, the store %v", invariants.HeartbeatTimeoutName, got, want)
	}
	if got, want := s.CheckInvariant(invariants.ReportedUnhealthyName), s.invMemo.healthFull.Check(s.store, now, invariants.HealthReaction); fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("invariant %s: the member view found %v, the store %v", invariants.ReportedUnhealthyName, got, want)
	}
	for name, f := range invariants.UnitChecks {
		if got, want := s.CheckInvariant(name), f(unitView{s}); fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("invariant %s: the incremental check found %v, the full one %v", name, got, want)
		}
	}
	return nil
}
