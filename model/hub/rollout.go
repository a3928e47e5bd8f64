package hub

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
// they are) and writes the Work, setting the binding's Overridden and WorkSynchronized
// conditions (WORK-SYNC, OVR-STATUS, ENV-*).
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
	if w := st.Work(b.Name); w != nil && w.Generation == b.Generation && (w.Abandon != abandon || !sameReportBack(w.ReportBack, reportBack)) {
		// Only the delete or report-back strategy changed: the Work carries them to the
		// member agent.
		nw := *w
		nw.Abandon, nw.ReportBack = abandon, copyReportBack(reportBack)
		st.PutWork(&nw)
		env.Record("work-synchronized", membership.Namespace(b.TargetCluster)+"/"+nw.Name,
			fmt.Sprintf("binding %s delete strategy abandon=%t, report back %s", b.Name, abandon, reportBackText(reportBack)))
		env.WorkWritten(&nw)
	}
	if w := st.Work(b.Name); w != nil && w.Generation == b.Generation {
		if c, ok := condition.Find(b.Conditions, condition.TypeWorkSynchronized); ok && c.ObservedGeneration == b.Generation {
			return // this generation's Work is written; its inputs are immutable snapshots
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
	cros, ros := st.NamedOverrides(b.ClusterResourceOverrideSnapshots, b.ResourceOverrideSnapshots)
	ovr := override.NewSet(cros, ros)
	var manifests []*unstructured.Unstructured
	var envelopes []*placement.NamespacedName
	var overrideErr, envelopeErr error
	if m != nil {
		for _, o := range snap.Manifests {
			if resources.IsEnvelope(o) {
				// Enveloped objects travel as they are: overrides do not apply to them.
				inner, envName, err := resources.Unwrap(o)
				if err != nil {
					envelopeErr = err
					continue
				}
				for _, in := range inner {
					manifests, envelopes = append(manifests, in), append(envelopes, envName)
				}
				continue
			}
			res := ovr.Apply(o, m.Member)
			if res.Err != nil {
				overrideErr = res.Err
				break
			}
			if !res.Deleted {
				manifests, envelopes = append(manifests, res.Manifest), append(envelopes, nil)
			}
		}
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
	if w := st.Work(b.Name); w == nil || w.Generation != b.Generation {
		w = &Work{Name: b.Placement + "-work", Binding: b.Name, Placement: b.Placement, Member: b.TargetCluster, Generation: b.Generation, Manifests: manifests, Envelopes: envelopes, Abandon: abandon, ReportBack: copyReportBack(reportBack)}
		st.PutWork(w)
		env.Record("work-synchronized", membership.Namespace(b.TargetCluster)+"/"+w.Name, fmt.Sprintf("binding %s generation %d, %d manifest(s)", b.Name, b.Generation, len(manifests)))
		env.WorkWritten(w)
	}
	set(condition.True(condition.TypeWorkSynchronized, ReasonAllWorkSynced, "All of the works are synchronized to the latest"))
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
