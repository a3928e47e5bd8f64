package hub

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/rollout"
	"github.com/fleetsim/fleetsim/model/status"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// Per-cluster WorkSynchronized reasons (WORK-SYNC).
const (
	ReasonAllWorkSynced  = "AllWorkSynced"
	ReasonSyncWorkFailed = "SyncWorkFailed"
)

// reconcileRollout runs the rolling-update decision and writes its plan: bindings to bind or
// update first, then Unscheduled bindings to delete, then condition-only changes. External
// placements are rolled by staged update runs instead.
func (c *Controllers) reconcileRollout(name string) {
	st, env := c.Store, c.Env
	p, snap := c.livePlacement(name)
	if p == nil {
		return
	}
	if p.CRP.Spec.Strategy.Type == placement.ExternalStrategy {
		c.refreshStatus(name)
		return
	}
	latest := ""
	if r := p.LatestResources(); r != nil {
		latest = r.Name
	}
	var names []string
	if snap.Policy != nil {
		names = snap.Policy.ClusterNames
	}
	plan := rollout.Decide(rollout.Input{
		Placement: name, PlacementType: snap.Policy.Type(), NumberOfClusters: snap.NumberOfClusters, ClusterNames: names,
		Strategy: p.CRP.Spec.Strategy, Bindings: st.Bindings(name), LatestResourceSnapshot: latest,
		Overrides: c.applicableOverrides(name, p), Now: env.Now(),
	})
	for _, ch := range plan.Bind {
		st.PutBinding(ch.Binding)
		env.Record("binding-rolled", ch.Binding.Name, fmt.Sprintf("%s to %s (generation %d): %s", ch.Binding.TargetCluster, ch.Binding.ResourceSnapshotName, ch.Binding.Generation, ch.Reason))
		env.Fire(triggers.BindingChanged, ch.Binding.Name, name, ch.Binding.TargetCluster)
	}
	for _, ch := range plan.Delete {
		st.DeleteBinding(ch.Binding.Name)
		env.Record("binding-deleted", ch.Binding.Name, ch.Reason)
		env.Fire(triggers.BindingDeleted, ch.Binding.Name, name, ch.Binding.TargetCluster)
	}
	for _, cs := range [][]rollout.Change{plan.Wait, plan.Refresh} {
		for _, ch := range cs {
			st.PutBinding(ch.Binding)
		}
	}
	for _, ch := range plan.Wait {
		env.Record("binding-waiting", ch.Binding.Name, ch.Reason)
	}
	if plan.RequeueAfter > 0 {
		env.RequeueAfter(triggers.Rollout, name, plan.RequeueAfter)
	}
	c.refreshStatus(name)
}

// applicableOverrides lists, per member holding the placement, the latest override
// snapshots that apply to it for the selected resources.
func (c *Controllers) applicableOverrides(name string, p *Placement) map[string]rollout.OverrideSnapshots {
	cros, ros := c.Store.LatestOverrides()
	cros, ros = override.ForPlacement(name, cros, ros)
	if len(cros) == 0 && len(ros) == 0 {
		return nil
	}
	set := override.NewSet(cros, ros)
	ids := p.SelectedIdentifiers()
	out := map[string]rollout.OverrideSnapshots{}
	for _, b := range c.Store.Bindings(name) {
		m := c.Store.MemberCluster(b.TargetCluster)
		if m == nil {
			continue
		}
		cro, ro := set.ApplicableFor(m.Member, ids)
		out[b.TargetCluster] = rollout.OverrideSnapshots{ClusterResourceOverrideSnapshots: cro, ResourceOverrideSnapshots: ro}
	}
	return out
}

