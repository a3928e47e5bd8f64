package invariants

// The rollout budgets, checked after every step against the state before it. A step is
// one reconcile (or one action, one message): the simulator processes one per event, and
// a production hub checks after each decision, so "what changed in this step" is "what
// that one step did". Rollout keeps the copy of the state before the step; this file holds
// it and what a step changed (diff). The checks are in rollout_budgets.go (maxUnavailable,
// maxSurge), rollout_taints.go and rollout_evictions.go.
//
// The arithmetic (readiness, target N, scaling of maxUnavailable/maxSurge, the disruption
// budget) is written out from the spec in this package (rollout_spec.go,
// rollout_evictions.go: ROLL-ALGORITHM, ROLL-MAXUNAVAILABLE, ROLL-MAXSURGE, PDB-ACCOUNTING,
// PDB-VALIDITY) rather than taken from model/rollout or model/eviction, so that a mistake
// there is not hidden by the check repeating it.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Rollout checks the rollout budgets (maxUnavailable, maxSurge, tolerated and known picks,
// eviction budgets) of each step against a copy of the state before it.
type Rollout struct {
	// before holds a copy of every binding (conditions cloned: stores update them in
	// place), by name.
	before map[string]placement.Binding
	// evictions holds each eviction's conditions, rendered, by name.
	evictions map[string]string
	// Stats counts what the checks saw.
	Stats RolloutStats
	// versions and names are the incremental bookkeeping (rollout_incremental.go): each
	// copied placement's bindings version at its copy, and the names of its bindings in
	// before. nil after a full Snapshot.
	versions map[string]uint64
	names    map[string][]string
}

// RolloutStats counts what the rollout checks saw.
type RolloutStats struct {
	RolloutEvents     int // steps in which the rollout bound, updated or deleted bindings
	InPlaceUpdates    int // ready Bound bindings the rollout updated in place
	NewlyBound        int // Scheduled → Bound
	RolloutDeletes    int // Unscheduled bindings the rollout deleted
	EvictionsExecuted int
	EvictionsByBudget int // executed with the budget consulted and allowing it
	EvictionsBlocked  int
	BindsAtSurgeCap   int // binds that brought a placement exactly to N + maxSurge
}

// NewRollout returns a Rollout holding a copy of r's state.
func NewRollout(r Reader) *Rollout {
	ro := &Rollout{}
	ro.Snapshot(r)
	return ro
}

// Snapshot copies every binding and every eviction's conditions of r: the state the next
// Check compares with.
func (ro *Rollout) Snapshot(r Reader) {
	ro.before = map[string]placement.Binding{}
	ro.versions, ro.names = nil, nil
	for _, p := range r.PlacementNames() {
		for _, b := range r.Bindings(p) {
			c := *b
			c.Conditions = slices.Clone(b.Conditions)
			ro.before[b.Name] = c
		}
	}
	ro.snapshotEvictions(r)
}

// snapshotEvictions copies every eviction's conditions, rendered.
func (ro *Rollout) snapshotEvictions(r Reader) {
	names := r.EvictionNames()
	if len(names) == 0 && len(ro.evictions) == 0 && ro.evictions != nil {
		return
	}
	ro.evictions = make(map[string]string, len(names))
	for _, n := range names {
		if e := r.Eviction(n); e != nil {
			ro.evictions[n] = conditionsText(e.Status.Conditions)
		}
	}
}

// Check runs the rollout invariants on the step that led from the last Snapshot to r's
// state; created are the bindings the step created and now is the step's time. It does not
// take a new snapshot.
func (ro *Rollout) Check(r Reader, created []placement.Binding, now time.Time) error {
	return ro.check(r, ro.diff(r, created), now)
}

func (ro *Rollout) check(r Reader, d *diff, now time.Time) error {
	for _, check := range []func(Reader, *diff, time.Time) error{
		ro.maxUnavailable, ro.maxSurge, ro.tolerated, ro.evictionBudget, ro.pickNScaledIn,
	} {
		if err := check(r, d, now); err != nil {
			return err
		}
	}
	return nil
}

func conditionsText(cs []condition.Timed) string {
	var sb strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&sb, "%s=%s/%s/%s;", c.Type, c.Status, c.Reason, c.Message)
	}
	return sb.String()
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// diff is what one step changed, per placement.
type diff struct {
	placements map[string]*placementDiff
	// evicted: evictions whose conditions changed in this step. Deletions in such a step
	// are the eviction's (the eviction controller is the only writer in it).
	evicted []*eviction.Eviction
	// created are the bindings the step created.
	created []placement.Binding
}

