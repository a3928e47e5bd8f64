package hub

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	multiclusterv1alpha1 "github.com/fleetsim/fleetsim/apis/multicluster/v1alpha1"
	"github.com/fleetsim/fleetsim/model/clusterprofile"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
)

// ClusterProfileReconciler keeps one ClusterProfile per MemberCluster in fleet-system, as
// model/clusterprofile decides: created with the MemberCluster, its ControlPlaneHealthy
// condition and Kubernetes version following the agent's report, deleted once the member
// starts leaving or is gone. The profile is keyed by the member's name; a profile another
// cluster manager owns is never touched. No finalizer is needed on the MemberCluster: a
// profile left behind (the hub was down when its member went) is found when the
// controller starts, as the informer lists every profile, and deleted then.
type ClusterProfileReconciler struct {
	Client      client.Client
	Clock       clock.Clock // nil: the wall clock
	Eligibility member.EligibilityConfig
	Log         logr.Logger
}

// SetupWithManager registers the reconciler: it wakes on a MemberCluster (its status
// included: the membership controller writes the health it decided there), on the
// InternalMemberCluster of the same name (the agent's reports) and on the profiles in
// fleet-system (one deleted by hand comes back). Updates that move only what a profile
// does not show (a heartbeat's time, resource usage) wake nothing: a hub of a thousand
// members would otherwise decide a profile per heartbeat. A heartbeat that stops is seen
// all the same: the membership controller writes the member's Healthy condition then.
func (r *ClusterProfileReconciler) SetupWithManager(mgr ctrl.Manager) error {
	profileInputMoved := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return profileInputs(e.ObjectOld) != profileInputs(e.ObjectNew)
	}}
	byName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
	})
	inProfileNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == clusterprofile.Namespace
	})
	return ctrl.NewControllerManagedBy(mgr).Named("clusterprofile").
		For(&clusterv1beta1.MemberCluster{}, builder.WithPredicates(profileInputMoved)).
		Watches(&clusterv1beta1.InternalMemberCluster{}, byName, builder.WithPredicates(profileInputMoved)).
		Watches(&multiclusterv1alpha1.ClusterProfile{}, byName, builder.WithPredicates(inProfileNamespace)).
		Complete(r)
}

// profileInputs renders what of a MemberCluster or InternalMemberCluster a profile decision
// reads, but for heartbeat times: deletion, conditions (status and reason), the agents'
// conditions and the Kubernetes version.
func profileInputs(o client.Object) string {
	var conds []metav1.Condition
	var agents []clusterv1beta1.AgentStatus
	var props map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue
	switch x := o.(type) {
	case *clusterv1beta1.MemberCluster:
		conds, agents, props = x.Status.Conditions, x.Status.AgentStatus, x.Status.Properties
	case *clusterv1beta1.InternalMemberCluster:
		agents, props = x.Status.AgentStatus, x.Status.Properties
	}
	var b strings.Builder
	fmt.Fprintf(&b, "deleting=%t version=%s", o.GetDeletionTimestamp() != nil, props[clusterprofile.KubernetesVersionProperty].Value)
	for _, c := range conds {
		fmt.Fprintf(&b, " %s=%s/%s", c.Type, c.Status, c.Reason)
	}
	for _, a := range agents {
		fmt.Fprintf(&b, " agent %s:", a.Type)
		for _, c := range a.Conditions {
			fmt.Fprintf(&b, " %s=%s", c.Type, c.Status)
		}
	}
	return b.String()
}

