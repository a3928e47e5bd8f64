package hub

// The Hub and its setup: its configuration and defaults, the controllers it registers
// with the manager, and what their decisions share, readied once (prepare). The rest of
// the controller machinery is one concern a file: triggers.go (what a change wakes),
// queue.go (the queues), decision.go (one decision), served.go (the wake ledger's
// accounts), inline.go (controllers run inside another decision) and fanins.go (members'
// reports).

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/model/triggers"
)

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
	// Propagation is the propagation filter (Options.Propagation).
	Propagation *resources.Filter
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
	crds    discoveryCatchUp
	sem     chan struct{}

	mu      sync.Mutex
	queues  map[triggers.Controller]workqueue.TypedRateLimitingInterface[reconcile.Request]
	pending map[triggers.Controller][]string // fired before the controller's queue existed
}

// DefaultWorkers is how many decisions run at once unless Workers says otherwise.
const DefaultWorkers = 8

// DefaultResync is how often discovery is read again, for kinds added to the hub.
const DefaultResync = 5 * time.Minute

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
	if err := (&OverrideSnapshotter{Client: h.Client, Reader: h.Reader, Log: h.Log.WithName("override"), Events: h.Events,
		OnSnapshot: func(ctx context.Context, snapshot client.Object) {
			h.awaitCached(ctx, snapshot)
			h.fire(ctx, nil, triggers.OverrideChanged, snapshot.GetName(), "", "")
		},
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

func (h *Hub) clock() clock.Clock { return orWallClock(h.Clock) }
