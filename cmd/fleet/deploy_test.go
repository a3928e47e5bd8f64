package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// renderDefault builds config/default with kustomize.
func renderDefault(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "config", "default")
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // the kustomization's sortOptions decide
	rm, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// TestDeploymentManifestsRunTheHub applies config/default to a real kube-apiserver and runs
// `fleet hub` with the Deployment's own arguments as the hub's service account: the
// manifests are valid, the flags they pass exist, and the RBAC they grant is enough for the
// hub to take its Lease, admit a member (including granting the member its Role) and place
// a namespace on it.
func TestDeploymentManifestsRunTheHub(t *testing.T) {
	objs := renderDefault(t)
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	kinds := map[string]int{}
	var args, clusterRoles []string
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetKind() == "ClusterRole" {
			clusterRoles = append(clusterRoles, o.GetName())
		}
		err := admin.Create(ctx, o)
		if o.GetKind() == "CustomResourceDefinition" && apierrors.IsAlreadyExists(err) {
			continue // envtest installed them from the same files
		}
		if err != nil {
			t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if o.GetKind() == "Deployment" {
			d := &appsv1.Deployment{}
			if err := kruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
				t.Fatal(err)
			}
			c := d.Spec.Template.Spec.Containers[0]
			if c.Image != "fleetsim/fleet:dev" || d.Spec.Template.Spec.ServiceAccountName != "fleet-hub" {
				t.Errorf("deployment image %q, service account %q", c.Image, d.Spec.Template.Spec.ServiceAccountName)
			}
			args = c.Args
		}
	}
	// Every CRD the project generates is deployed.
	_, file, _, _ := runtime.Caller(0)
	crds, err := filepath.Glob(filepath.Join(filepath.Dir(file), "..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The hub's own role, and the role a metrics scraper is bound to (metrics are served
	// over HTTPS with authorisation).
	slices.Sort(clusterRoles)
	if want := []string{"fleet-hub", "fleet-metrics-reader"}; kinds["CustomResourceDefinition"] != len(crds) || kinds["Deployment"] != 1 || !slices.Equal(clusterRoles, want) {
		t.Fatalf("config/default renders %v with ClusterRoles %v, want %d CRDs (config/crd/bases), 1 Deployment, ClusterRoles %v", kinds, clusterRoles, len(crds), want)
	}

	// The Deployment's arguments, with the test's addresses and kubeconfig: the hub runs as
	// its service account through impersonation.
	kubeconfig := writeKubeconfigAs(t, env.Config, "system:serviceaccount:fleet-system:fleet-hub")
	args = append(args, "--kubeconfig", kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", freeAddr(t))
	h := startFleet(t, args...)
	t.Cleanup(func() {
		if code := h.stop(); code != exitOK {
			t.Errorf("fleet %s exit code = %d; logs:\n%s", strings.Join(args, " "), code, h.logs.String())
		}
	})

	if err := admin.Create(ctx, &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "south"},
		Spec:       clusterv1beta1.MemberClusterSpec{Identity: rbacv1.Subject{Kind: "User", Name: "south-agent"}},
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "member admitted by the hub's service account", func() error {
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "fleet-member-south", Name: "south"}, &clusterv1beta1.InternalMemberCluster{}); err != nil {
			return err
		}
		rb := &rbacv1.RoleBinding{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "fleet-member-south", Name: "fleet-member-agent"}, rb); err != nil {
			return err
		}
		mc := &clusterv1beta1.MemberCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "south"}, mc); err != nil {
			return err
		}
		if len(mc.Status.Conditions) == 0 {
			return fmt.Errorf("no MemberCluster conditions yet")
		}
		return nil
	})

	// The placement controllers too: a member agent (stand-in) reports, a placement of a
	// namespace is bound, its Work written and reported available.
	agentCtx, stopAgent := context.WithCancel(ctx)
	agentDone := make(chan struct{})
	agent := &testenv.StandInAgent{Client: testenv.Client(t, env.User(t, "south-agent")), Member: "south"}
	go func() { agent.Run(agentCtx); close(agentDone) }()
	t.Cleanup(func() { stopAgent(); <-agentDone })
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"color": "blue"}},
		&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: placementv1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: []placementv1beta1.ClusterResourceSelector{{Version: "v1", Kind: "Namespace", Name: "shop"}}}},
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "placement available on the member", func() error {
		crp := &placementv1beta1.ClusterResourcePlacement{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "shop"}, crp); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(crp.Status.Conditions, "ClusterResourcePlacementAvailable") {
			return fmt.Errorf("placement conditions %v", crp.Status.Conditions)
		}
		var works placementv1beta1.WorkList
		if err := admin.List(ctx, &works, client.InNamespace("fleet-member-south")); err != nil {
			return err
		}
		if len(works.Items) != 1 {
			return fmt.Errorf("%d Works in fleet-member-south, want 1", len(works.Items))
		}
		return nil
	})
	if strings.Contains(h.logs.String(), "forbidden") {
		t.Errorf("the hub was refused something its RBAC should allow:\n%s", h.logs.String())
	}
}
