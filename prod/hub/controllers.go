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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/model/triggers"
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
// Decisions read the manager's informer cache, scoped to what they decide on, and run in
// parallel under the rules of consistency.go: serial per placement for decisions about a
// whole placement, serial per binding for decisions about one, at most Workers at a time.
type Hub struct {
	// Client writes; set up by Setup to remember every write as an expectation.
	Client client.Client
	// Cache is what decisions read: the manager's cache, with the field indexes of cache.go.
	Cache client.Reader
	// Reader is the API server itself, for the few reads that must see the latest stored
	// version (a binding flush just marked deleting).
	Reader      client.Reader
	Resources   *ResourceLister
	Clock       clock.Clock // nil: the wall clock
	Eligibility member.EligibilityConfig
	// schedulers hands each decision a scheduler of its own: a Scheduler reuses scratch
	// memory between its decisions, so one shared by parallel decisions would mix their
	// candidates and picks (two placements once swapped bindings that way).
	schedulers sync.Pool
	Log        logr.Logger
	Events     events.EventRecorder
	// Resync is how often discovery is read again, for kinds added to the hub since.
	// 0 means DefaultResync.
	Resync time.Duration
	// Workers is how many decisions may run at once; 0 means DefaultWorkers.
	Workers int
	// MaxDecisions is how many clusters a policy snapshot's status lists; 0 means
	// scheduler.DefaultMaxDecisions.
	MaxDecisions int
	// CheckInvariants evaluates the fleet invariants after every decision (invariants.go).
	CheckInvariants bool
	checker         *invariantChecker

	exp     *expectations
	wakes   wakeLedger
	locks   keyLocks
	members memberMemo
	batch   fanInBatch
	awaited awaitedReports
	sem     chan struct{}

	mu      sync.Mutex
	queues  map[triggers.Controller]workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending map[triggers.Controller][]string // fired before the controller's queue existed
}

// DefaultWorkers is how many decisions run at once unless Workers says otherwise.
const DefaultWorkers = 8

// rolloutBatchDelay: a report on one binding wakes its placement's placement-wide
// controllers this much later, so a burst of reports from many members is decided once.
const rolloutBatchDelay = 50 * time.Millisecond

// reportBatchDelay: a member's report wakes its placement's rollout this much later, to
// serve the fan-ins of the reports that arrive together in one decision.
const reportBatchDelay = 20 * time.Millisecond

// reportWindow: a report wakes its placement's rollout this much later instead while
// other reports of the placement are awaited (awaitedReports).
const reportWindow = 300 * time.Millisecond

// fanInDelay: a report's own fan-in decision waits this long, for the placement's rollout to
// serve it first.
const fanInDelay = reportWindow + 200*time.Millisecond

// flushTimeout bounds a decision's writes, which run to the end even when the hub is
// told to stop: a flush cut half-way is what the next hub would have to repair.
const flushTimeout = 20 * time.Second

// DefaultResync is how often discovery is read again, for kinds added to the hub.
const DefaultResync = 5 * time.Minute

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

func (h *Hub) enqueue(c triggers.Controller, key string) { h.enqueueAfter(c, key, 0) }

func (h *Hub) enqueueAfter(c triggers.Controller, key string, d time.Duration) {
	if key == "" {
		return
	}
	if ledgered[c] {
		h.wakes.woke(c, key)
	}
	h.add(c, key, d)
}

// requeueAt wakes controller c for key again after d: a timed wake, which only a decision
// taken after d serves.
func (h *Hub) requeueAt(c triggers.Controller, key string, d time.Duration) {
	if ledgered[c] {
		h.wakes.wokeAt(c, key, time.Now().Add(d))
	}
	h.add(c, key, d)
}

// ledgered are the controllers whose wakes other decisions can serve inline (wakes.go).
var ledgered = map[triggers.Controller]bool{
	triggers.PolicySnapshot: true, triggers.Scheduler: true, triggers.Rollout: true,
	triggers.WorkGenerator: true, WorkStatus: true,
}

func (h *Hub) add(c triggers.Controller, key string, d time.Duration) {
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
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: key}}
	if d > 0 {
		q.AddAfter(req, d)
		return
	}
	q.Add(req)
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
	opts := scheduler.Options{Eligibility: h.Eligibility, MaxDecisions: h.MaxDecisions}
	h.schedulers.New = func() any { return scheduler.New(opts) }
	if err := h.prepare(mgr); err != nil {
		return err
	}
	for _, c := range placementControllers {
		b := ctrl.NewControllerManagedBy(mgr).Named(string(c)).WatchesRawSource(h.queueSource(c)).
			WithOptions(controller.Options{MaxConcurrentReconciles: h.workers()})
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
	if err := mgr.Add(manager.RunnableFunc(h.warm)); err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(h.tick))
}