type placementDiff struct {
	// bumped are bindings whose generation rose: only the rollout does that (Bind: a
	// Scheduled binding bound or a Bound one updated in place).
	bumped []string
	// newlyBound are Scheduled → Bound bindings (a subset of bumped).
	newlyBound []string
	// deleted are bindings gone since the step started (as they were before it).
	deleted []placement.Binding
	// picked are bindings the scheduler created or restored from Unscheduled;
	// unscheduled are live bindings it turned Unscheduled.
	picked      []string
	unscheduled []string
}

func (d *diff) of(p string) *placementDiff {
	pd := d.placements[p]
	if pd == nil {
		pd = &placementDiff{}
		d.placements[p] = pd
	}
	return pd
}

// rollout reports whether the rollout changed bindings of the placement in this step:
// it raised a generation, or it deleted bindings in a step that executed no eviction.
func (d *diff) rollout(pd *placementDiff) bool {
	return len(pd.bumped) > 0 || (len(pd.deleted) > 0 && len(d.evicted) == 0)
}

func (ro *Rollout) diff(r Reader, created []placement.Binding) *diff {
	d := &diff{placements: map[string]*placementDiff{}, created: created}
	now := map[string]bool{}
	for _, p := range r.PlacementNames() {
		for _, b := range r.Bindings(p) {
			now[b.Name] = true
		}
		ro.diffBindings(r, d, p)
	}
	for _, name := range sortedKeys(ro.before) {
		if !now[name] {
			old := ro.before[name]
			d.of(old.Placement).deleted = append(d.of(old.Placement).deleted, old)
		}
	}
	ro.diffEvictions(r, d)
	return d
}

// diffBindings records what changed in placement p's current bindings: picks and raised
// generations.
func (ro *Rollout) diffBindings(r Reader, d *diff, p string) {
	for _, b := range r.Bindings(p) {
		old, existed := ro.before[b.Name]
		switch {
		case !existed:
			d.of(p).picked = append(d.of(p).picked, b.Name)
		case old.State == placement.Unscheduled && (b.State == placement.Scheduled || b.State == placement.Bound):
			d.of(p).picked = append(d.of(p).picked, b.Name)
		}
		if existed && old.Live() && b.State == placement.Unscheduled {
			d.of(p).unscheduled = append(d.of(p).unscheduled, b.Name)
		}
		if existed && b.Generation > old.Generation {
			pd := d.of(p)
			pd.bumped = append(pd.bumped, b.Name)
			if old.State == placement.Scheduled && b.State == placement.Bound {
				pd.newlyBound = append(pd.newlyBound, b.Name)
			}
		}
	}
}

// diffEvictions records the evictions whose conditions changed.
func (ro *Rollout) diffEvictions(r Reader, d *diff) {
	for _, n := range r.EvictionNames() {
		if e := r.Eviction(n); e != nil && conditionsText(e.Status.Conditions) != ro.evictions[n] {
			d.evicted = append(d.evicted, e)
		}
	}
}

func (ro *Rollout) beforeOf(p string) []placement.Binding {
	var out []placement.Binding
	if ro.names != nil {
		for _, name := range ro.names[p] { // sorted: a store lists bindings by name
			out = append(out, ro.before[name])
		}
		return out
	}
	for _, name := range sortedKeys(ro.before) {
		if b := ro.before[name]; b.Placement == p {
			out = append(out, b)
		}
	}
	return out
}

func invCopies(bs []*placement.Binding) []placement.Binding {
	out := make([]placement.Binding, 0, len(bs))
	for _, b := range bs {
		out = append(out, *b)
	}
	return out
}

// invRollingPlacement returns a placement driven by the rolling-update rollout, with its
// latest policy snapshot, or nil.
func rollingPlacement(r Reader, name string) (*mhub.Placement, *placement.PolicySnapshot) {
	p := r.Placement(name)
	if p == nil || p.Deleting || p.CRP.Spec.Strategy.Type == placement.ExternalStrategy {
		return nil, nil
	}
	snap := p.LatestPolicySnapshot()
	if snap == nil {
		return nil, nil
	}
	return p, snap
}