// refreshStatus recomputes a placement's status and records the placement-level conditions
// whose status changed.
func (c *Controllers) refreshStatus(name string) {
	env := c.Env
	p := c.Store.Placement(name)
	if p == nil {
		return
	}
	snap := p.LatestPolicySnapshot()
	if snap == nil {
		return
	}
	in := status.Input{
		Generation: p.Generation, RolloutStrategy: p.CRP.Spec.Strategy.Type, PlacementType: snap.Policy.Type(),
		Scheduling: status.Scheduling{Condition: p.Scheduled, ObservedPlacementGeneration: p.ScheduledGeneration, Decisions: p.Decisions},
		Bindings:   c.Store.Bindings(name), ResourceIndex: -1, SelectedResources: p.SelectedIdentifiers(),
		Previous: p.Status, Now: env.Now(),
	}
	if as := p.CRP.Spec.Strategy.ApplyStrategy; as != nil {
		in.ApplyStrategy = as.Type
	}
	switch snap.Policy.Type() {
	case placement.PickN:
		in.Wanted = int(snap.NumberOfClusters)
	case placement.PickFixed:
		in.Wanted = len(snap.Policy.ClusterNames)
	}
	if r := p.LatestResources(); r != nil {
		in.LatestResourceSnapshot, in.ResourceIndex = r.Name, r.Index
	}
	in.ResourceSnapshots = make(map[string]status.SnapshotRef, len(p.ResourceSnapshots))
	for _, r := range p.ResourceSnapshots {
		ref := status.SnapshotRef{Index: r.Index, Selected: make([]placement.ResourceIdentifier, 0, len(r.Manifests))}
		for _, o := range r.Manifests {
			ref.Selected = append(ref.Selected, resources.Identifier(o))
		}
		in.ResourceSnapshots[r.Name] = ref
	}
	next := status.Placement(in)
	if err := resources.CheckSelectors(p.CRP.Spec.ResourceSelectors); err != nil {
		// Nothing the placement does means anything while its selectors are refused.
		cs := slices.DeleteFunc(slices.Clone(p.Status.Conditions), func(c condition.Timed) bool { return c.Type != status.TypePlacementScheduled })
		condition.Set(&cs, condition.False(status.TypePlacementScheduled, status.ReasonInvalidResourceSelectors, err.Error()), p.Generation, env.Now())
		next.Conditions = cs
	}
	MirrorStatus(p, &next, env.Now())
	recordChanged(env, "placement-status", name, p.Status.Conditions, next.Conditions)
	p.Status = next
	c.Store.PutPlacement(p)
}

// MirrorStatus decides a placement's statusReportingScope for its next status: a
// NamespaceAccessible placement gets the StatusSynced condition and, when its namespace
// exists on the hub (it is among the selected objects), a ClusterResourcePlacementStatus
// copy of next there (p.Mirror); otherwise p.Mirror is nil and next has no StatusSynced.
func MirrorStatus(p *Placement, next *status.Status, now time.Time) {
	ns := p.CRP.Spec.StatusNamespace()
	if prev, ok := condition.Find(p.Status.Conditions, status.TypePlacementStatusSynced); ok {
		if _, has := condition.Find(next.Conditions, status.TypePlacementStatusSynced); !has && ns != "" {
			next.Conditions = append(next.Conditions, prev)
		}
	}
	if ns == "" {
		next.Conditions = withoutCondition(next.Conditions, status.TypePlacementStatusSynced)
		p.Mirror = nil
		return
	}
	exists := false
	for _, o := range p.Selected {
		if o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1" && o.GetName() == ns {
			exists = true
		}
	}
	if !exists {
		condition.Set(&next.Conditions, condition.False(status.TypePlacementStatusSynced, status.ReasonStatusSyncFailed,
			fmt.Sprintf("namespace %q does not exist on the hub: no ClusterResourcePlacementStatus can be kept there", ns)), p.Generation, now)
		p.Mirror = nil
		return
	}
	condition.Set(&next.Conditions, condition.True(status.TypePlacementStatusSynced, status.ReasonStatusSyncSucceeded,
		fmt.Sprintf("the placement status is copied to ClusterResourcePlacementStatus %s/%s", ns, p.CRP.Name)), p.Generation, now)
	mirror := *next
	mirror.Conditions = withoutCondition(next.Conditions, status.TypePlacementStatusSynced)
	p.Mirror = &StatusMirror{Namespace: ns, Status: mirror}
}

func withoutCondition(cs []condition.Timed, typ string) []condition.Timed {
	if _, ok := condition.Find(cs, typ); !ok {
		return cs
	}
	return slices.DeleteFunc(slices.Clone(cs), func(c condition.Timed) bool { return c.Type == typ })
}