// warm starts the resource informers in the background once the hub leads; a failure
// only leaves them to start on first selection, as before.
func (h *Hub) warm(ctx context.Context) error {
	if h.Resources == nil {
		return nil
	}
	if err := h.Resources.Warm(ctx); err != nil && ctx.Err() == nil {
		h.Log.Info("resource informers start on first selection instead", "reason", err.Error())
	}
	return nil
}

func (h *Hub) workers() int {
	if h.Workers <= 0 {
		return DefaultWorkers
	}
	return h.Workers
}

// trackedKinds are the kinds the hub writes and reads back: their informers feed the
// expectations of consistency.go.
var trackedKinds = []client.Object{
	&v1beta1.ClusterResourcePlacement{}, &v1beta1.ClusterSchedulingPolicySnapshot{}, &v1beta1.ClusterResourceSnapshot{},
	&v1beta1.ClusterResourceBinding{}, &v1beta1.Work{}, &v1beta1.ClusterApprovalRequest{},
	&v1beta1.ClusterResourcePlacementEviction{}, &v1beta1.ClusterStagedUpdateRun{},
	&clusterv1beta1.MemberCluster{}, &clusterv1beta1.InternalMemberCluster{}, &corev1.Namespace{},
}

// prepare readies what decisions share, once: the cache's field indexes, the expectations
// fed by the informers of trackedKinds, the recording client and the worker slots.
func (h *Hub) prepare(mgr ctrl.Manager) error {
	if h.exp != nil {
		return nil
	}
	ctx := context.Background()
	if err := registerIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	h.exp = newExpectations()
	if h.CheckInvariants {
		h.checker = newInvariantChecker()
	}
	for _, o := range trackedKinds {
		gvk, err := apiutil.GVKForObject(o, mgr.GetScheme())
		if err != nil {
			return err
		}
		inf, err := mgr.GetCache().GetInformer(ctx, o)
		if err != nil {
			return fmt.Errorf("informer for %s: %w", gvk.Kind, err)
		}
		if _, err := inf.AddEventHandler(h.exp.handler(gvk)); err != nil {
			return fmt.Errorf("watch %s: %w", gvk.Kind, err)
		}
	}
	if h.Client == nil {
		h.Client = mgr.GetClient()
	}
	h.Client = &recordingClient{Client: h.Client, exp: h.exp}
	if h.Cache == nil {
		h.Cache = mgr.GetCache()
	}
	if h.Reader == nil {
		h.Reader = mgr.GetAPIReader()
	}
	h.sem = make(chan struct{}, h.workers())
	if h.Resources != nil && h.Resources.Informers == nil {
		h.Resources.Reader, h.Resources.Informers = mgr.GetCache(), mgr.GetCache()
		h.Resources.OnChange = h.hubObjectChanged
	}
	return nil
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
	return b
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

// reconcile runs one controller for one key: it takes the locks of consistency.go's rule 3
// and a worker slot, waits until the cache holds the hub's own writes, reads the decision's
// scope from the cache, decides, writes what changed, then fires the changes it made.
func (h *Hub) reconcile(ctx context.Context, c triggers.Controller, key string) (reconcile.Result, error) {
	arrived := time.Now()
	if c == WorkStatus {
		// Last, after the flush and the changes it fired: the placement-wide decisions
		// held back for the placement's fan-ins go once the last one is done.
		defer h.fanInDone(key)
	}
	if h.servedInline(c, key) {
		return reconcile.Result{}, nil
	}
	h.exp.wait(ctx, writesOf("", key))
	sc, unlock, err := h.lock(ctx, c, key)
	if err != nil {
		return reconcile.Result{}, err
	}
	defer unlock()
	if h.servedInline(c, key) { // while this one waited for the lock
		return reconcile.Result{}, nil
	}
	m := h.wakes.mark(time.Now())
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return reconcile.Result{}, nil
	}
	defer func() { <-h.sem }()
	start := time.Now()
	decisionWaitSeconds.WithLabelValues(string(c)).Observe(start.Sub(arrived).Seconds())
	defer func() { decisionSeconds.WithLabelValues(string(c)).Observe(time.Since(start).Seconds()) }()
	// The previous holder of the locks may have written since the first wait. A hub told to
	// stop decides nothing more: a decision on a cache that stopped following the API
	// server would write stale objects beside the next hub's.
	if sc.bindingOnly() {
		h.exp.wait(ctx, writesOfBinding(sc.placement, sc.binding))
	} else {
		h.exp.wait(ctx, writesOf(sc.placement, key))
	}
	if ctx.Err() != nil {
		return reconcile.Result{}, nil
	}
	now := h.clock().Now()
	var st *state
	var waited sync.Once
	members := memberReader{memo: &h.members, before: func() { waited.Do(func() { h.exp.wait(ctx, memberWrites) }) }}
	load := func() (*state, error) {
		return loadState(ctx, h.Cache, h.Reader, sc, members, func() ([]*unstructured.Unstructured, error) {
			// Only the placement controller selects, for the placement it decides on.
			var sels []placement.ResourceSelector
			if p := st.placements[key]; p != nil {
				sels = p.CRP.Spec.ResourceSelectors
			}
			return h.Resources.List(ctx, sels)
		})
	}
	if st, err = load(); err != nil {
		return reconcile.Result{}, err
	}
	log := h.Log.WithValues("controller", string(c), "key", key)
	var unwritten []string // fan-ins whose changes this decision's flush writes
	if sc.allBindings {
		if st, m, unwritten, err = h.fanInsFirst(ctx, st, sc, key, m, now, log, load); err != nil {
			if ctx.Err() != nil {
				return reconcile.Result{}, nil
			}
			if retryable(err) {
				decisionRetries.WithLabelValues(string(c)).Inc()
				log.V(1).Info("retrying on fresh objects", "reason", err.Error())
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, fmt.Errorf("%s %s: %w", c, key, err)
		}
	}
	var probe *invariantProbe
	if h.checker != nil {
		probe = h.checker.before(st)
	}
	env := &decisionEnv{now: now, log: log}
	var served *inlined // the wakes this decision served by running controllers inline
	if c == WorkStatus {
		h.receiveWorkStatus(st, env, key)
	} else {
		sched := h.schedulers.Get().(*scheduler.Scheduler)
		ctrls := &mhub.Controllers{Store: st, Env: env, Scheduler: sched, Eligibility: h.Eligibility}
		ctrls.Reconcile(c, key)
		if sc.allBindings {
			served = runInline(ctrls, st, env, c, key, h.dueWakes(st, sc.placement, m))
		}
		h.schedulers.Put(sched)
	}
	for _, w := range st.warnings {
		h.Log.V(1).Info("object left out of the hub's decisions", "reason", w.Error())
	}
	// Works this decision creates have no report to fan in: the agent's first report
	// wakes the fan-in through the Work's watch.
	var newWorks map[string]bool
	for _, b := range env.worksWritten {
		if st.workObjs[b] == nil {
			if newWorks == nil {
				newWorks = map[string]bool{}
			}
			newWorks[b] = true
		}
	}
	// Before the flush: an agent may report on its Work before the rest is written. A
	// flush that fails leaves Works awaited that were not written, for awaitLimit at most.
	writing := time.Now()
	for _, b := range env.worksWritten {
		h.awaited.expect(st.placementOf(b), b, writing)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	flushErr := st.flush(fctx, h.Client, now)
	// Changes are fired even when the writes stopped part-way: some of them happened, and
	// every controller decides on current objects, so a change fired for nothing costs one
	// decision while a change lost could stall a rollout.
	if flushErr != nil {
		// What ran inline may not be written: every controller it woke decides again on
		// its own.
		served = nil
	}
	for i, f := range env.fired {
		h.fireExcept(ctx, st, f.change, f.key, f.placement, f.memberOf, served.skip(i))
	}
	if flushErr != nil {
		if retryable(flushErr) {
			// Someone wrote first, or the decision was made on a cache that missed a
			// write: decide again on fresh objects.
			decisionRetries.WithLabelValues(string(c)).Inc()
			log.V(1).Info("retrying on fresh objects", "reason", flushErr.Error())
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, fmt.Errorf("%s %s: %w", c, key, flushErr)
	}
	h.wakes.served(c, key, m)
	for _, b := range unwritten {
		h.wakes.served(WorkStatus, b, m)
		h.fanInDone(b)
	}
	served.note(&h.wakes, m)
	for _, r := range env.requeues {
		h.requeueAt(r.c, r.key, r.after)
	}
	h.sendEvents(st, env)
	if probe != nil {
		for _, v := range h.checker.after(st, probe, now) {
			h.reportViolation(st, log, v)
		}
	}
	// The simulator delivers the agent's report after every Work it writes; here the agent
	// may report nothing new (a Work whose manifests did not change), so the fan-in looks.
	for _, b := range env.worksWritten {
		if !newWorks[b] {
			h.batch.queued(st.placementOf(b), b)
			h.enqueue(WorkStatus, b)
		}
	}
	return reconcile.Result{}, nil
}

// fanInDone notes that binding's queued fan-in ran or was served: once its placement has
// none left, the placement-wide decisions held back for them go.
func (h *Hub) fanInDone(binding string) {
	p, wide := h.batch.done(binding)
	for _, c := range wide {
		h.enqueueAfter(c, p, rolloutBatchDelay)
	}
}

// fanInsFirst runs, in a placement-wide decision at m, the queued fan-ins of the
// placement's bindings (members' reports) and writes what they changed before anything
// else is decided: a binding's new status must be stored before any write of a decision
// that counted it, such as a rollout updating the next binding within its budget, or a
// reader (and a hub killed between the two writes) would see the budget broken. When the
// reports changed a condition, the decision reads again, at a new mark, what it wrote; a
// restarted hub's reports are mostly known already and change nothing.
//
// When no condition changed, the fan-ins are served only once the decision's own flush has
// written what else they changed: it returns them as unwritten.
func (h *Hub) fanInsFirst(ctx context.Context, st *state, sc scope, key string, m mark, now time.Time, log logr.Logger, load func() (*state, error)) (*state, mark, []string, error) {
	var fanIns []string
	for _, b := range slices.Sorted(maps.Keys(st.bindings)) {
		if st.bindings[b].Placement == sc.placement && st.works[b] != nil && h.wakes.due(WorkStatus, b, m) {
			fanIns = append(fanIns, b)
		}
	}
	if len(fanIns) == 0 {
		return st, m, nil, nil
	}
	env := &decisionEnv{now: now, log: log.WithValues("fanIns", len(fanIns))}
	var probe *invariantProbe
	if h.checker != nil {
		probe = h.checker.before(st)
	}
	for _, b := range fanIns {
		h.receiveWorkStatus(st, env, b)
	}
	served := func() {
		for _, b := range fanIns {
			h.wakes.served(WorkStatus, b, m)
			h.fanInDone(b)
		}
	}
	if len(env.fired) == 0 {
		// No condition changed: what else changed (observation times, failed manifests
		// that follow the conditions) is written with the rest of the decision.
		return st, m, fanIns, nil
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	err := st.flush(fctx, h.Client, now)
	for _, f := range env.fired {
		h.fire(ctx, st, f.change, f.key, f.placement, f.memberOf)
	}
	if err != nil {
		return nil, m, nil, err
	}
	served()
	h.sendEvents(st, env)
	if probe != nil {
		for _, v := range h.checker.after(st, probe, now) {
			h.reportViolation(st, log, v)
		}
	}
	m = h.wakes.mark(time.Now())
	h.exp.wait(ctx, writesOf(sc.placement, key))
	if ctx.Err() != nil {
		return nil, m, nil, ctx.Err()
	}
	st, err = load()
	return st, m, nil, err
}

// servedInline tells whether controller c's decision about key has nothing left to serve:
// another decision ran c for key on objects newer than every wake (wakes.go).
func (h *Hub) servedInline(c triggers.Controller, key string) bool {
	if !ledgered[c] || h.wakes.waiting(c, key) {
		return false
	}
	wakesServedInline.WithLabelValues(string(c)).Inc()
	return true
}

// dueWakes are the wakes a placement-wide decision serves besides its own and the fan-ins
// (fanInsFirst): the queued work generator runs of its placement's bindings, and the
// queued decisions of the other controllers of placementChain for the placement.
type dueWakes struct {
	works []string
	wide  map[triggers.Controller]bool
}

// dueWakes finds, in sorted binding order, what a placement-wide decision at m about
// placement serves besides its own wake.
func (h *Hub) dueWakes(st *state, placement string, m mark) dueWakes {
	var d dueWakes
	for _, b := range slices.Sorted(maps.Keys(st.bindings)) {
		if st.bindings[b].Placement != placement {
			continue
		}
		if h.wakes.due(triggers.WorkGenerator, b, m) {
			d.works = append(d.works, b)
		}
	}
	for _, c := range placementChain {
		if h.wakes.due(c, placement, m) {
			if d.wide == nil {
				d.wide = map[triggers.Controller]bool{}
			}
			d.wide[c] = true
		}
	}
	return d
}

// inlined are the wakes a placement-wide decision served by running controllers inline:
// fired changes before index wide[c] woke controller c for the placement, which then ran
// on the state they made; fired changes before index works[b] woke the work generator for
// binding b, which then ran on it.
type inlined struct {
	placement string
	wide      map[triggers.Controller]int
	works     map[string]int
}

// note tells the ledger which queued wakes the decision at m served (in may be nil).
func (in *inlined) note(l *wakeLedger, m mark) {
	if in == nil {
		return
	}
	for c := range in.wide {
		l.served(c, in.placement, m)
	}
	for b := range in.works {
		l.served(triggers.WorkGenerator, b, m)
	}
}

// skip says which wakes of the i-th fired change are already served (nil: none).
func (in *inlined) skip(i int) func(triggers.Controller, string) bool {
	if in == nil {
		return nil
	}
	return func(c triggers.Controller, key string) bool {
		if c == triggers.WorkGenerator {
			n, ok := in.works[key]
			return ok && i < n
		}
		return key == in.placement && i < in.wide[c]
	}
}

// placementChain is the order in which the placement-wide controllers wake each other for
// one placement: a new policy snapshot wakes the scheduler, new bindings the rollout.
var placementChain = []triggers.Controller{triggers.PolicySnapshot, triggers.Scheduler, triggers.Rollout}

// runInline runs, inside a placement-wide decision about placement key, the controllers
// later in placementChain that its changes wake for the same placement, on the state the
// earlier ones left, and then the work generator for the bindings they
// changed (generateWorksInline). A new placement is then snapshotted, scheduled, bound and
// given its Works in one decision and one flush instead of three decisions a queue hop
// apart, each writing the bindings again; the simulator runs the same controllers in the
// same order, one event each. Changes fired after a controller's inline run wake it as
// usual. The decision holds the placement's lock exclusively (rule 3 of consistency.go),
// and its scope loads every binding and Work of the placement.
//
// The work generator's changes (the bindings' Overridden and WorkSynchronized conditions)
// wake the chain again, and so may the chain's own: the chain then runs again, each
// controller for the wakes fired since it last ran, up to inlineRounds times, so that the
// decision's one flush holds the placement's status with its Works (not a second decision
// a queue hop later, which would write the placement's status again, and hold the
// placement's lock while its first reports come in).
//
// Queued wakes the decision serves as well (due) run too: a chain controller with a queued
// wake runs in the first round it comes to, a binding's queued work generator in the first
// generateWorksInline.
func runInline(ctrls *mhub.Controllers, st *state, env *decisionEnv, c triggers.Controller, key string, due dueWakes) *inlined {
	in := &inlined{placement: key, wide: map[triggers.Controller]int{}, works: map[string]int{}}
	i := slices.Index(placementChain, c)
	if i < 0 {
		// An eviction or a staged update run: the chain's wakes go to the queue.
		generateWorksInline(ctrls, st, env, in.works, due.works)
		return in
	}
	in.wide[c] = 0 // its own wakes wait for the next round
	for round := range inlineRounds {
		ran := false
		for _, next := range placementChain {
			if round == 0 && slices.Index(placementChain, next) <= i {
				continue
			}
			last, done := in.wide[next]
			if (!done && due.wide[next]) || wakes(env.fired[last:], next, key) {
				in.wide[next] = len(env.fired)
				ctrls.Reconcile(next, key)
				ran = true
			}
		}
		if !generateWorksInline(ctrls, st, env, in.works, due.works) && !ran {
			break
		}
	}
	return in
}

// inlineRounds bounds how often one decision runs the chain again: a new placement needs
// two (the chain, then the status of what the work generator made).
const inlineRounds = 3

// wakes tells whether any of the fired changes wakes controller c for placement p.
func wakes(fired []firing, c triggers.Controller, p string) bool {
	for _, f := range fired {
		for _, t := range triggers.For(f.change) {
			if t.Controller == c && ((t.Scope == triggers.OwningPlacement && f.placement == p) || (t.Scope == triggers.ThisObject && f.key == p)) {
				return true
			}
		}
	}
	return false
}

// generateWorksInline runs the work generator, inside a placement-wide decision (scheduler,
// rollout, eviction, staged update run), for every binding the decision changed (created,
// bound, moved to a new snapshot), as the trigger table would next: a rollout then writes
// each binding's spec and status once, with its Work, instead of a status write of its own
// and another by a work generator decision a queue hop later, and a scheduler's new
// bindings need no decision each to find nothing to generate yet. A binding the decision
// deleted is left to its own decision.
//
// served[b] is the number of fired changes the work generator has served for binding b: it
// runs again for b only on a change fired after that (its own changes to b are served).
// It says whether it ran.
func generateWorksInline(ctrls *mhub.Controllers, st *state, env *decisionEnv, served map[string]int, queued []string) bool {
	ran := false
	for i := 0; i < len(env.fired); i++ { // the work generator may fire more
		f := env.fired[i]
		if n, ok := served[f.key]; f.change != triggers.BindingChanged || (ok && i < n) || st.bindings[f.key] == nil {
			continue
		}
		ctrls.Reconcile(triggers.WorkGenerator, f.key)
		served[f.key] = len(env.fired)
		ran = true
	}
	for _, b := range queued { // once each, for wakes queued before the decision read
		if _, ok := served[b]; ok || st.bindings[b] == nil {
			continue
		}
		ctrls.Reconcile(triggers.WorkGenerator, b)
		served[b] = len(env.fired)
		ran = true
	}
	return ran
}

// retryable errors mean the decision was made on objects that changed since: it is taken
// again on fresh ones.
func retryable(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err)
}

// lock resolves what a decision is about and takes its locks (consistency.go, rule 3).
func (h *Hub) lock(ctx context.Context, c triggers.Controller, key string) (scope, func(), error) {
	switch c {
	case triggers.PolicySnapshot, triggers.Scheduler, triggers.Rollout:
		return scope{placement: key, allBindings: true}, h.locks.placementWide(key), nil
	case triggers.Eviction:
		e := &v1beta1.ClusterResourcePlacementEviction{}
		ok, err := get(ctx, h.Cache, key, "", e)
		if err != nil || !ok {
			return scope{eviction: key}, func() {}, err
		}
		p := e.Spec.PlacementName
		return scope{eviction: key, placement: p, allBindings: true}, h.locks.placementWide(p), nil
	case triggers.StagedUpdate:
		r := &v1beta1.ClusterStagedUpdateRun{}
		ok, err := get(ctx, h.Cache, key, "", r)
		if err != nil || !ok {
			return scope{run: key}, func() {}, err
		}
		p := r.Spec.PlacementName
		return scope{run: key, placement: p, allBindings: true}, h.locks.placementWide(p), nil
	}
	// A decision about one binding: its placement is on its label, or on its Work's when
	// the binding is gone.
	p := ""
	b := &v1beta1.ClusterResourceBinding{}
	if err := h.Cache.Get(ctx, client.ObjectKey{Name: key}, b, client.UnsafeDisableDeepCopy); err == nil {
		p = b.Labels[v1beta1.CRPTrackingLabel]
	} else if !apierrors.IsNotFound(err) {
		return scope{}, nil, fmt.Errorf("get ClusterResourceBinding %s: %w", key, err)
	} else {
		var ws v1beta1.WorkList
		if err := h.Cache.List(ctx, &ws, client.MatchingFields{indexBinding: key}, client.UnsafeDisableDeepCopy); err != nil {
			return scope{}, nil, fmt.Errorf("list Works of %s: %w", key, err)
		}
		if len(ws.Items) > 0 {
			p = ws.Items[0].Labels[v1beta1.CRPTrackingLabel]
		}
	}
	return scope{placement: p, binding: key}, h.locks.binding(p, key), nil
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
// Records of one kind go out as one event per placement (byKind).
func (h *Hub) sendEvents(st *state, env *decisionEnv) {
	var order []string
	per := map[string][]record{}
	for _, e := range env.records {
		p := st.placementOf(e.subject)
		if st.crps[p] == nil {
			continue
		}
		if _, ok := per[p]; !ok {
			order = append(order, p)
		}
		per[p] = append(per[p], e)
	}
	for _, p := range order {
		for _, e := range byKind(per[p]) {
			sendEvent(h.Events, st.crps[p], e)
		}
	}
}
