package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestHubServesWebhook runs `fleet hub --enable-webhook` against a real API server with
// config/webhook installed (envtest's webhook install options give the port and the
// certificate): a user with every RBAC permission is refused a second override of the same
// resource, and creating a binding, by the webhook the hub serves.
func TestHubServesWebhook(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the tests that start kube-apiserver and etcd")
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); assets == "" || err != nil {
		msg := fmt.Sprintf("no kube-apiserver in KUBEBUILDER_ASSETS=%q: run `export KUBEBUILDER_ASSETS=$(hack/test-assets.sh)`", assets)
		if os.Getenv("CI") != "" || os.Getenv("FLEETSIM_REQUIRE_SERVERS") != "" {
			t.Fatal(msg)
		}
		t.Skip("skipped when run by hand without a real API server: " + msg)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths: []string{testenv.CRDDir()}, ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: assets,
		WebhookInstallOptions:    envtest.WebhookInstallOptions{Paths: []string{filepath.Join("..", "..", "config", "webhook", "manifests.yaml")}},
		ControlPlaneStartTimeout: 2 * time.Minute, ControlPlaneStopTimeout: time.Minute,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	ctx := context.Background()
	admin := testenv.Client(t, cfg)
	o := env.WebhookInstallOptions
	h := startFleet(t, "hub", "--kubeconfig", writeKubeconfig(t, cfg), "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--leader-elect=false", "--log-format", "text", "--enable-webhook", "--webhook-port", fmt.Sprint(o.LocalServingPort), "--webhook-cert-dir", o.LocalServingCertDir)
	u, err := env.ControlPlane.AddUser(envtest.User{Name: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice", APIGroup: "rbac.authorization.k8s.io"}}}); err != nil {
		t.Fatal(err)
	}
	alice := testenv.Client(t, u.Config())
	decode := func(doc string) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	cro := func(name string) string {
		return `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata: {name: ` + name + `}
spec:
  clusterResourceSelectors: [{group: rbac.authorization.k8s.io, version: v1, kind: ClusterRole, name: reader}]
  policy: {overrideRules: [{clusterSelector: {clusterSelectorTerms: []}, overrideType: Delete}]}`
	}
	// The first write waits for the hub's webhook server: until it listens, the fail-closed
	// override webhook refuses with a connection error.
	testenv.Eventually(t, "the first override is admitted", func() error {
		if code, ok := h.exited(); ok {
			t.Fatalf("fleet hub exited with %d; logs:\n%s", code, h.logs.String())
		}
		return alice.Create(ctx, decode(cro("first")))
	})
	err = alice.Create(ctx, decode(cro("second")))
	if err == nil || !strings.Contains(err.Error(), `denied the request`) || !strings.Contains(err.Error(), `already selected by ClusterResourceOverride "first"`) {
		t.Errorf("a second override of reader: %v; want the webhook's refusal", err)
	}
	err = alice.Create(ctx, decode(`apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceBinding
metadata: {name: web-west}
spec: {state: Scheduled, targetCluster: west, resourceSnapshotName: web-0-snapshot, schedulingPolicySnapshotName: web-0}`))
	if err == nil || !strings.Contains(err.Error(), `user "alice" may not create it`) {
		t.Errorf("alice creates a binding: %v; want the webhook's refusal", err)
	}
}