// Reconcile implements reconcile.Reconciler.
func (r *ClusterProfileReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	clk, elig := orWallClock(r.Clock), orDefaultEligibility(r.Eligibility)
	m, err := r.member(ctx, req.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := clk.Now()
	d := clusterprofile.Decide(clusterprofile.Input{Member: m, Now: now, Eligibility: elig})
	log := r.Log.WithValues("member", req.Name)

	cp := &multiclusterv1alpha1.ClusterProfile{}
	key := client.ObjectKey{Namespace: clusterprofile.Namespace, Name: req.Name}
	switch err := r.Client.Get(ctx, key, cp); {
	case apierrors.IsNotFound(err):
		cp = nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("get ClusterProfile %s: %w", key, err)
	}
	if cp != nil && cp.Spec.ClusterManager.Name != clusterprofile.ClusterManagerName {
		log.Info("ClusterProfile left alone: another cluster manager owns it", "clusterManager", cp.Spec.ClusterManager.Name)
		return reconcile.Result{}, nil
	}
	if d.Profile == nil {
		if cp != nil {
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, cp)); err != nil {
				return reconcile.Result{}, fmt.Errorf("delete ClusterProfile %s: %w", key, err)
			}
			log.V(1).Info("ClusterProfile deleted", "reason", d.Reason)
		}
		return reconcile.Result{}, nil
	}
	if cp, err = r.ensure(ctx, cp, d.Profile); err != nil {
		return reconcile.Result{}, err
	}
	want := profileStatus(cp, d.Profile, now)
	if !equality.Semantic.DeepEqual(want, cp.Status) {
		upd := cp.DeepCopy()
		upd.Status = want
		if err := r.Client.Status().Update(ctx, upd); err != nil {
			return reconcile.Result{}, fmt.Errorf("update ClusterProfile %s status: %w", key, err)
		}
		log.V(1).Info("ClusterProfile status written", "reason", d.Reason)
	}
	// The membership controller's health write at the same moment wakes this one too; the
	// requeue covers a hub that runs this controller alone.
	return reconcile.Result{RequeueAfter: d.RequeueAfter}, nil
}

// member is the member as the membership controller sees it (the agent's report from the
// InternalMemberCluster when there is one), or nil when its MemberCluster does not exist.
func (r *ClusterProfileReconciler) member(ctx context.Context, name string) (*member.Member, error) {
	mc := &clusterv1beta1.MemberCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get MemberCluster %s: %w", name, err)
	}
	imc := &clusterv1beta1.InternalMemberCluster{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: membership.Namespace(name), Name: name}, imc); {
	case apierrors.IsNotFound(err):
		imc = nil
	case err != nil:
		return nil, fmt.Errorf("get InternalMemberCluster %s: %w", name, err)
	}
	m, err := convert.MemberClusterToModel(mc, imc, false)
	if m == nil {
		return nil, err
	}
	// A property that is not a quantity is left out of the model; the Kubernetes version,
	// the one property a profile shows, is kept as text.
	return m.Member, nil
}

// ensure creates the profile, with fleet-system when the hub runs elsewhere, or brings its
// label and display name back to what the decision says.
func (r *ClusterProfileReconciler) ensure(ctx context.Context, cp *multiclusterv1alpha1.ClusterProfile, p *clusterprofile.Profile) (*multiclusterv1alpha1.ClusterProfile, error) {
	if cp == nil {
		cp = &multiclusterv1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: clusterprofile.Namespace, Name: p.Name,
				Labels: map[string]string{clusterprofile.LabelClusterManager: p.ClusterManager}},
			Spec: multiclusterv1alpha1.ClusterProfileSpec{DisplayName: p.DisplayName,
				ClusterManager: multiclusterv1alpha1.ClusterManager{Name: p.ClusterManager}},
		}
		err := r.Client.Create(ctx, cp)
		if apierrors.IsNotFound(err) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterprofile.Namespace}}
			if err := r.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("create namespace %s: %w", ns.Name, err)
			}
			err = r.Client.Create(ctx, cp)
		}
		if err != nil {
			return nil, fmt.Errorf("create ClusterProfile %s/%s: %w", cp.Namespace, cp.Name, err)
		}
		return cp, nil
	}
	if cp.Labels[clusterprofile.LabelClusterManager] == p.ClusterManager && cp.Spec.DisplayName == p.DisplayName {
		return cp, nil
	}
	upd := cp.DeepCopy()
	upd.Labels = maps.Clone(cp.Labels)
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	upd.Labels[clusterprofile.LabelClusterManager] = p.ClusterManager
	upd.Spec.DisplayName = p.DisplayName
	if err := r.Client.Update(ctx, upd); err != nil {
		return nil, fmt.Errorf("update ClusterProfile %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	return upd, nil
}

// profileStatus is the status the decision asks for, merged into the profile's: the
// condition keeps its lastTransitionTime while its status holds; other conditions (another
// writer's) stay.
func profileStatus(cp *multiclusterv1alpha1.ClusterProfile, p *clusterprofile.Profile, now time.Time) multiclusterv1alpha1.ClusterProfileStatus {
	st := *cp.Status.DeepCopy()
	st.Version.Kubernetes = p.KubernetesVersion
	c := metav1.Condition{Type: p.Healthy.Type, Status: p.Healthy.Status, Reason: p.Healthy.Reason, Message: p.Healthy.Message,
		ObservedGeneration: cp.Generation, LastTransitionTime: metav1.NewTime(now)}
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return st
		}
	}
	st.Conditions = append(st.Conditions, c)
	return st
}
