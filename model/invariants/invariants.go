package invariants

import (
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/model/eviction"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
)

// Reader is what the checks read from a hub store; every model/hub.Store is one (the
// simulator's store, and a production hub's decision state read from its informer cache).
type Reader interface {
	PlacementNames() []string
	Placement(name string) *mhub.Placement
	Binding(name string) *placement.Binding
	Bindings(placement string) []*placement.Binding
	MemberCluster(name string) *mhub.MemberCluster
	Works(binding string) []*mhub.Work
	EvictionNames() []string
	Eviction(name string) *eviction.Eviction
	DisruptionBudget(name string) *eviction.DisruptionBudget
	UpdateRunNames() []string
	UpdateRun(name string) *staged.ClusterStagedUpdateRun
	ApprovalRequests(run string) []*staged.ClusterApprovalRequest
}

var _ Reader = mhub.Store(nil)

// Check is one invariant: it sees the store after a step and the bindings the step created.
type Check func(st Reader, created []placement.Binding) error

// Checks are the hub-store invariants by the names scenarios' `always` accepts. The unit
// invariants are UnitChecks; `rolloutBudgets`, which needs the state before each step, is
// Rollout.
var Checks = map[string]Check{
	"oneBindingPerCluster":     OneBindingPerCluster,
	"pickNWithinLimit":         PickNWithinLimit,
	"topologySpread":           TopologySpread,
	"preferredAffinity":        PreferredAffinity,
	"noUntoleratedNewBindings": NoUntoleratedNewBindings,
	"bindingsOnKnownMembers":   BindingsOnKnownMembers,
	"noBindingsOnGoneMembers":  NoBindingsOnGoneMembers,
	"stagedRunOrder":           StagedRunOrder,
	"stagedRunApprovals":       StagedRunApprovals,
	"stagedMaxConcurrency":     StagedMaxConcurrency,
}

// Names lists the names of Checks and UnitChecks, sorted.
func Names() []string {
	names := make([]string, 0, len(Checks)+len(UnitChecks))
	for n := range Checks {
		names = append(names, n)
	}
	for n := range UnitChecks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func latest(st Reader, name string) *placement.PolicySnapshot {
	if p := st.Placement(name); p != nil {
		return p.LatestPolicySnapshot()
	}
	return nil
}

// OneBindingPerCluster: no placement has two live (Scheduled or Bound, not deleting)
// bindings on one cluster.
func OneBindingPerCluster(st Reader, _ []placement.Binding) error {
	for _, crp := range st.PlacementNames() {
		seen := map[string]string{}
		for _, b := range st.Bindings(crp) {
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

// PickNWithinLimit: the scheduler never picks beyond numberOfClusters. It looks at
// placements that gained a binding in this step: after a scale-in the snapshot is scaled
// before the scheduler unpicks the surplus, and that moment is not a violation.
func PickNWithinLimit(st Reader, created []placement.Binding) error {
	return eachPickNThatPicked(st, created, func(crp, picked string, snap *placement.PolicySnapshot) error {
		live := 0
		for _, b := range st.Bindings(crp) {
			if b.Live() {
				live++
			}
		}
		if live > int(snap.NumberOfClusters) {
			return fmt.Errorf("PickN placement %s holds %d clusters after picking %s, more than numberOfClusters %d", crp, live, picked, snap.NumberOfClusters)
		}
		return nil
	})
}

// eachPickNThatPicked calls check once for each PickN placement that gained a binding in
// this step (picked: the first cluster it picked), with its latest policy snapshot, and
// returns the first error.
func eachPickNThatPicked(st Reader, created []placement.Binding, check func(crp, picked string, snap *placement.PolicySnapshot) error) error {
	checked := map[string]bool{}
	for _, nb := range created {
		crp := nb.Placement
		if checked[crp] {
			continue
		}
		checked[crp] = true
		snap := latest(st, crp)
		if snap == nil || snap.Policy.Type() != placement.PickN {
			continue
		}
		if err := check(crp, nb.TargetCluster, snap); err != nil {
			return err
		}
	}
	return nil
}

// NoUntoleratedNewBindings: no binding of a PickAll or PickN placement is created on a
// cluster with a NoSchedule taint the placement does not tolerate.
func NoUntoleratedNewBindings(st Reader, created []placement.Binding) error {
	for _, b := range created {
		snap := latest(st, b.Placement)
		r := st.MemberCluster(b.TargetCluster)
		if snap == nil || r == nil || r.Member == nil || snap.Policy.Type() == placement.PickFixed {
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

// BindingsOnKnownMembers: every new binding targets a member that exists and is not leaving.
func BindingsOnKnownMembers(st Reader, created []placement.Binding) error {
	for _, b := range created {
		r := st.MemberCluster(b.TargetCluster)
		switch {
		case r == nil || r.Member == nil:
			return fmt.Errorf("binding %s was created on %s, which is not a member", b.Name, b.TargetCluster)
		case r.Member.Leaving:
			return fmt.Errorf("binding %s was created on %s, which is leaving", b.Name, b.TargetCluster)
		}
	}
	return nil
}

// NoBindingsOnGoneMembers: no binding targets a member that is gone. A leaving member is
// removed only once no binding (of any state) is left on it, and no binding is created on
// a member that does not exist (MEMBER-LEAVE), so a binding outliving its member means the
// member left too early.
func NoBindingsOnGoneMembers(st Reader, _ []placement.Binding) error {
	for _, crp := range st.PlacementNames() {
		for _, b := range st.Bindings(crp) {
			if r := st.MemberCluster(b.TargetCluster); r == nil || r.Member == nil {
				return fmt.Errorf("binding %s of placement %s targets %s, which is no longer a member", b.Name, crp, b.TargetCluster)
			}
		}
	}
	return nil
}
