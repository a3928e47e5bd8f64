package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/prod/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

func init() { repeatedManagers = true }

// TestHubServesProbesMetricsAndReconciles runs `fleet hub` in process against a real
// kube-apiserver through a kubeconfig file, as an operator would, and checks that it takes
// the leader Lease, answers its probes, exports reconcile metrics, admits a MemberCluster
// and stops cleanly with exit code 0.
func TestHubServesProbesMetricsAndReconciles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	env := testenv.StartEnv(t)
	kubeconfig := writeKubeconfig(t, env.Config)
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := clusterv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-system"}}); err != nil {
		t.Fatal(err)
	}

	metrics, probes := freeAddr(t), freeAddr(t)
	runCtx, stop := context.WithCancel(ctx)
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- execute(runCtx, []string{"hub", "--kubeconfig", kubeconfig, "--metrics-bind-address", metrics,
			"--health-probe-bind-address", probes, "--leader-election-namespace", "fleet-system"}, io.Discard, &logs)
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stop()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Errorf("fleet hub did not stop within 60s; logs:\n%s", logs.String())
			}
		}
	})

	testenv.Eventually(t, "readyz", func() error {
		select {
		case code := <-done:
			stopped = true
			t.Fatalf("fleet hub exited with %d before it was ready; logs:\n%s", code, logs.String())
		default:
		}
		return httpOK("http://" + probes + "/readyz")
	})
	if err := httpOK("http://" + probes + "/healthz"); err != nil {
		t.Errorf("healthz: %v", err)
	}
	testenv.Eventually(t, "leader Lease", func() error {
		l := &coordinationv1.Lease{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: "fleet-system", Name: "fleetsim-hub"}, l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
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

	stop()
	stopped = true
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("fleet hub exit code = %d, want %d; logs:\n%s", code, exitOK, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fleet hub did not stop within 30s of its context ending")
	}
	if !strings.Contains(logs.String(), `"msg":"imc-created"`) {
		t.Errorf("logs lack the structured imc-created record:\n%s", logs.String())
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
		{[]string{"hub", "extra"}, `unknown command "extra"`},
	} {
		var stderr syncBuffer
		if code := execute(context.Background(), tc.args, io.Discard, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("fleet %v = %d, %q; want %d and a message containing %q", tc.args, code, stderr.String(), exitInvalid, tc.want)
		}
	}
}

func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	return writeKubeconfigAs(t, cfg, "")
}

// writeKubeconfigAs writes a kubeconfig for cfg that impersonates user when not empty.
func writeKubeconfigAs(t *testing.T, cfg *rest.Config, user string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken, Impersonate: user}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "hub"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// freeAddr is a free local address outside the kernel's ephemeral port range, so no
// envtest server or outgoing connection of a concurrently running test package can take it
// between this check and the hub's bind.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(10000))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		l.Close()
		return addr
	}
	t.Fatal("no free port in 20000-29999")
	return ""
}

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// reconciles reads the membership controller's successful reconcile count from /metrics.
func reconciles(addr string) (float64, error) {
	body, err := httpGet("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	const series = `controller_runtime_reconcile_total{controller="membership",result="success"} `
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, nil // not reconciled yet in this process
}

func httpOK(url string) error {
	_, err := httpGet(url)
	return err
}

// syncBuffer is a bytes.Buffer safe for the hub's logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
