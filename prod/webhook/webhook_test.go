package webhook_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
	"github.com/fleetsim/fleetsim/prod/webhook"
)

func repoFile(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", ".."}, parts...)...)
}

// start runs a kube-apiserver with the CRDs and config/webhook/manifests.yaml installed
// (envtest points the webhooks at a local server with its own certificate), and the
// webhook server on it. It returns an administrator's config and a function adding users.
func start(t *testing.T) (*rest.Config, func(name string) client.Client) {
	t.Helper()
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
		WebhookInstallOptions:    envtest.WebhookInstallOptions{Paths: []string{repoFile("config", "webhook", "manifests.yaml")}},
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
	admin := testenv.Client(t, cfg)
	o := env.WebhookInstallOptions
	srv := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir})
	webhook.Register(srv, admin, admission.NewDecoder(testenv.Scheme(t)), webhook.Options{HubUsers: []string{"fleet-hub"}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("webhook server: %v", err)
		}
	})
	testenv.Eventually(t, "the webhook server answers", func() error { return srv.StartedChecker()(nil) })
	users := func(name string) client.Client {
		u, err := env.ControlPlane.AddUser(envtest.User{Name: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Everything RBAC allows: only the webhook refuses.
		if err := admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-admin"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: name, APIGroup: "rbac.authorization.k8s.io"}}}); err != nil {
			t.Fatal(err)
		}
		return testenv.Client(t, u.Config())
	}
	return cfg, users
}

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func cro(name, target string) string {
	return `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata: {name: ` + name + `}
spec:
  clusterResourceSelectors: [{group: rbac.authorization.k8s.io, version: v1, kind: ClusterRole, name: ` + target + `}]
  policy: {overrideRules: [{clusterSelector: {clusterSelectorTerms: []}, overrideType: Delete}]}`
}

func ro(namespace, name, target string) string {
	return `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceOverride
metadata: {name: ` + name + `, namespace: ` + namespace + `}
spec:
  resourceSelectors: [{group: "", version: v1, kind: ConfigMap, name: ` + target + `}]
  policy: {overrideRules: [{clusterSelector: {clusterSelectorTerms: []}, overrideType: Delete}]}`
}

// refused checks that err is the webhook's refusal, with a message containing want.
func refused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "denied the request") || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v; want the webhook to refuse it with %q", what, err, want)
	}
}

// TestWebhookOverrides: on a real API server, a user (every RBAC permission, not an
// administrator) cannot create an override selecting a resource another override of the same
// kind selects, nor a 101st ClusterResourceOverride; an update of an override and a
// ResourceOverride of the same name in another namespace are admitted.
func TestWebhookOverrides(t *testing.T) {
	cfg, users := start(t)
	ctx := context.Background()
	admin := testenv.Client(t, cfg)
	alice := users("alice")
	for _, ns := range []string{"app", "other"} {
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := alice.Create(ctx, obj(t, cro("first", "reader"))); err != nil {
		t.Fatalf("the first ClusterResourceOverride of reader: %v", err)
	}
	refused(t, "a second ClusterResourceOverride of reader", alice.Create(ctx, obj(t, cro("second", "reader"))),
		`already selected by ClusterResourceOverride "first"`)
	first := obj(t, cro("first", "reader"))
	if err := alice.Get(ctx, client.ObjectKey{Name: "first"}, first); err != nil {
		t.Fatal(err)
	}
	first.SetLabels(map[string]string{"edited": "yes"})
	if err := alice.Update(ctx, first); err != nil {
		t.Errorf("an update of the first override: %v", err)
	}
	if err := alice.Create(ctx, obj(t, ro("app", "first", "settings"))); err != nil {
		t.Fatalf("the first ResourceOverride of app/settings: %v", err)
	}
	refused(t, "a second ResourceOverride of app/settings", alice.Create(ctx, obj(t, ro("app", "second", "settings"))),
		"already selected by ResourceOverride app/first")
	if err := alice.Create(ctx, obj(t, ro("other", "second", "settings"))); err != nil {
		t.Errorf("a ResourceOverride of other/settings: %v", err)
	}
	for i := 2; i <= 100; i++ {
		if err := admin.Create(ctx, obj(t, cro(fmt.Sprintf("cro-%d", i), fmt.Sprintf("role-%d", i)))); err != nil {
			t.Fatalf("ClusterResourceOverride %d: %v", i, err)
		}
	}
	refused(t, "a 101st ClusterResourceOverride", alice.Create(ctx, obj(t, cro("cro-101", "role-101"))),
		"clusterResourceOverrides: Too many: 101: must have at most 100 items")
}

// TestWebhookGuardsInternalObjects: a user with every RBAC permission cannot create, change
// or delete the hub's internal objects; the hub's identity and administrators can; a member
// agent may write its own InternalMemberCluster and Works, not another member's.
func TestWebhookGuardsInternalObjects(t *testing.T) {
	cfg, users := start(t)
	ctx := context.Background()
	admin := testenv.Client(t, cfg)
	alice, hub, agent := users("alice"), users("fleet-hub"), users("west-agent")
	for _, name := range []string{"west", "east"} {
		if err := admin.Create(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: clusterv1beta1.MemberClusterSpec{Identity: rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"}}}); err != nil {
			t.Fatal(err)
		}
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-member-" + name}}); err != nil {
			t.Fatal(err)
		}
	}
	imc := func(name string) *clusterv1beta1.InternalMemberCluster {
		return &clusterv1beta1.InternalMemberCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-member-" + name, Name: name},
			Spec: clusterv1beta1.InternalMemberClusterSpec{State: "Join", HeartbeatPeriodSeconds: 60}}
	}
	binding := `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceBinding
metadata: {name: web-west}
spec: {state: Scheduled, targetCluster: west, resourceSnapshotName: web-0-snapshot, schedulingPolicySnapshotName: web-0}`

	refused(t, "alice creates a binding", alice.Create(ctx, obj(t, binding)), `ClusterResourceBinding is an internal object of the fleet: user "alice" may not create it`)
	if err := hub.Create(ctx, obj(t, binding)); err != nil {
		t.Errorf("the hub creates a binding: %v", err)
	}
	b := obj(t, binding)
	if err := alice.Get(ctx, client.ObjectKey{Name: "web-west"}, b); err == nil {
		refused(t, "alice deletes the binding", alice.Delete(ctx, b), "may not delete it")
	}
	refused(t, "alice creates an InternalMemberCluster", alice.Create(ctx, imc("west")), "may not create it")
	if err := admin.Create(ctx, imc("west")); err != nil {
		t.Errorf("an administrator creates an InternalMemberCluster: %v", err)
	}
	if err := admin.Create(ctx, imc("east")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who    string
		c      client.Client
		member string
		want   string // "" admitted
	}{
		{"west's agent, its own", agent, "west", ""},
		{"west's agent, east's", agent, "east", `user "west-agent" may not update it`},
		{"alice", alice, "west", `user "alice" may not update it`},
	} {
		i := &clusterv1beta1.InternalMemberCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "fleet-member-" + tc.member, Name: tc.member}, i); err != nil {
			t.Fatal(err)
		}
		i.Status.Properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{"kubernetes-fleet.io/node-count": {Value: "1", ObservationTime: metav1.Now()}}
		err := tc.c.Status().Update(ctx, i)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s updates the InternalMemberCluster's status: %v", tc.who, err)
			}
			continue
		}
		refused(t, tc.who+" updates the InternalMemberCluster's status", err, tc.want)
	}
}