// reconcileWork is the work generator for one binding: it applies the binding's override
// snapshots to its resource snapshot for the target member (enveloped objects travel as
// they are) and writes the binding's Works, one per snapshot part and one per envelope
// (plannedWorks), deleting any other Work of the binding, and sets the binding's Overridden
// and WorkSynchronized conditions (WORK-SYNC, OVR-STATUS, ENV-*).
func (c *Controllers) reconcileWork(bindingName string) {
	st, env := c.Store, c.Env
	b := st.Binding(bindingName)
	if b == nil {
		st.DeleteWork(bindingName)
		return
	}
	if !b.Present() || b.ResourceSnapshotName == "" {
		return
	}
	p := st.Placement(b.Placement)
	if p == nil {
		return
	}
	abandon := p.CRP.Spec.Strategy.Abandons()
	reportBack := p.CRP.Spec.Strategy.ReportBackStrategy
	current := st.Works(b.Name)
	for _, w := range current {
		if w.Generation == b.Generation && (w.Abandon != abandon || !sameReportBack(w.ReportBack, reportBack)) {
			// Only the delete or report-back strategy changed: the Work carries them to the
			// member agent.
			nw := *w
			nw.Abandon, nw.ReportBack = abandon, copyReportBack(reportBack)
			st.PutWork(&nw)
			env.Record("work-synchronized", membership.Namespace(b.TargetCluster)+"/"+nw.Name,
				fmt.Sprintf("binding %s delete strategy abandon=%t, report back %s", b.Name, abandon, reportBackText(reportBack)))
			env.WorkWritten(&nw)
		}
	}
	if len(current) > 0 && !slices.ContainsFunc(current, func(w *Work) bool { return w.Generation != b.Generation }) {
		if c, ok := condition.Find(b.Conditions, condition.TypeWorkSynchronized); ok && c.ObservedGeneration == b.Generation {
			return // this generation's Works are written; their inputs are immutable snapshots
		}
	}
	nb := *b
	changed := false
	set := func(cd condition.Condition) {
		statusChanged, any := condition.Update(&nb.Conditions, cd, nb.Generation, env.Now())
		if statusChanged {
			env.Record("binding-condition", nb.Name, ConditionText(cd))
		}
		changed = changed || any
	}
	defer func() {
		if changed {
			st.PutBinding(nb)
			env.Fire(triggers.BindingStatusChanged, nb.Name, nb.Placement, nb.TargetCluster)
		}
	}()
	snap := p.ResourceSnapshotByName(b.ResourceSnapshotName)
	if snap == nil {
		set(condition.False(condition.TypeWorkSynchronized, ReasonSyncWorkFailed, "Failed to synchronize the work to the latest: resource snapshot "+b.ResourceSnapshotName+" no longer exists"))
		return
	}
	m := st.MemberCluster(b.TargetCluster)
	var planned []*Work
	var overrideErr, envelopeErr error
	if m != nil {
		cros, ros := st.NamedOverrides(b.ClusterResourceOverrideSnapshots, b.ResourceOverrideSnapshots)
		planned, overrideErr, envelopeErr = plannedWorks(b, snap, override.NewSet(cros, ros), m)
	}
	set(override.ClusterCondition(b.ClusterResourceOverrideSnapshots, b.ResourceOverrideSnapshots, overrideErr))
	if overrideErr != nil {
		return
	}
	if envelopeErr != nil {
		set(condition.False(condition.TypeWorkSynchronized, ReasonSyncWorkFailed, "Failed to synchronize the work to the latest: "+envelopeErr.Error()))
		return
	}
	if m == nil || !m.NamespaceExists {
		set(condition.False(condition.TypeWorkSynchronized, ReasonSyncWorkFailed,
			fmt.Sprintf("Failed to synchronize the work to the latest: unable to create new content in namespace %s because it is being terminated", membership.Namespace(b.TargetCluster))))
		return
	}
	keep := map[string]bool{}
	for _, w := range planned {
		keep[w.Name] = true
		if old := findWork(current, w.Name); old != nil && old.Generation == b.Generation {
			continue
		}
		w.Abandon, w.ReportBack = abandon, copyReportBack(reportBack)
		st.PutWork(w)
		env.Record("work-synchronized", membership.Namespace(b.TargetCluster)+"/"+w.Name, fmt.Sprintf("binding %s generation %d, %d manifest(s)", b.Name, b.Generation, len(w.Manifests)))
		env.WorkWritten(w)
	}
	for _, w := range current {
		if !keep[w.Name] {
			st.RemoveWork(b.Name, w.Name)
			env.Record("work-deleted", membership.Namespace(b.TargetCluster)+"/"+w.Name, fmt.Sprintf("binding %s generation %d no longer has it", b.Name, b.Generation))
		}
	}
	set(condition.True(condition.TypeWorkSynchronized, ReasonAllWorkSynced, "All of the works are synchronized to the latest"))
}

