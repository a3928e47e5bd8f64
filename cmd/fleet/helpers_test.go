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
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The tests start several managers in one process.
func init() { repeatedManagers = true }

// runningHub is a `fleet hub` started in process.
type runningHub struct {
	stop func() int // cancels the hub and returns its exit code
	done chan int
	logs *syncBuffer
}

// exited reports the exit code if the hub has already stopped on its own.
func (h *runningHub) exited() (int, bool) {
	select {
	case code := <-h.done:
		h.done <- code // keep it for stop
		return code, true
	default:
		return 0, false
	}
}

func startFleet(t *testing.T, args ...string) *runningHub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	h := &runningHub{done: done, logs: &syncBuffer{}}
	go func() { done <- execute(ctx, args, io.Discard, h.logs) }()
	stopped, code := false, 0
	h.stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			select {
			case code = <-done:
			case <-time.After(60 * time.Second):
				t.Errorf("fleet hub did not stop within 60s; logs:\n%s", h.logs.String())
				code = -1
			}
		}
		return code
	}
	t.Cleanup(func() { h.stop() })
	return h
}

// leaseHolder is the holder of the hub's leader Lease, or "".
func leaseHolder(t *testing.T, c client.Client) string {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "fleet-system", Name: "fleetsim-hub"}, l); err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
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
