package hub

// Trigger wiring: how a change becomes wakes. Changes made outside the hub's controllers
// (watches of placements, members, Works, evictions, runs, approvals and namespaces; the
// hub's start; discovery read again) become trigger-table Changes, and fire resolves a
// Change to the controllers and keys the shared trigger table (model/triggers) names.
// Separate from queue.go: what a change wakes is the table's rule, shared with the
// simulator, while how a wake is queued is the production hub's own.

import (
	"context"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// fire queues what the trigger table says a change wakes. st, when set, is the decision
// that made the change: the bindings it wrote count for PlacementBindings even before the
// cache holds them. A change a binding-only decision made reaches placement-wide
// controllers after rolloutBatchDelay, so a burst of reports is decided once.
func (h *Hub) fire(ctx context.Context, st *state, c triggers.Change, key, placementName, memberName string) {
	h.fireExcept(ctx, st, c, key, placementName, memberName, nil)
}

// fireExcept is fire without the wakes skip says the decision already served (skip may be
// nil).
func (h *Hub) fireExcept(ctx context.Context, st *state, c triggers.Change, key, placementName, memberName string, skip func(triggers.Controller, string) bool) {
	delay := time.Duration(0)
	if st != nil && st.scope.bindingOnly() {
		delay = rolloutBatchDelay
	}
	for _, t := range slices.Concat(triggers.For(c), extraTargets[c]) {
		wide := delay > 0 && t.Controller != triggers.WorkGenerator && t.Controller != WorkStatus && t.Controller != triggers.Membership
		for _, k := range h.keys(ctx, st, t.Scope, key, placementName, memberName) {
			if skip != nil && skip(t.Controller, k) {
				continue
			}
			d := time.Duration(0)
			if wide {
				d = h.batch.hold(t.Controller, k)
			}
			if t.Controller == WorkStatus {
				// A member's report: the placement's rollout, soon, fans in every report
				// come in by then (fanInsFirst), writing their statuses before it decides;
				// the fan-in's own decision comes later, for a report the rollout did not
				// serve.
				h.batch.queued(placementName, k)
				wait := reportBatchDelay
				// Wall time: the report window is latency only (docs/architecture.md › Time).
				if h.awaited.arrived(placementName, k, time.Now()) {
					wait = reportWindow
				}
				h.enqueueAfter(triggers.Rollout, placementName, wait)
				d = fanInDelay
			}
			h.enqueueAfter(t.Controller, k, d)
		}
	}
}

func (h *Hub) keys(ctx context.Context, st *state, scope triggers.Scope, key, placementName, memberName string) []string {
	switch scope {
	case triggers.ThisObject:
		return []string{key}
	case triggers.OwningPlacement:
		return []string{placementName}
	case triggers.TargetMember:
		return []string{memberName}
	}
	names, err := h.listKeys(ctx, scope, placementName)
	if err != nil {
		h.Log.Error(err, "cannot resolve a trigger's keys", "scope", string(scope))
	}
	if scope == triggers.PlacementBindings && st != nil {
		for n, b := range st.bindings {
			if placementName == "" || b.Placement == placementName {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	return names
}

// listKeys reads the keys of a scope from the cache.
func (h *Hub) listKeys(ctx context.Context, scope triggers.Scope, placementName string) ([]string, error) {
	var l client.ObjectList
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	switch scope {
	case triggers.AllPlacements:
		l = &v1beta1.ClusterResourcePlacementList{}
	case triggers.AllMembers:
		l = &clusterv1beta1.MemberClusterList{}
	case triggers.PlacementBindings:
		l = &v1beta1.ClusterResourceBindingList{}
		if placementName != "" {
			opts = append(opts, client.MatchingFields{indexPlacement: placementName})
		}
	case triggers.AllRuns:
		l = &v1beta1.ClusterStagedUpdateRunList{}
	case triggers.AllEvictions:
		l = &v1beta1.ClusterResourcePlacementEvictionList{}
	default:
		return nil, nil
	}
	if err := h.Cache.List(ctx, l, opts...); err != nil {
		return nil, err
	}
	items, err := apimeta.ExtractList(l)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(items))
	for _, o := range items {
		if m, err := apimeta.Accessor(o); err == nil {
			names = append(names, m.GetName())
		}
	}
	slices.Sort(names)
	return names, nil
}

// tick fires HubStarted once the controllers run (after winning the election), then reads
// discovery again every Resync: the informers started on first selection tell of changes
// to objects, but only discovery tells of kinds added to the hub; when they changed, every
// placement selects again.
func (h *Hub) tick(ctx context.Context) error {
	clk := h.clock()
	h.fire(ctx, nil, triggers.HubStarted, "", "", "")
	every := h.Resync
	if every <= 0 {
		every = DefaultResync
	}
	t := clk.Ticker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if h.Resources.Refresh() {
				h.fire(ctx, nil, triggers.HubResourceChanged, "", "", "")
			}
		}
	}
}

// watches turns changes made outside the hub's controllers into trigger-table Changes.
func (h *Hub) watches(b *ctrl.Builder) *ctrl.Builder {
	fireFor := func(change func(old, new client.Object) []triggers.Change, keys func(client.Object) (key, placement, member string)) handler.EventHandler {
		run := func(ctx context.Context, old, new client.Object) {
			key, p, m := keys(either(old, new))
			for _, c := range change(old, new) {
				h.fire(ctx, nil, c, key, p, m)
			}
		}
		return handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				run(ctx, nil, e.Object)
			},
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				run(ctx, e.ObjectOld, e.ObjectNew)
			},
			DeleteFunc: func(ctx context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				run(ctx, e.Object, nil)
			},
		}
	}
	byName := func(o client.Object) (string, string, string) { return o.GetName(), o.GetName(), "" }
	b = b.
		Watches(&v1beta1.ClusterResourcePlacement{}, fireFor(placementChanges, byName)).
		Watches(&clusterv1beta1.MemberCluster{}, fireFor(memberChanges, func(o client.Object) (string, string, string) {
			return o.GetName(), "", o.GetName()
		})).
		Watches(&v1beta1.Work{}, fireFor(statusChanged(workReported, func(w *v1beta1.Work) any { return w.Status }), func(o client.Object) (string, string, string) {
			return o.GetLabels()[v1beta1.ParentBindingLabel], o.GetLabels()[v1beta1.CRPTrackingLabel], ""
		})).
		Watches(&v1beta1.ClusterResourcePlacementEviction{}, fireFor(created(triggers.EvictionCreated), byName)).
		Watches(&v1beta1.ClusterStagedUpdateRun{}, fireFor(specChanged(triggers.UpdateRunChanged), byName)).
		Watches(&v1beta1.ClusterApprovalRequest{}, fireFor(statusChanged(triggers.ApprovalChanged,
			func(a *v1beta1.ClusterApprovalRequest) any { return a.Status }), byName)).
		Watches(&corev1.Namespace{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if !e.IsInInitialList { // a starting hub decides every placement again (HubStarted)
					h.hubObjectChanged(ctx, nil, e.Object)
				}
			},
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				h.hubObjectChanged(ctx, e.ObjectOld, e.ObjectNew)
			},
			DeleteFunc: func(ctx context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				h.hubObjectChanged(ctx, e.Object, nil)
			},
		})
	return h.watchCRDs(b)
}