// plannedWorks are the Works of binding b for snapshot snap on member m, as KubeFleet's work
// generator writes them (WORK-API, ENV-LEGACY): one per part of the snapshot
// (resources.Parts, named resources.WorkName) with that part's manifests, overridden for
// the member (a Work even when nothing of the part is left to place, so the binding's
// status covers every part), and one per envelope, named after the part it was found in,
// with the envelope's objects as they are (overrides do not apply to them). The first
// override or envelope that fails stops the plan with its error, and so does a Work too
// large for the API server to store (resources.MaxWorkBytes, reported like an envelope
// error: WorkSynchronized=False/SyncWorkFailed).
func plannedWorks(b *placement.Binding, snap *resources.Snapshot, ovr *override.Set, m *MemberCluster) (works []*Work, overrideErr, envelopeErr error) {
	newWork := func(name string) *Work {
		return &Work{Name: name, Binding: b.Name, Placement: b.Placement, Member: b.TargetCluster, Generation: b.Generation}
	}
	for sub, part := range resources.Parts(snap.Manifests, 0) {
		main := newWork(resources.WorkName(b.Placement, sub))
		works = append(works, main)
		for _, o := range part {
			if resources.IsEnvelope(o) {
				inner, envName, err := resources.Unwrap(o)
				if err != nil {
					return nil, nil, err
				}
				ew := newWork(resources.EnvelopeWorkName(main.Name, o))
				for _, in := range inner {
					ew.Manifests, ew.Envelopes = append(ew.Manifests, in), append(ew.Envelopes, envName)
				}
				works = append(works, ew)
				continue
			}
			res := ovr.Apply(o, m.Member)
			if res.Err != nil {
				return nil, res.Err, nil
			}
			if !res.Deleted {
				main.Manifests, main.Envelopes = append(main.Manifests, res.Manifest), append(main.Envelopes, nil)
			}
		}
	}
	slices.SortFunc(works, func(a, b *Work) int { return strings.Compare(a.Name, b.Name) })
	for _, w := range works {
		// The API server would refuse the write (WORK-SYNC: a Work the controller cannot
		// write is reported, not retried for ever).
		if n := resources.ManifestBytes(w.Manifests); n > resources.MaxWorkBytes {
			return nil, nil, fmt.Errorf("work %s would carry %d bytes of manifests, more than the %d the API server stores in one object: request is too large", w.Name, n, resources.MaxWorkBytes)
		}
	}
	return works, nil, nil
}

func findWork(ws []*Work, name string) *Work {
	for _, w := range ws {
		if w.Name == name {
			return w
		}
	}
	return nil
}

func sameReportBack(a, b *placement.ReportBackStrategy) bool {
	return reportBackText(a) == reportBackText(b)
}

func copyReportBack(r *placement.ReportBackStrategy) *placement.ReportBackStrategy {
	if r == nil {
		return nil
	}
	c := *r
	if r.Destination != nil {
		d := *r.Destination
		c.Destination = &d
	}
	return &c
}

// reportBackText renders a report-back strategy for events and comparisons.
func reportBackText(r *placement.ReportBackStrategy) string {
	switch {
	case r == nil:
		return "none"
	case r.Destination == nil:
		return string(r.Type)
	}
	return string(r.Type) + " to " + string(*r.Destination)
}
