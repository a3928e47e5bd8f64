package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestHubServesProbesMetricsAndReconciles runs `fleet hub` in process against a real
// kube-apiserver through a kubeconfig file, as an operator would, and checks that it takes
// the leader Lease, answers its probes, exports reconcile metrics, admits a MemberCluster
// and stops cleanly with exit code 0.
func TestHubServesProbesMetricsAndReconciles(t *testing.T) {
	env := testenv.StartEnv(t)
	kubeconfig := writeKubeconfig(t, env.Config)
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-system"}}); err != nil {
		t.Fatal(err)
	}

	metrics, probes := freeAddr(t), freeAddr(t)
	// Plain HTTP, the explicit opt-in; hub_metrics_test.go scrapes the secure default.
	h := startFleet(t, "hub", "--kubeconfig", kubeconfig, "--metrics-bind-address", metrics, "--metrics-secure=false",
		"--health-probe-bind-address", probes, "--leader-election-namespace", "fleet-system", "--check-invariants")
	testenv.Eventually(t, "readyz", func() error {
		if code, ok := h.exited(); ok {
			t.Fatalf("fleet hub exited with %d before it was ready; logs:\n%s", code, h.logs.String())
		}
		return httpOK("http://" + probes + "/readyz")
	})
	if err := httpOK("http://" + probes + "/healthz"); err != nil {
		t.Errorf("healthz: %v", err)
	}
	testenv.Eventually(t, "leader Lease", func() error {
		if leaseHolder(t, admin) == "" {
			return fmt.Errorf("no holder")
		}
		return nil
	})

	before, err := reconciles(metrics)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "west"},
		Spec:       clusterv1beta1.MemberClusterSpec{Identity: rbacv1.Subject{Kind: "User", Name: "west-agent"}},
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "IMC created by the hub", func() error {
		return admin.Get(ctx, client.ObjectKey{Namespace: "fleet-member-west", Name: "west"}, &clusterv1beta1.InternalMemberCluster{})
	})
	testenv.Eventually(t, "reconcile metrics", func() error {
		// Counters are process-wide and other tests' managers count too: require growth.
		if n, err := reconciles(metrics); err != nil || n <= before {
			return fmt.Errorf("membership reconciles = %v (%v), want more than %v", n, err, before)
		}
		return nil
	})

	// --check-invariants: the violations counter is served, at 0 for every invariant.
	body, err := httpGet("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if want := `fleetsim_invariant_violations_total{invariant="oneBindingPerCluster"} 0`; !strings.Contains(body, want) {
		t.Errorf("metrics lack %q", want)
	}

	if code := h.stop(); code != exitOK {
		t.Errorf("fleet hub exit code = %d, want %d; logs:\n%s", code, exitOK, h.logs.String())
	}
	if !strings.Contains(h.logs.String(), `"msg":"imc-created"`) {
		t.Errorf("logs lack the structured imc-created record:\n%s", h.logs.String())
	}
}

func TestHubRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"hub", "--log-format", "xml"}, `--log-format "xml": must be json or text`},
		{[]string{"hub", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, "kubeconfig: stat"},
		{[]string{"hub", "--heartbeat-timeout", "0s"}, "must be positive"},
		{[]string{"hub", "-v", "-1"}, "-v -1: must be 0 or more"},
		{[]string{"hub", "--workers", "0"}, "--workers 0: must be 1 or more"},
		{[]string{"hub", "--max-cluster-decisions", "0"}, "--max-cluster-decisions 0: must be between 1 and 1000"},
		{[]string{"hub", "--max-cluster-decisions", "1001"}, "--max-cluster-decisions 1001: must be between 1 and 1000"},
		{[]string{"hub", "--kube-api-qps", "0"}, "--kube-api-qps and --kube-api-burst must be positive"},
		{[]string{"hub", "extra"}, `unknown command "extra"`},
		{[]string{"hub", "--skipped-propagating-apis", "v1/Secret", "--allowed-propagating-apis", "apps"}, "propagation filter: skipped and allowed propagating APIs are mutually exclusive"},
		{[]string{"hub", "--skipped-propagating-apis", "a/b/c/d"}, `propagation filter: skipped propagating APIs: "a/b/c/d"`},
		{[]string{"hub", "--enable-webhook", "--webhook-port", "0"}, "--webhook-port 0: must be from 1 to 65535"},
		{[]string{"hub", "--skipped-propagating-namespaces", "Bad_NS"}, `propagation filter: skipped propagating namespace "Bad_NS"`},
	} {
		var stderr syncBuffer
		if code := execute(context.Background(), tc.args, io.Discard, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("fleet %v = %d, %q; want %d and a message containing %q", tc.args, code, stderr.String(), exitInvalid, tc.want)
		}
	}
}