// hubObjectChanged wakes the placement controller for the placements that selected, or may
// now select, a hub object that changed (resources.MaySelect): the other placements'
// selections cannot have changed. Objects of other kinds than Namespace reach it through
// the informers ResourceLister starts on first selection.
func (h *Hub) hubObjectChanged(ctx context.Context, old, new client.Object) {
	o := either(old, new)
	if o == nil {
		return
	}
	if _, isNS := o.(*corev1.Namespace); isNS {
		if resources.ReservedNamespace(o.GetName()) {
			return // never placed, and the hub's own member namespaces come and go
		}
	} else if len(hubResourceChanges(old, new)) == 0 {
		return
	}
	gvk := o.GetObjectKind().GroupVersionKind()
	if _, isNS := o.(*corev1.Namespace); isNS {
		gvk = corev1.SchemeGroupVersion.WithKind("Namespace")
	}
	refs := make([]resources.ObjectRef, 0, 2)
	for _, x := range []client.Object{old, new} {
		if x == nil {
			continue
		}
		ref := resources.ObjectRef{GVK: gvk, Namespace: x.GetNamespace(), Name: x.GetName(), Labels: x.GetLabels()}
		if ns := x.GetNamespace(); ns != "" {
			nsObj := &corev1.Namespace{}
			if err := h.Cache.Get(ctx, client.ObjectKey{Name: ns}, nsObj, client.UnsafeDisableDeepCopy); err == nil {
				ref.NamespaceLabels, ref.NamespaceKnown = nsObj.Labels, true
			}
		}
		refs = append(refs, ref)
	}
	var crps v1beta1.ClusterResourcePlacementList
	if err := h.Cache.List(ctx, &crps, client.UnsafeDisableDeepCopy); err != nil {
		h.Log.Error(err, "cannot list placements to wake for a hub object", "object", o.GetName())
		return
	}
	for i := range crps.Items {
		sels := selectorsOf(&crps.Items[i])
		for _, ref := range refs {
			if resources.MaySelect(sels, ref) {
				for _, t := range triggers.For(triggers.HubResourceChanged) {
					h.enqueue(t.Controller, crps.Items[i].Name)
				}
				break
			}
		}
	}
}

// selectorsOf are a placement's resource selectors in the model's terms.
func selectorsOf(crp *v1beta1.ClusterResourcePlacement) []placement.ResourceSelector {
	out := make([]placement.ResourceSelector, 0, len(crp.Spec.ResourceSelectors))
	for _, s := range crp.Spec.ResourceSelectors {
		out = append(out, placement.ResourceSelector{Group: s.Group, Version: s.Version, Kind: s.Kind, Name: s.Name, LabelSelector: s.LabelSelector})
	}
	return out
}

