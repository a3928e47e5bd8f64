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
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// namespaceController plays, on one test API server, the namespace controller envtest does
// not run: every quarter second a namespace being deleted loses its content (kinds, deleted
// by collection) and, once emptied says what is left may go, its finalizer.
type namespaceController struct {
	c     client.Client
	cs    kubernetes.Interface
	kinds []client.Object
	// emptied finishes emptying the namespace (kinds without a collection delete) and says
	// whether it may be finalized now.
	emptied func(ctx context.Context, c client.Client, in client.InNamespace) bool
}

// runNamespaceController plays the hub's namespace controller: a namespace being deleted
// loses the kinds the hub keeps in a member's reserved namespace, and ConfigMaps, Secrets and
// ServiceAccounts, then, once no Work or InternalMemberCluster is left in it, its finalizer;
// so a member that left can join again (tsg-work-sync-failure.yaml).
func (f *fleet) runNamespaceController() {
	f.runNamespaces("the hub", f.env.Config, f.admin, namespaceController{
		kinds: []client.Object{&v1beta1.Work{}, &clusterv1beta1.InternalMemberCluster{}, &rbacv1.Role{}, &rbacv1.RoleBinding{},
			&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.ServiceAccount{}},
		emptied: func(ctx context.Context, c client.Client, in client.InNamespace) bool {
			var works v1beta1.WorkList
			var imcs clusterv1beta1.InternalMemberClusterList
			return c.List(ctx, &works, in) == nil && c.List(ctx, &imcs, in) == nil && len(works.Items)+len(imcs.Items) == 0
		},
	})
}

// runMemberNamespaceController plays a member cluster's namespace controller: a namespace
// deleted on the member (the agent removing what a Work it no longer has placed) loses the
// kinds the library places in namespaces and then its finalizer, as on a real cluster, so a
// later Work that places it again (a cluster evicted and picked again) can create it instead
// of finding it Terminating.
func (f *fleet) runMemberNamespaceController(name string, env *testenv.Env) {
	f.runNamespaces("member "+name, env.Config, testenv.Client(f.t, env.Config), namespaceController{
		kinds: []client.Object{&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &batchv1.Job{},
			&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}},
		// Services have no collection delete: one by one.
		emptied: func(ctx context.Context, c client.Client, in client.InNamespace) bool {
			var svcs corev1.ServiceList
			if c.List(ctx, &svcs, in) != nil {
				return false
			}
			for j := range svcs.Items {
				_ = c.Delete(ctx, &svcs.Items[j])
			}
			return true
		},
	})
}

// runNamespaces runs nc on the API server of cfg until the test ends.
func (f *fleet) runNamespaces(what string, cfg *rest.Config, c client.Client, nc namespaceController) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		f.t.Fatalf("%s's namespace controller: %v", what, err)
	}
	nc.c, nc.cs = c, cs
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			nc.finalize(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	f.t.Cleanup(func() { cancel(); <-done })
}

// finalize is one round: what fails is retried next round.
func (nc namespaceController) finalize(ctx context.Context) {
	var nss corev1.NamespaceList
	if err := nc.c.List(ctx, &nss); err != nil {
		return
	}
	for i := range nss.Items {
		ns := &nss.Items[i]
		if ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) == 0 {
			continue
		}
		in := client.InNamespace(ns.Name)
		for _, o := range nc.kinds {
			_ = nc.c.DeleteAllOf(ctx, o, in)
		}
		if !nc.emptied(ctx, nc.c, in) {
			continue
		}
		ns.Spec.Finalizers = nil
		_, _ = nc.cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	}
}
