package hub

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/override"
)

// OverrideSnapshotter takes a snapshot of a ClusterResourceOverride or ResourceOverride
// whenever its spec changes (override.DecideSnapshot), marks it the latest and the previous
// one not, and tells the hub (OnSnapshot), whose rollouts then pick it up. An override the
// model rejects gets no snapshot; the reason is logged. So does one that breaks the
// fleet-wide rules against the overrides created before it (it selects what one of them
// selects, or 100 exist already): the webhook refuses those when they are written, and this
// is the second line of defence, with a Warning event OverrideRefused on the override.
type OverrideSnapshotter struct {
	Client client.Client
	Reader client.Reader
	Log    logr.Logger
	Events events.EventRecorder // nil: no events
	// OnSnapshot is told of each snapshot created (as written).
	OnSnapshot func(ctx context.Context, snapshot client.Object)
}

// refused logs, and records on obj, why an override gets no snapshot.
func (o *OverrideSnapshotter) refused(obj runtime.Object, name, reason string) {
	o.Log.Info("override not snapshotted: it is invalid", "override", name, "reason", reason)
	if o.Events != nil {
		o.Events.Eventf(obj, nil, corev1.EventTypeWarning, "OverrideRefused", "Snapshot", "%s", reason)
	}
}

// before orders overrides by precedence: creation time, then namespace and name.
func before(a, b metav1.ObjectMeta) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	if a.Namespace != b.Namespace {
		return strings.Compare(a.Namespace, b.Namespace)
	}
	return strings.Compare(a.Name, b.Name)
}

// SetupWithManager registers the controller: requests without a namespace are
// ClusterResourceOverrides, the others ResourceOverrides.
func (o *OverrideSnapshotter) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("override-snapshot").
		For(&v1beta1.ClusterResourceOverride{}).
		Watches(&v1beta1.ResourceOverride{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
		})).
		Complete(o)
}

// Reconcile implements reconcile.Reconciler.
func (o *OverrideSnapshotter) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var err error
	var snapshot client.Object
	if req.Namespace == "" {
		snapshot, err = o.cro(ctx, req.Name)
	} else {
		snapshot, err = o.ro(ctx, req.NamespacedName)
	}
	if err != nil || snapshot == nil {
		return reconcile.Result{}, err
	}
	if o.OnSnapshot != nil {
		o.OnSnapshot(ctx, snapshot)
	}
	return reconcile.Result{}, nil
}

func (o *OverrideSnapshotter) cro(ctx context.Context, name string) (client.Object, error) {
	obj := &v1beta1.ClusterResourceOverride{}
	if err := o.Reader.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if obj.DeletionTimestamp != nil {
		return nil, nil
	}
	m := convert.ClusterResourceOverrideToModel(obj)
	if errs := override.ValidateClusterResourceOverride(m); len(errs) > 0 {
		o.refused(obj, name, errs.ToAggregate().Error())
		return nil, nil
	}
	var all v1beta1.ClusterResourceOverrideList
	if err := o.Reader.List(ctx, &all); err != nil {
		return nil, fmt.Errorf("list ClusterResourceOverrides: %w", err)
	}
	var earlier []*override.ClusterResourceOverride
	for i := range all.Items {
		if all.Items[i].Name != name && before(all.Items[i].ObjectMeta, obj.ObjectMeta) < 0 {
			earlier = append(earlier, convert.ClusterResourceOverrideToModel(&all.Items[i]))
		}
	}
	if errs := override.RefuseClusterResourceOverride(m, earlier); len(errs) > 0 {
		o.refused(obj, name, errs.ToAggregate().Error())
		return nil, nil
	}
	var list v1beta1.ClusterResourceOverrideSnapshotList
	if err := o.Reader.List(ctx, &list, client.MatchingLabels{v1beta1.OverrideTrackingLabel: name}); err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", name, err)
	}
	var latest *v1beta1.ClusterResourceOverrideSnapshot
	var latestModel *override.CROSnapshot
	for i := range list.Items {
		s, err := convert.ClusterResourceOverrideSnapshotToModel(&list.Items[i])
		if err != nil {
			return nil, err
		}
		if latestModel == nil || s.Index > latestModel.Index {
			latest, latestModel = &list.Items[i], &s
		}
	}
	next := override.DecideSnapshot[override.ClusterResourceOverrideSpec](m, latestModel)
	if next == nil {
		return nil, nil
	}
	want := convert.ClusterResourceOverrideSnapshotFromModel(*next, true, nil)
	want.OwnerReferences = overrideOwner("ClusterResourceOverride", obj.ObjectMeta)
	if err := o.replaceLatest(ctx, want, optional(latest)); err != nil {
		return nil, err
	}
	return want, nil
}