// hubResourceChanges: an object that placements could select changed. Objects in reserved
// namespaces are never placed, and an update that keeps the generation, labels and
// annotations of an object that has generations only moved its status.
func hubResourceChanges(old, new client.Object) []triggers.Change {
	if resources.ReservedNamespace(either(old, new).GetNamespace()) {
		return nil
	}
	if old != nil && new != nil && new.GetGeneration() != 0 && old.GetGeneration() == new.GetGeneration() &&
		reflect.DeepEqual(old.GetLabels(), new.GetLabels()) && reflect.DeepEqual(old.GetAnnotations(), new.GetAnnotations()) {
		return nil
	}
	return []triggers.Change{triggers.HubResourceChanged}
}

// workReported is a member agent's report in a Work's status: it wakes the fan-in.
const workReported triggers.Change = "member reported in a Work"

// extraTargets extend the shared trigger table with the production hub's own controller,
// the fan-in, which reacts to one change only.
var extraTargets = map[triggers.Change][]triggers.Target{
	workReported: {{Controller: WorkStatus, Scope: triggers.ThisObject}},
}

// either is the object of a watch event: the new one, or the old one of a deletion.
func either(old, new client.Object) client.Object {
	if new == nil {
		return old
	}
	return new
}

// statusChanged: an object was created with a status, or changed to another status (as a
// user or member agent writes it). One created without a status (a Work the hub just
// wrote) has nothing to report yet; one listed with a status by a new hub's informers does.
func statusChanged[T client.Object](c triggers.Change, status func(T) any) func(old, new client.Object) []triggers.Change {
	return func(old, new client.Object) []triggers.Change {
		switch {
		case new == nil:
			return nil
		case old == nil:
			if reflect.ValueOf(status(new.(T))).IsZero() {
				return nil
			}
		case equality.Semantic.DeepEqual(status(old.(T)), status(new.(T))):
			return nil
		}
		return []triggers.Change{c}
	}
}

func created(c triggers.Change) func(old, new client.Object) []triggers.Change {
	return func(old, new client.Object) []triggers.Change {
		if old == nil && new != nil {
			return []triggers.Change{c}
		}
		return nil
	}
}

func specChanged(c triggers.Change) func(old, new client.Object) []triggers.Change {
	return func(old, new client.Object) []triggers.Change {
		if new != nil && (old == nil || old.GetGeneration() != new.GetGeneration()) {
			return []triggers.Change{c}
		}
		return nil
	}
}

// placementChanges: a new spec generation or the start of a deletion.
func placementChanges(old, new client.Object) []triggers.Change {
	switch {
	case new == nil:
		return nil
	case new.GetDeletionTimestamp() != nil && (old == nil || old.GetDeletionTimestamp() == nil):
		return []triggers.Change{triggers.PlacementDeleted}
	case old == nil || old.GetGeneration() != new.GetGeneration():
		return []triggers.Change{triggers.PlacementChanged}
	}
	return nil
}

// memberChanges classifies a MemberCluster change as the simulator's agent and actions do.
func memberChanges(oldObj, newObj client.Object) []triggers.Change {
	if newObj == nil {
		// The member has left. Its leave began when its deletion was asked for, which fired
		// MemberLeaving; the simulator fires nothing when the member is finally gone.
		return nil
	}
	n := newObj.(*clusterv1beta1.MemberCluster)
	if oldObj == nil {
		return []triggers.Change{triggers.MemberCreated}
	}
	o := oldObj.(*clusterv1beta1.MemberCluster)
	var out []triggers.Change
	if n.DeletionTimestamp != nil && o.DeletionTimestamp == nil {
		out = append(out, triggers.MemberLeaving)
	}
	if !reflect.DeepEqual(o.Labels, n.Labels) {
		out = append(out, triggers.MemberLabelsChanged)
	}
	for _, t := range o.Spec.Taints {
		if !slices.Contains(n.Spec.Taints, t) {
			out = append(out, triggers.MemberTaintRemoved)
			break
		}
	}
	// A leaving member never becomes eligible again: what it reports while it leaves wakes
	// nobody, as the simulator's leaving agent wakes only membership.
	if n.DeletionTimestamp == nil && !equality.Semantic.DeepEqual(conditionStates(o), conditionStates(n)) {
		out = append(out, triggers.MemberBecameEligible)
	}
	if !equality.Semantic.DeepEqual(o.Status.Properties, n.Status.Properties) || !equality.Semantic.DeepEqual(o.Status.ResourceUsage.Allocatable, n.Status.ResourceUsage.Allocatable) ||
		!equality.Semantic.DeepEqual(o.Status.ResourceUsage.Available, n.Status.ResourceUsage.Available) {
		out = append(out, triggers.MemberPropsChanged)
	}
	return out
}

// conditionStates are a MemberCluster's condition types, statuses and reasons: what
// eligibility reads, without the times a heartbeat moves.
func conditionStates(mc *clusterv1beta1.MemberCluster) map[string]string {
	out := map[string]string{}
	for _, c := range mc.Status.Conditions {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	for _, a := range mc.Status.AgentStatus {
		for _, c := range a.Conditions {
			out[string(a.Type)+"/"+c.Type] = string(c.Status)
		}
	}
	return out
}
