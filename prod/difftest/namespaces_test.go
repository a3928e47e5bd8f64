package difftest

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// runNamespaceController plays the hub's namespace controller, which envtest does not run:
// a namespace being deleted loses its content (the kinds the hub keeps in a member's
// reserved namespace, and ConfigMaps, Secrets and ServiceAccounts), then, once no Work or
// InternalMemberCluster is left in it, its finalizer; so a member that left can join again
// (tsg-work-sync-failure.yaml).
func (f *fleet) runNamespaceController() {
	cs, err := kubernetes.NewForConfig(f.env.Config)
	if err != nil {
		f.t.Fatalf("namespace controller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			f.finalizeNamespaces(ctx, cs)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	f.t.Cleanup(func() { cancel(); <-done })
}

func (f *fleet) finalizeNamespaces(ctx context.Context, cs kubernetes.Interface) {
	var nss corev1.NamespaceList
	if err := f.admin.List(ctx, &nss); err != nil {
		return
	}
	for i := range nss.Items {
		ns := &nss.Items[i]
		if ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) == 0 {
			continue
		}
		in := client.InNamespace(ns.Name)
		for _, o := range []client.Object{&v1beta1.Work{}, &clusterv1beta1.InternalMemberCluster{}, &rbacv1.Role{}, &rbacv1.RoleBinding{},
			&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.ServiceAccount{}} {
			_ = f.admin.DeleteAllOf(ctx, o, in) // retried next round
		}
		var works v1beta1.WorkList
		var imcs clusterv1beta1.InternalMemberClusterList
		if f.admin.List(ctx, &works, in) != nil || f.admin.List(ctx, &imcs, in) != nil || len(works.Items)+len(imcs.Items) > 0 {
			continue
		}
		ns.Spec.Finalizers = nil
		_, _ = cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	}
}

// memberNamespacedKinds are what a member's namespace controller empties a namespace of
// before it goes: the kinds the library places in namespaces (Services are deleted one by
// one: they have no DeleteCollection).
var memberNamespacedKinds = []client.Object{&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &batchv1.Job{},
	&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}}

// runMemberNamespaceController plays a member cluster's namespace controller, which envtest
// does not run either: a namespace deleted on the member (the agent removing what a Work it
// no longer has placed) loses its content and then its finalizer, as on a real cluster, so a
// later Work that places it again (a cluster evicted and picked again) can create it instead
// of finding it Terminating.
func (f *fleet) runMemberNamespaceController(name string, env *testenv.Env) {
	c := testenv.Client(f.t, env.Config)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		f.t.Fatalf("member %s's namespace controller: %v", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			finalizeMemberNamespaces(ctx, c, cs)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	f.t.Cleanup(func() { cancel(); <-done })
}

func finalizeMemberNamespaces(ctx context.Context, c client.Client, cs kubernetes.Interface) {
	var nss corev1.NamespaceList
	if err := c.List(ctx, &nss); err != nil {
		return
	}
	for i := range nss.Items {
		ns := &nss.Items[i]
		if ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) == 0 {
			continue
		}
		in := client.InNamespace(ns.Name)
		for _, o := range memberNamespacedKinds {
			_ = c.DeleteAllOf(ctx, o, in) // retried next round
		}
		var svcs corev1.ServiceList
		if c.List(ctx, &svcs, in) != nil {
			continue
		}
		for j := range svcs.Items {
			_ = c.Delete(ctx, &svcs.Items[j])
		}
		ns.Spec.Finalizers = nil
		_, _ = cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	}
}
