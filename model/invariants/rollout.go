package invariants

// The rollout budgets, checked after every step against the state before it. A step is
// one reconcile (or one action, one message): the simulator processes one per event, and
// a production hub checks after each decision, so "what changed in this step" is "what
// that one step did". Rollout keeps the copy of the state before the step.
//
// The arithmetic (readiness, target N, scaling of maxUnavailable/maxSurge, the disruption
// budget) is written out here from the spec (ROLL-ALGORITHM, ROLL-MAXUNAVAILABLE,
// ROLL-MAXSURGE, PDB-ACCOUNTING, PDB-VALIDITY) rather than taken from model/rollout or
// model/eviction, so that a mistake there is not hidden by the check repeating it.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

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
	for _, p := range r.PlacementNames() {
		for _, b := range r.Bindings(p) {
			c := *b
			c.Conditions = slices.Clone(b.Conditions)
			ro.before[b.Name] = c
		}
	}
	ro.evictions = map[string]string{}
	for _, n := range r.EvictionNames() {
		if e := r.Eviction(n); e != nil {
			ro.evictions[n] = conditionsText(e.Status.Conditions)
		}
	}
}

// Check runs the rollout invariants on the step that led from the last Snapshot to r's
// state; created are the bindings the step created and now is the step's time. It does not
// take a new snapshot.
func (ro *Rollout) Check(r Reader, created []placement.Binding, now time.Time) error {
	d := ro.diff(r, created)
	for _, check := range []func(Reader, *diff, time.Time) error{
		ro.maxUnavailable, ro.maxSurge, ro.tolerated, ro.evictionBudget,
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
	// picked are bindings the scheduler created or restored from Unscheduled.
	picked []string
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
			old, existed := ro.before[b.Name]
			switch {
			case !existed:
				d.of(p).picked = append(d.of(p).picked, b.Name)
			case old.State == placement.Unscheduled && (b.State == placement.Scheduled || b.State == placement.Bound):
				d.of(p).picked = append(d.of(p).picked, b.Name)
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
	for _, name := range sortedKeys(ro.before) {
		if !now[name] {
			old := ro.before[name]
			d.of(old.Placement).deleted = append(d.of(old.Placement).deleted, old)
		}
	}
	for _, n := range r.EvictionNames() {
		if e := r.Eviction(n); e != nil && conditionsText(e.Status.Conditions) != ro.evictions[n] {
			d.evicted = append(d.evicted, e)
		}
	}
	return d
}

// ---- arithmetic written from the spec ----

// invScale resolves maxUnavailable/maxSurge against n (ROLL-MAXUNAVAILABLE, ROLL-MAXSURGE):
// an integer (also as a string of digits, which the API pattern allows) is absolute, a
// percentage of n is rounded up; unset takes def.
func invScale(v *intstr.IntOrString, n int, def string) int {
	if v == nil {
		d := intstr.FromString(def)
		v = &d
	}
	if v.Type == intstr.Int {
		return max(int(v.IntVal), 0)
	}
	if pct, ok := strings.CutSuffix(v.StrVal, "%"); ok {
		p, _ := strconv.Atoi(pct)
		return (p*n + 99) / 100
	}
	i, _ := strconv.Atoi(v.StrVal)
	return max(i, 0)
}

// invTarget is N (ROLL-TARGET-N): numberOfClusters for PickN (the policy snapshot's, which
// is what the rollout reads), the cluster names for PickFixed, and for PickAll the
// clusters the scheduler picked (live bindings).
func invTarget(snap *placement.PolicySnapshot, bindings []placement.Binding) int {
	switch snap.Policy.Type() {
	case placement.PickN:
		return max(int(snap.NumberOfClusters), 0)
	case placement.PickFixed:
		return len(snap.Policy.ClusterNames)
	}
	picked := map[string]bool{}
	for _, b := range bindings {
		if b.Live() {
			picked[b.TargetCluster] = true
		}
	}
	return len(picked)
}

// invPeriod is unavailablePeriodSeconds with its default of 60 (ROLL-API).
func invPeriod(st placement.RolloutStrategy) time.Duration {
	if ru := st.RollingUpdate; ru != nil && ru.UnavailablePeriodSeconds != nil {
		return time.Duration(max(*ru.UnavailablePeriodSeconds, 0)) * time.Second
	}
	return 60 * time.Second
}

func invRolling(st placement.RolloutStrategy) (maxUnavailable, maxSurge *intstr.IntOrString) {
	if ru := st.RollingUpdate; ru != nil {
		return ru.MaxUnavailable, ru.MaxSurge
	}
	return nil, nil
}

// invReady is ROLL-ALGORITHM's readiness: Available True at the binding's generation, and
// either not WorkNotTrackable or True for at least the unavailable period. (DC-13: a
// ReportDiff binding reports no Available condition and is ready once DiffReported is True.)
func invReady(b *placement.Binding, now time.Time, period time.Duration) bool {
	if b.ApplyStrategy.TypeOrDefault().ReportsOnly() &&
		condition.IsTrue(b.Conditions, condition.TypeDiffReported, b.Generation) {
		return true
	}
	c, ok := condition.Find(b.Conditions, condition.TypeAvailable)
	if !ok || c.Status != metav1.ConditionTrue || c.ObservedGeneration != b.Generation {
		return false
	}
	return c.Reason != condition.ReasonWorkNotTrackable || !c.LastTransitionTime.Add(period).After(now)
}

// invHolds: the binding's resources are on its cluster, or are being rolled there: Bound,
// or Unscheduled after having been Bound (BIND-STATES: the work generator treats an
// Unscheduled binding as bound until the rollout deletes it).
func invHolds(b *placement.Binding) bool {
	return b.State == placement.Bound || (b.State == placement.Unscheduled && b.PreviousState == placement.Bound)
}

func (ro *Rollout) beforeOf(p string) []placement.Binding {
	var out []placement.Binding
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

// ---- (1) maxUnavailable ----

// invMaxUnavailable: the rollout never makes more clusters unavailable than maxUnavailable
// allows. Precisely: in every event in which the rollout changed a placement's bindings
// (raised a generation: bound or updated in place; or deleted an Unscheduled binding),
//
//	ready(after) ≥ min(N − maxUnavailable, ready(before))
//
// where ready counts Bound and Unscheduled bindings that are ready in ROLL-ALGORITHM's
// sense at the event's time, and N and maxUnavailable are ROLL-TARGET-N and
// ROLL-MAXUNAVAILABLE (percentages of N rounded up) for the state before the event.
// Readiness lost to crashes, partitions, scripted unavailability, apply failures and
// evictions happens in other events and is not the rollout's doing; a rollout may still
// proceed while such losses leave fewer than N − maxUnavailable ready, but then it must not
// take away any ready binding.
func (ro *Rollout) maxUnavailable(r Reader, d *diff, now time.Time) error {
	for _, name := range sortedKeys(d.placements) {
		pd := d.placements[name]
		if !d.rollout(pd) {
			continue
		}
		p, snap := rollingPlacement(r, name)
		if p == nil {
			continue
		}
		before := ro.beforeOf(name)
		after := invCopies(r.Bindings(name))
		n := invTarget(snap, before)
		mu, _ := invRolling(p.CRP.Spec.Strategy)
		maxU := invScale(mu, n, "25%")
		period := invPeriod(p.CRP.Spec.Strategy)
		count := func(bs []placement.Binding) (int, []string) {
			k, names := 0, []string(nil)
			for i := range bs {
				b := &bs[i]
				if (b.State == placement.Bound || b.State == placement.Unscheduled) && invReady(b, now, period) {
					k++
					names = append(names, b.TargetCluster)
				}
			}
			return k, names
		}
		rb, rbNames := count(before)
		ra, raNames := count(after)
		if want := min(n-maxU, rb); ra < want {
			return fmt.Errorf("invariant maxUnavailable: placement %s: the rollout left %d ready cluster(s) %v, fewer than min(N−maxUnavailable = %d−%d, ready before = %d %v); it updated %v and deleted %v",
				name, ra, raNames, n, maxU, rb, rbNames, pd.bumped, invNames(pd.deleted))
		}
		ro.Stats.RolloutEvents++
		for _, bn := range pd.bumped {
			if old := ro.before[bn]; old.State == placement.Bound && invReady(&old, now, period) {
				ro.Stats.InPlaceUpdates++
			}
		}
		ro.Stats.RolloutDeletes += len(pd.deleted)
	}
	return nil
}

func invNames(bs []placement.Binding) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// ---- (2) maxSurge ----

// invMaxSurge: the rollout never brings in a new cluster beyond N + maxSurge. Precisely: in
// every event in which the rollout bound k Scheduled bindings (Scheduled → Bound) of a
// placement,
//
//	holding(before) + k ≤ N + maxSurge
//
// where holding counts the bindings whose resources are on their cluster: Bound, or
// Unscheduled after having been Bound (BIND-STATES: resources stay until the rollout
// deletes the binding), whether or not their apply or availability failed (ROLL-MAXSURGE:
// "at most N + maxSurge clusters hold resources"; fleetsim counts failed ones too, unlike
// upstream's canBeReady); N and maxSurge (a percentage of N rounded up) are taken before
// the event. Scheduled bindings hold nothing yet and do not count. In-place updates never
// add a cluster and are not counted (ROLL-MAXSURGE, ROLL-INPLACE). A placement above the
// cap after a scale-in is no violation; binding a new cluster there would be.
func (ro *Rollout) maxSurge(r Reader, d *diff, _ time.Time) error {
	for _, name := range sortedKeys(d.placements) {
		pd := d.placements[name]
		if len(pd.newlyBound) == 0 {
			continue
		}
		p, snap := rollingPlacement(r, name)
		if p == nil {
			continue
		}
		before := ro.beforeOf(name)
		n := invTarget(snap, before)
		_, ms := invRolling(p.CRP.Spec.Strategy)
		surge := invScale(ms, n, "25%")
		var holders []string
		for i := range before {
			if invHolds(&before[i]) {
				holders = append(holders, before[i].TargetCluster)
			}
		}
		k := len(pd.newlyBound)
		ro.Stats.NewlyBound += k
		if len(holders)+k > n+surge {
			return fmt.Errorf("invariant maxSurge: placement %s: the rollout bound %d new cluster(s) %v while %d cluster(s) %v already held it; N %d + maxSurge %d allows %d",
				name, k, pd.newlyBound, len(holders), holders, n, surge, n+surge)
		}
		if len(holders)+k == n+surge {
			ro.Stats.BindsAtSurgeCap++
		}
	}
	return nil
}

// ---- (3) taints ----

// invTolerated: every cluster the scheduler picks in an event, by creating a binding
// (d.created) or by restoring an Unscheduled one, carries only taints the latest policy
// snapshot tolerates (TAINT-MATCH), PickFixed excepted (TAINT-SCOPE); and it is a member
// that is not leaving. Bindings kept on a cluster tainted later are not new picks
// (TAINT-NO-EVICT).
func (ro *Rollout) tolerated(r Reader, d *diff, _ time.Time) error {
	check := func(bName, placementName, cluster string) error {
		p := r.Placement(placementName)
		if p == nil {
			return nil
		}
		snap := p.LatestPolicySnapshot()
		m := r.MemberCluster(cluster)
		switch {
		case m == nil:
			return fmt.Errorf("invariant tolerated: binding %s of %s was picked on %s, which is not a member", bName, placementName, cluster)
		case m.Member.Leaving:
			return fmt.Errorf("invariant tolerated: binding %s of %s was picked on %s, which is leaving", bName, placementName, cluster)
		case snap == nil || snap.Policy.Type() == placement.PickFixed:
			return nil
		}
		var tolerations []placement.Toleration
		if snap.Policy != nil {
			tolerations = snap.Policy.Tolerations
		}
		for _, taint := range m.Member.Taints {
			if !slices.ContainsFunc(tolerations, func(t placement.Toleration) bool {
				return invTolerates(t, taint.Key, taint.Value, string(taint.Effect))
			}) {
				return fmt.Errorf("invariant tolerated: binding %s of %s was picked on %s, whose taint %s the policy snapshot %s does not tolerate (tolerations %v)",
					bName, placementName, cluster, taint, snap.Name, tolerations)
			}
		}
		return nil
	}
	for _, b := range d.created {
		if err := check(b.Name, b.Placement, b.TargetCluster); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(d.placements) {
		for _, bn := range d.placements[name].picked {
			if b := r.Binding(bn); b != nil {
				if err := check(b.Name, b.Placement, b.TargetCluster); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// invTolerates is TAINT-MATCH: an empty effect matches all effects; Exists matches the key
// (an empty key every key); Equal (the default) needs key and value.
func invTolerates(t placement.Toleration, key, value, effect string) bool {
	if t.Effect != "" && string(t.Effect) != effect {
		return false
	}
	if t.Operator == placement.TolerationOpExists {
		return t.Key == "" || t.Key == key
	}
	return t.Key == key && t.Value == value
}

// ---- (4) evictions and budgets ----

// invBudget is PDB-ACCOUNTING and PDB-VALIDITY for a placement's bindings (all states):
// available = Available True at the binding's generation, total = all bindings;
// maxUnavailable → allowed = ceil(maxUnavailable of N) − (total − available); minAvailable
// → allowed = available − minAvailable (an integer, or for PickN ceil(% of N)); an eviction
// proceeds iff allowed > 0. Percentages are of the CRP's numberOfClusters (PDB-API). A
// budget with maxUnavailable or a percentage minAvailable on PickAll is misconfigured. Where
// the spec says minAvailable 0 allows every disruption (PDB-API), allowed = total.
func invBudget(typ placement.PlacementType, numberOfClusters int, bindings []placement.Binding, b *eviction.DisruptionBudget) (allowed, available, total int, misconfigured bool) {
	for i := range bindings {
		total++
		if condition.IsTrue(bindings[i].Conditions, condition.TypeAvailable, bindings[i].Generation) {
			available++
		}
	}
	if b == nil {
		return total, available, total, false
	}
	isPct := func(v *intstr.IntOrString) bool {
		return v != nil && v.Type == intstr.String && strings.HasSuffix(v.StrVal, "%")
	}
	spec := b.Spec
	if (spec.MaxUnavailable == nil) == (spec.MinAvailable == nil) {
		return 0, available, total, true
	}
	if typ == placement.PickAll && (spec.MaxUnavailable != nil || isPct(spec.MinAvailable)) {
		return 0, available, total, true
	}
	if spec.MaxUnavailable != nil {
		allowed = invScale(spec.MaxUnavailable, numberOfClusters, "") - (total - available)
	} else if m := invScale(spec.MinAvailable, numberOfClusters, ""); m == 0 {
		allowed = total
	} else {
		allowed = available - m
	}
	return allowed, available, total, false
}

// invEvictionBudget: no eviction executes against its budget. For every eviction
// reconciled in this event, against the bindings as they were just before:
//
//   - a binding was deleted only if the eviction says Executed=True, it is the only
//     binding deleted, it is the placement's binding on the named cluster, and one of
//     EVICT-EXECUTION's reasons holds: the binding failed (Applied or Available False at
//     its generation) or reports diffs; or it is present (Bound, or Unscheduled after Bound)
//     and there is no budget, or the budget (invBudget) is well configured and allows > 0;
//   - the Executed message names the reason that held: "no budget" only without a budget,
//     "allowed by budget, availablePlacements X, totalPlacements Y" only when the budget
//     allows, with X and Y as counted; "blocked by budget" only when it does not allow
//     (with the right X and Y), "misconfigured" only for a misconfigured budget.
func (ro *Rollout) evictionBudget(r Reader, d *diff, _ time.Time) error {
	var deleted []placement.Binding
	for _, name := range sortedKeys(d.placements) {
		deleted = append(deleted, d.placements[name].deleted...)
	}
	if len(d.evicted) == 0 {
		return nil
	}
	if len(d.evicted) > 1 {
		return fmt.Errorf("invariant evictionBudget: %d evictions changed in one event", len(d.evicted))
	}
	e := d.evicted[0]
	fail := func(format string, args ...any) error {
		return fmt.Errorf("invariant evictionBudget: eviction %s (placement %s, cluster %s): %s", e.Name, e.Spec.PlacementName, e.Spec.ClusterName, fmt.Sprintf(format, args...))
	}
	executed, _ := condition.Find(e.Status.Conditions, eviction.TypeExecuted)
	valid, _ := condition.Find(e.Status.Conditions, eviction.TypeValid)
	if executed.Status != metav1.ConditionTrue && len(deleted) > 0 {
		return fail("not executed (%s: %s) but binding(s) %v were deleted", executed.Status, executed.Message, invNames(deleted))
	}
	before := ro.beforeOf(e.Spec.PlacementName)
	var target *placement.Binding
	targets := 0
	for i := range before {
		if before[i].TargetCluster == e.Spec.ClusterName {
			target = &before[i]
			targets++
		}
	}
	if valid.Status == metav1.ConditionFalse {
		if valid.Message == eviction.MessageInvalidMissingBinding && targets != 0 {
			return fail("invalid for a missing binding, but %s existed", target.Name)
		}
		return nil
	}
	p := r.Placement(e.Spec.PlacementName)
	if p == nil || targets != 1 {
		if executed.Status != "" {
			return fail("decided (%s) with %d binding(s) on the cluster", executed.Message, targets)
		}
		return nil
	}
	typ := p.CRP.Spec.Policy.Type()
	n := 0
	if p.CRP.Spec.Policy != nil && p.CRP.Spec.Policy.NumberOfClusters != nil {
		n = int(*p.CRP.Spec.Policy.NumberOfClusters)
	}
	budget := r.DisruptionBudget(e.Spec.PlacementName)
	allowed, available, total, misconfigured := invBudget(typ, n, before, budget)
	failed := false
	for _, t := range []string{condition.TypeApplied, condition.TypeAvailable} {
		if c, ok := condition.Find(target.Conditions, t); ok && c.Status == metav1.ConditionFalse && c.ObservedGeneration == target.Generation {
			failed = true
		}
	}
	reportDiff := target.ApplyStrategy.TypeOrDefault().ReportsOnly()
	present := invHolds(target)
	budgetText := fmt.Sprintf("budget %+v: allowed %d, available %d, total %d, misconfigured %v (numberOfClusters %d)", budgetSpec(budget), allowed, available, total, misconfigured, n)

	if executed.Status == metav1.ConditionTrue {
		ro.Stats.EvictionsExecuted++
		if !target.Deleting && (len(deleted) != 1 || deleted[0].Name != target.Name) {
			return fail("executed, but deleted %v instead of exactly %s", invNames(deleted), target.Name)
		}
		justified := target.Deleting || failed || reportDiff ||
			(present && (budget == nil || (!misconfigured && allowed > 0)))
		if !justified {
			return fail("executed (%s) against the budget: binding %s state %s (previous %s), failed %v, %s",
				executed.Message, target.Name, target.State, target.PreviousState, failed, budgetText)
		}
		var x, y int
		switch {
		case executed.Message == eviction.MessageAllowedNoBudget:
			if budget != nil {
				return fail("says no budget is specified, but %s exists", budgetText)
			}
		case executed.Message == eviction.MessageAllowedPlacementFailed:
			if !failed && !reportDiff {
				return fail("says the placement failed, but binding %s has not failed", target.Name)
			}
		case invScan(executed.Message, eviction.FormatAllowedByBudget, &x, &y):
			ro.Stats.EvictionsByBudget++
			if budget == nil || misconfigured || allowed <= 0 || x != available || y != total {
				return fail("says %q, but before it %s", executed.Message, budgetText)
			}
		}
		return nil
	}
	if executed.Status == metav1.ConditionFalse {
		ro.Stats.EvictionsBlocked++
		var x, y int
		switch {
		case invScan(executed.Message, eviction.FormatBlockedByBudget, &x, &y):
			if budget == nil || misconfigured || allowed > 0 || x != available || y != total || failed || !present {
				return fail("says %q, but before it binding %s failed %v present %v, %s", executed.Message, target.Name, failed, present, budgetText)
			}
		case executed.Message == eviction.MessageBlockedMisconfigured:
			if !misconfigured || failed {
				return fail("says the budget is misconfigured, but %s", budgetText)
			}
		case executed.Message == eviction.MessageBlockedNotPropagated:
			if present || failed {
				return fail("says the placement has not propagated, but binding %s is %s (previous %s), failed %v", target.Name, target.State, target.PreviousState, failed)
			}
		}
	}
	return nil
}

func budgetSpec(b *eviction.DisruptionBudget) string {
	if b == nil {
		return "none"
	}
	f := func(v *intstr.IntOrString) string {
		if v == nil {
			return "-"
		}
		return v.String()
	}
	return fmt.Sprintf("{maxUnavailable %s, minAvailable %s}", f(b.Spec.MaxUnavailable), f(b.Spec.MinAvailable))
}

// invScan parses msg with a two-%d format, reporting whether it matched.
func invScan(msg, format string, x, y *int) bool {
	n, err := fmt.Sscanf(msg, format, x, y)
	return err == nil && n == 2
}
