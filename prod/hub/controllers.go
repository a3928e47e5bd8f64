package hub

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/model/triggers"
	clusterv1beta1 "github.com/fleetsim/fleetsim/prod/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/prod/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/convert"
)

// WorkStatus is the production hub's status fan-in controller: it copies what member
// agents report in Works into bindings (model/hub.ReceiveWorkStatus). The simulator
// delivers those reports itself, so the trigger table has no entry for it.
const WorkStatus triggers.Controller = "work-status"

// placementControllers are the controllers Hub runs over the shared decisions, keyed as the
// trigger table keys them.
var placementControllers = []triggers.Controller{
	triggers.PolicySnapshot, triggers.Scheduler, triggers.Rollout, triggers.WorkGenerator,
	triggers.Eviction, triggers.StagedUpdate, WorkStatus,
}

// Hub runs model/hub's controllers on the API server: membership (MembershipReconciler),
// policy and resource snapshots, scheduler, rollout, work generator, eviction, staged
// updates and the Work status fan-in, plus the override snapshotter. Each is a
// controller-runtime controller with its own queue; what wakes which is the shared trigger
// table, as in the simulator: a controller's decision fires triggers.Changes into the other
// queues after its writes succeed, and watches turn changes made by users and member agents
// into the same Changes.
//
// Decisions are taken one at a time (as the simulator takes them), each on a fresh read of
// the hub's objects: a hub that restarts or fails over resumes from what is stored.
type Hub struct {
	Client client.Client
	// Reader reads the state each decision starts from. The manager's API reader (not its
	// cache) gives every decision the writes of the one before.
	Reader      client.Reader
	Resources   *ResourceLister
	Clock       clock.Clock // nil: the wall clock
	Eligibility member.EligibilityConfig
	Scheduler   *scheduler.Scheduler
	Log         logr.Logger
	Events      events.EventRecorder
	// Resync is how often every placement re-selects its resources, for hub resources of
	// kinds no watch covers. 0 means DefaultResync.
	Resync time.Duration

	decide  sync.Mutex
	mu      sync.Mutex
	queues  map[triggers.Controller]workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending map[triggers.Controller][]string // fired before the controller's queue existed
}

// flushTimeout bounds a decision's writes, which run to the end even when the hub is
// told to stop: a flush cut half-way is what the next hub would have to repair.
const flushTimeout = 20 * time.Second

// DefaultResync is how often placements re-select hub resources when nothing woke them.
const DefaultResync = time.Minute

// Fire queues what the trigger table says a change wakes, resolving the scopes on st (nil:
// read them from the API server).
func (h *Hub) fire(ctx context.Context, st *state, c triggers.Change, key, placementName, memberName string) {
	for _, t := range slices.Concat(triggers.For(c), extraTargets[c]) {
		for _, k := range h.keys(ctx, st, t.Scope, key, placementName, memberName) {
			h.enqueue(t.Controller, k)
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
	if st == nil {
		names, err := h.listKeys(ctx, scope, placementName)
		if err != nil {
			h.Log.Error(err, "cannot resolve a trigger's keys", "scope", string(scope))
		}
		return names
	}
	switch scope {
	case triggers.AllPlacements:
		return st.PlacementNames()
	case triggers.AllMembers:
		return st.MemberClusterNames()
	case triggers.PlacementBindings:
		var out []string
		for _, p := range st.PlacementNames() {
			if placementName == "" || p == placementName {
				for _, b := range st.Bindings(p) {
					out = append(out, b.Name)
				}
			}
		}
		return out
	case triggers.AllRuns:
		return st.UpdateRunNames()
	case triggers.AllEvictions:
		return slices.Sorted(maps.Keys(st.evictions))
	}
	return nil
}

// listKeys reads the keys of a scope from the API server, for changes fired outside a
// decision (by watches and the start-up trigger).
func (h *Hub) listKeys(ctx context.Context, scope triggers.Scope, placementName string) ([]string, error) {
	var l client.ObjectList
	var opts []client.ListOption
	switch scope {
	case triggers.AllPlacements:
		l = &v1beta1.ClusterResourcePlacementList{}
	case triggers.AllMembers:
		l = &clusterv1beta1.MemberClusterList{}
	case triggers.PlacementBindings:
		l = &v1beta1.ClusterResourceBindingList{}
		if placementName != "" {
			opts = append(opts, client.MatchingLabels{v1beta1.CRPTrackingLabel: placementName})
		}
	case triggers.AllRuns:
		l = &v1beta1.ClusterStagedUpdateRunList{}
	case triggers.AllEvictions:
		l = &v1beta1.ClusterResourcePlacementEvictionList{}
	default:
		return nil, nil
	}
	if err := h.Reader.List(ctx, l, opts...); err != nil {
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

func (h *Hub) enqueue(c triggers.Controller, key string) {
	if key == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queues[c]
	if q == nil {
		// Controllers start concurrently: keep the key until the queue is there.
		if h.pending == nil {
			h.pending = map[triggers.Controller][]string{}
		}
		h.pending[c] = append(h.pending[c], key)
		return
	}
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: key}})
}

// queueSource hands the hub controller c's queue when the controller starts, so fired
// changes can reach it, with the keys fired before it started.
func (h *Hub) queueSource(c triggers.Controller) source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.queues == nil {
			h.queues = map[triggers.Controller]workqueue.TypedRateLimitingInterface[reconcile.Request]{}
		}
		h.queues[c] = q
		for _, key := range h.pending[c] {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: key}})
		}
		delete(h.pending, c)
		return nil
	})
}

