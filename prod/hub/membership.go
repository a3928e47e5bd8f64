package hub

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/triggers"
	"github.com/fleetsim/fleetsim/prod/memberaccess"
)

// MemberFinalizer holds a MemberCluster being deleted until the member has left: its
// InternalMemberCluster, bindings and reserved namespace are gone (MC-LEAVE).
const MemberFinalizer = "fleetsim.io/member-leave"

// MembershipReconciler runs model/hub's membership controller for one MemberCluster.
type MembershipReconciler struct {
	Client client.Client
	// Reader, when set, counts the bindings on a leaving member. With Hub set it is the
	// hub's cache, read through the target-member index once the cache holds the hub's own
	// writes (consistency.go), so a binding a decision just wrote is not missed.
	Reader      client.Reader
	Clock       clock.Clock // nil: the wall clock
	Eligibility member.EligibilityConfig
	Log         logr.Logger
	// Events, when set, receives what the controller records as Kubernetes events on the
	// MemberCluster, for kubectl describe and kubectl events.
	Events events.EventRecorder
	// Hub, when set, receives the changes membership decisions fire (a member no longer
	// healthy wakes the scheduler) and queues membership reconciles the trigger table asks for.
	Hub *Hub
}

// SetupWithManager registers the reconciler: it wakes on changes to a MemberCluster, to the
// InternalMemberCluster of the same name (the agent's heartbeats) and to bindings that
// target the member (leave waits for them).
func (r *MembershipReconciler) SetupWithManager(mgr ctrl.Manager) error {
	byName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
	})
	byTarget := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		b, ok := o.(*placementv1beta1.ClusterResourceBinding)
		if !ok || b.Spec.TargetCluster == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: b.Spec.TargetCluster}}}
	})
	b := ctrl.NewControllerManagedBy(mgr).Named(string(triggers.Membership))
	if r.Hub != nil {
		// The queue keeps one member's decisions serial; different members' run side by
		// side, or a thousand members joining at once would each wait for all the others.
		b = b.WatchesRawSource(r.Hub.queueSource(triggers.Membership)).
			WithOptions(controller.Options{MaxConcurrentReconciles: r.Hub.workers()})
	}
	return b.For(&clusterv1beta1.MemberCluster{}, builder.WithPredicates(predicate.Funcs{
		// The hub alone writes a MemberCluster's status: its own status writes, one per
		// heartbeat, would otherwise each wake a decision that finds nothing to do.
		UpdateFunc: func(e event.UpdateEvent) bool { return !onlyStatusMoved(e.ObjectOld, e.ObjectNew) },
	})).
		Watches(&clusterv1beta1.InternalMemberCluster{}, byName).
		// Only a binding's removal matters to a member (model/triggers: BindingDeleted wakes
		// the target member, whose leave waits for its bindings to go); waking on every
		// binding write made most of the hub's decisions membership decisions that changed
		// nothing.
		Watches(&placementv1beta1.ClusterResourceBinding{}, byTarget, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return true },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Complete(r)
}

// onlyStatusMoved: an update changed no spec, labels, annotations, finalizers or deletion.
func onlyStatusMoved(old, new client.Object) bool {
	return old.GetGeneration() == new.GetGeneration() && reflect.DeepEqual(old.GetLabels(), new.GetLabels()) &&
		reflect.DeepEqual(old.GetAnnotations(), new.GetAnnotations()) && slices.Equal(old.GetFinalizers(), new.GetFinalizers()) &&
		old.GetDeletionTimestamp().Equal(new.GetDeletionTimestamp())
}

// Reconcile implements reconcile.Reconciler.
func (r *MembershipReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	clk, elig := orWallClock(r.Clock), orDefaultEligibility(r.Eligibility)
	st := &memberStore{ctx: ctx, c: r.Client, bindings: r.Reader}
	if st.bindings == nil {
		st.bindings = r.Client
	}
	if r.Hub != nil && r.Hub.exp != nil {
		if !r.Hub.exp.wait(ctx, writesOfMember(req.Name)) && ctx.Err() != nil {
			return reconcile.Result{}, nil // stopping: decide nothing on a cache left behind
		}
		st.indexed = true
	}
	env := &decisionEnv{now: clk.Now(), log: r.Log.WithValues("member", req.Name)}
	mhub.ReconcileMember(st, env, elig, req.Name)
	if st.warning != nil {
		env.log.Info("member status partly ignored", "reason", st.warning.Error())
	}
	if err := st.flush(); err != nil {
		return reconcile.Result{}, fmt.Errorf("member %s: %w", req.Name, err)
	}
	// Events say what happened, so they go out only once the writes have; so do triggers.
	if st.mc != nil {
		for _, rec := range byKind(env.records) {
			sendEvent(r.Events, st.mc, rec)
		}
	}
	if r.Hub != nil {
		for _, f := range env.fired {
			r.Hub.fire(ctx, nil, f.change, f.key, f.placement, f.memberOf)
		}
	}
	if r.Hub != nil && env.requeue > 0 {
		// A heartbeat or health window running out is semantic time: it is scheduled on
		// the hub's clock (queue.go requeueAt), which a mock clock's Add fires.
		r.Hub.requeueAt(triggers.Membership, req.Name, env.requeue)
		return reconcile.Result{}, nil
	}
	// Alone (no Hub), the reconciler has only its own queue, whose delays are wall time:
	// its Clock then must be the wall clock for the window to run out on time.
	return reconcile.Result{RequeueAfter: env.requeue}, nil
}