func (o *OverrideSnapshotter) ro(ctx context.Context, key types.NamespacedName) (client.Object, error) {
	obj := &v1beta1.ResourceOverride{}
	if err := o.Reader.Get(ctx, key, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if obj.DeletionTimestamp != nil {
		return nil, nil
	}
	m := convert.ResourceOverrideToModel(obj)
	if errs := override.ValidateResourceOverride(m); len(errs) > 0 {
		o.refused(obj, key.String(), errs.ToAggregate().Error())
		return nil, nil
	}
	var all v1beta1.ResourceOverrideList
	if err := o.Reader.List(ctx, &all); err != nil {
		return nil, fmt.Errorf("list ResourceOverrides: %w", err)
	}
	var earlier []*override.ResourceOverride
	for i := range all.Items {
		if (all.Items[i].Namespace != key.Namespace || all.Items[i].Name != key.Name) && before(all.Items[i].ObjectMeta, obj.ObjectMeta) < 0 {
			earlier = append(earlier, convert.ResourceOverrideToModel(&all.Items[i]))
		}
	}
	if errs := override.RefuseResourceOverride(m, earlier); len(errs) > 0 {
		o.refused(obj, key.String(), errs.ToAggregate().Error())
		return nil, nil
	}
	var list v1beta1.ResourceOverrideSnapshotList
	if err := o.Reader.List(ctx, &list, client.InNamespace(key.Namespace), client.MatchingLabels{v1beta1.OverrideTrackingLabel: key.Name}); err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", key, err)
	}
	var latest *v1beta1.ResourceOverrideSnapshot
	var latestModel *override.ROSnapshot
	for i := range list.Items {
		s, err := convert.ResourceOverrideSnapshotToModel(&list.Items[i])
		if err != nil {
			return nil, err
		}
		if latestModel == nil || s.Index > latestModel.Index {
			latest, latestModel = &list.Items[i], &s
		}
	}
	next := override.DecideSnapshot[override.ResourceOverrideSpec](m, latestModel)
	if next == nil {
		return nil, nil
	}
	want := convert.ResourceOverrideSnapshotFromModel(*next, true, nil)
	want.OwnerReferences = overrideOwner("ResourceOverride", obj.ObjectMeta)
	if err := o.replaceLatest(ctx, want, optional(latest)); err != nil {
		return nil, err
	}
	return want, nil
}

// replaceLatest creates the new latest snapshot, then takes the label off the old one: a
// crash in between leaves two labelled latest, and the higher index wins on reading.
func (o *OverrideSnapshotter) replaceLatest(ctx context.Context, next, previous client.Object) error {
	if err := o.Client.Create(ctx, next); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s: %w", next.GetName(), err)
	}
	if previous == nil {
		return nil
	}
	labels := previous.GetLabels()
	labels[v1beta1.IsLatestSnapshotLabel] = "false"
	previous.SetLabels(labels)
	if err := o.Client.Update(ctx, previous); err != nil {
		return fmt.Errorf("unmark %s as the latest: %w", previous.GetName(), err)
	}
	return nil
}

func overrideOwner(kind string, m metav1.ObjectMeta) []metav1.OwnerReference {
	t := true
	return []metav1.OwnerReference{{APIVersion: v1beta1.GroupVersion.String(), Kind: kind, Name: m.Name, UID: m.UID, Controller: &t, BlockOwnerDeletion: &t}}
}

// An override snapshot is not one of trackedKinds: the decisions it wakes (every placement's
// rollout and work generator) do not wait for the cache to hold it. Woken before their cache
// has the new snapshot, they would decide on the old overrides, change nothing, and nothing
// would wake them again: the override would never roll out. So the hub fires only once its
// cache holds the snapshot.

// cachedPoll is how often awaitCached looks; latency only, on the wall clock.
const cachedPoll = 10 * time.Millisecond

// awaitCached waits until the hub's cache holds obj (found by key), at most expectationWait;
// past it the wake goes out anyway and the decision reads what the cache has.
func (h *Hub) awaitCached(ctx context.Context, obj client.Object) {
	got, ok := obj.DeepCopyObject().(client.Object)
	if !ok || h.Cache == nil {
		return
	}
	deadline := time.Now().Add(expectationWait)
	for {
		err := h.Cache.Get(ctx, client.ObjectKeyFromObject(obj), got)
		if err == nil || !apierrors.IsNotFound(err) || !time.Now().Before(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(cachedPoll):
		}
	}
}