// SetupWithManager registers the controllers, their watches and the start-up trigger.
func (h *Hub) SetupWithManager(mgr ctrl.Manager) error {
	if h.Eligibility == (member.EligibilityConfig{}) {
		h.Eligibility = member.DefaultEligibility
	}
	if h.Scheduler == nil {
		h.Scheduler = scheduler.New(scheduler.Options{Eligibility: h.Eligibility})
	}
	for _, c := range placementControllers {
		b := ctrl.NewControllerManagedBy(mgr).Named(string(c)).WatchesRawSource(h.queueSource(c))
		// The watches of outside changes hang off the first controller; they route
		// through fire, not through its queue.
		if c == triggers.PolicySnapshot {
			b = h.watches(b)
		}
		if err := b.Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return h.reconcile(ctx, c, req.Name)
		})); err != nil {
			return err
		}
	}
	if err := (&OverrideSnapshotter{Client: h.Client, Reader: h.Reader, Log: h.Log.WithName("override"),
		OnSnapshot: func(ctx context.Context, name string) { h.fire(ctx, nil, triggers.OverrideChanged, name, "", "") },
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(h.tick))
}

// tick fires HubStarted once the controllers run (after winning the election), then
// HubResourceChanged every Resync.
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
			h.Resources.Refresh()
			h.fire(ctx, nil, triggers.HubResourceChanged, "", "", "")
		}
	}
}

func (h *Hub) clock() clock.Clock {
	if h.Clock == nil {
		return clock.New()
	}
	return h.Clock
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
		Watches(&corev1.Namespace{}, fireFor(func(old, new client.Object) []triggers.Change {
			if resources.ReservedNamespace(either(old, new).GetName()) {
				return nil // never placed, and the hub's own member namespaces come and go
			}
			return []triggers.Change{triggers.HubResourceChanged}
		}, byName))
	for _, gvk := range WatchedKinds {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		b = b.Watches(obj, fireFor(hubResourceChanges, byName))
	}
	return b
}

// WatchedKinds are the namespaced kinds whose changes reach placements at once (through
// metadata-only watches); objects of other kinds are picked up every Resync.
var WatchedKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"}, {Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ServiceAccount"}, {Version: "v1", Kind: "PersistentVolumeClaim"},
	{Version: "v1", Kind: "LimitRange"}, {Version: "v1", Kind: "ResourceQuota"},
	{Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}, {Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"}, {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, {Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
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

// statusChanged: an object was created with, or changed to, another status (as a user or
// member agent writes it).
func statusChanged[T client.Object](c triggers.Change, status func(T) any) func(old, new client.Object) []triggers.Change {
	return func(old, new client.Object) []triggers.Change {
		if new == nil || (old != nil && equality.Semantic.DeepEqual(status(old.(T)), status(new.(T)))) {
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

// reconcile runs one controller for one key on a fresh read of the hub's objects, writes
// what it changed, then fires the changes it made.
func (h *Hub) reconcile(ctx context.Context, c triggers.Controller, key string) (reconcile.Result, error) {
	h.decide.Lock()
	defer h.decide.Unlock()
	now := h.clock().Now()
	var st *state
	st, err := loadState(ctx, h.Reader, func() ([]*unstructured.Unstructured, error) {
		// Only the placement controller selects, for the placement it decides on.
		var sels []placement.ResourceSelector
		if p := st.placements[key]; p != nil {
			sels = p.CRP.Spec.ResourceSelectors
		}
		return h.Resources.List(ctx, sels)
	})
	if err != nil {
		return reconcile.Result{}, err
	}
	for _, w := range st.warnings {
		h.Log.Info("object left out of the hub's decisions", "reason", w.Error())
	}
	log := h.Log.WithValues("controller", string(c), "key", key)
	env := &decisionEnv{now: now, log: log}
	if c == WorkStatus {
		h.receiveWorkStatus(st, env, key)
	} else {
		(&mhub.Controllers{Store: st, Env: env, Scheduler: h.Scheduler, Eligibility: h.Eligibility}).Reconcile(c, key)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	flushErr := st.flush(fctx, h.Client, now)
	// Changes are fired even when the writes stopped part-way: some of them happened, and
	// every controller decides on a fresh read, so a change fired for nothing costs one
	// decision while a change lost could stall a rollout.
	for _, f := range env.fired {
		h.fire(ctx, st, f.change, f.key, f.placement, f.memberOf)
	}
	if flushErr != nil {
		if apierrors.IsConflict(flushErr) {
			// Someone wrote first: decide again on what they wrote.
			log.V(1).Info("retrying on fresh objects", "reason", flushErr.Error())
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, fmt.Errorf("%s %s: %w", c, key, flushErr)
	}
	h.sendEvents(st, env)
	// The simulator delivers the agent's report after every Work it writes; here the agent
	// may report nothing new (a Work whose manifests did not change), so the fan-in looks.
	for _, b := range env.worksWritten {
		h.enqueue(WorkStatus, b)
	}
	return reconcile.Result{RequeueAfter: env.requeue}, nil
}

// receiveWorkStatus runs the fan-in for the binding named key.
func (h *Hub) receiveWorkStatus(st *state, env mhub.Env, key string) {
	w, m := st.workObjs[key], st.works[key]
	if w == nil || m == nil {
		return
	}
	if r, ok := convert.WorkStatusToModel(w, m.Envelopes); ok {
		mhub.ReceiveWorkStatus(st, env, key, m.Generation, r)
	}
}

// sendEvents records what a decision did as Kubernetes events on the placement it was about.
func (h *Hub) sendEvents(st *state, env *decisionEnv) {
	for _, e := range env.records {
		if crp := st.crps[st.placementOf(e.subject)]; crp != nil {
			sendEvent(h.Events, crp, e)
		}
	}
}