// memberStore is mhub.MemberStore for one reconcile: it loads the member's objects when
// the controller asks for them and writes what changed in flush.
type memberStore struct {
	ctx      context.Context
	c        client.Client
	bindings client.Reader // where BindingsOnMember counts
	indexed  bool          // bindings has the target-member index
	err      error         // the first read error; flush reports it and writes nothing
	warning  error         // a conversion problem that did not stop the reconcile

	mc       *clusterv1beta1.MemberCluster
	imc      *clusterv1beta1.InternalMemberCluster
	nsExists bool
	model    *mhub.MemberCluster
	removed  bool
}

func (s *memberStore) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *memberStore) MemberCluster(name string) *mhub.MemberCluster {
	mc := &clusterv1beta1.MemberCluster{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Name: name}, mc); err != nil {
		if !apierrors.IsNotFound(err) {
			s.fail(fmt.Errorf("get MemberCluster: %w", err))
		}
		return nil
	}
	ns := membership.Namespace(name)
	imc := &clusterv1beta1.InternalMemberCluster{}
	switch err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, imc); {
	case apierrors.IsNotFound(err):
		imc = nil
	case err != nil:
		s.fail(fmt.Errorf("get InternalMemberCluster: %w", err))
		return nil
	}
	nsObj := &corev1.Namespace{}
	switch err := s.c.Get(s.ctx, client.ObjectKey{Name: ns}, nsObj); {
	case apierrors.IsNotFound(err):
	case err != nil:
		s.fail(fmt.Errorf("get namespace %s: %w", ns, err))
		return nil
	default:
		// A terminating namespace is on its way out: for leaving, it is gone.
		s.nsExists = nsObj.DeletionTimestamp == nil
	}
	m, err := convert.MemberClusterToModel(mc, imc, s.nsExists)
	if m == nil {
		s.fail(err)
		return nil
	}
	// A property that is not a quantity is left out; the rest of the member still counts.
	s.warning = err
	s.mc, s.imc, s.model = mc, imc, m
	return m
}

func (s *memberStore) PutMemberCluster(m *mhub.MemberCluster) { s.model = m }
func (s *memberStore) RemoveMemberCluster(string)             { s.removed = true }

func (s *memberStore) BindingsOnMember(name string) int {
	list := &placementv1beta1.ClusterResourceBindingList{}
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if s.indexed {
		opts = append(opts, client.MatchingFields{indexTarget: name})
	}
	if err := s.bindings.List(s.ctx, list, opts...); err != nil {
		s.fail(fmt.Errorf("list ClusterResourceBindings: %w", err))
		// Unknown counts as some, so leaving never finishes on a failed read.
		return 1
	}
	n := 0
	for _, b := range list.Items {
		if b.Spec.TargetCluster == name {
			n++
		}
	}
	return n
}

// flush writes, in MC-JOIN/MC-LEAVE order, what the controller decided.
func (s *memberStore) flush() error {
	if s.err != nil {
		return s.err
	}
	if s.mc == nil {
		return nil
	}
	ctx, c, m, name := s.ctx, s.c, s.model, s.mc.Name
	if s.mc.DeletionTimestamp == nil && !controllerutil.ContainsFinalizer(s.mc, MemberFinalizer) {
		controllerutil.AddFinalizer(s.mc, MemberFinalizer)
		if err := c.Update(ctx, s.mc); err != nil {
			return fmt.Errorf("add finalizer: %w", err)
		}
	}
	if m.NamespaceExists && !m.Member.Leaving {
		// Also when it exists: a changed spec.identity moves the RoleBinding. Not while
		// leaving: nothing may keep a leave from finishing.
		if err := memberaccess.Ensure(ctx, c, name, s.mc.Spec.Identity); err != nil {
			return err
		}
	}
	want := convert.InternalMemberClusterFromModel(m, s.imc)
	switch {
	case want == nil && s.imc != nil:
		if err := client.IgnoreNotFound(c.Delete(ctx, s.imc)); err != nil {
			return fmt.Errorf("delete InternalMemberCluster: %w", err)
		}
	case want != nil && s.imc == nil:
		want.ResourceVersion = ""
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("create InternalMemberCluster: %w", err)
		}
	case want != nil && !equality.Semantic.DeepEqual(want.Spec, s.imc.Spec):
		// Spec only: the status is the agent's.
		upd := s.imc.DeepCopy()
		upd.Spec = want.Spec
		if err := c.Update(ctx, upd); err != nil {
			return fmt.Errorf("update InternalMemberCluster: %w", err)
		}
	}
	if !m.NamespaceExists && s.nsExists {
		ns := &corev1.Namespace{}
		ns.Name = membership.Namespace(name)
		if err := client.IgnoreNotFound(c.Delete(ctx, ns)); err != nil {
			return fmt.Errorf("delete namespace %s: %w", ns.Name, err)
		}
	}
	if out := convert.MemberClusterFromModel(m, s.mc); !equality.Semantic.DeepEqual(out.Status, s.mc.Status) {
		upd := s.mc.DeepCopy()
		upd.Status = out.Status
		if err := c.Status().Update(ctx, upd); err != nil && !(s.removed && apierrors.IsNotFound(err)) {
			return fmt.Errorf("update MemberCluster status: %w", err)
		}
		s.mc.ResourceVersion = upd.ResourceVersion
	}
	if s.removed && controllerutil.ContainsFinalizer(s.mc, MemberFinalizer) {
		controllerutil.RemoveFinalizer(s.mc, MemberFinalizer)
		if err := client.IgnoreNotFound(c.Update(ctx, s.mc)); err != nil {
			return fmt.Errorf("remove finalizer: %w", err)
		}
	}
	return nil
}
