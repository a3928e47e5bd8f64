package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetsim/fleetsim/prod/local"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestHubServesMetricsOverTLSWithAuth: by default the hub's metrics are HTTPS, with the
// certificate of --metrics-cert-dir (a renewed one served without a restart), and a
// scrape needs a bearer token allowed to get /metrics: none is 401, one without the
// grant 403, one with it (config/rbac's metrics reader role) the metrics.
func TestHubServesMetricsOverTLSWithAuth(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-system"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca, err := local.NewCA(dir, "metrics-ca")
	if err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "serving")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	install := func(name string) {
		p, err := ca.Serving(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		for src, dst := range map[string]string{p.CertFile: "tls.crt", p.KeyFile: "tls.key"} {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(certDir, dst+".tmp")
			if err := os.WriteFile(tmp, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(certDir, dst)); err != nil {
				t.Fatal(err)
			}
		}
	}
	install("metrics-first")

	cs := kubernetes.NewForConfigOrDie(env.Config)
	token := func(sa string) string {
		if err := admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: "fleet-system"}}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts("fleet-system").CreateToken(ctx, sa, &authnv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	scraper, stranger := token("prometheus"), token("stranger")
	if err := admin.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prometheus-fleet-metrics"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "fleet-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: "fleet-system"}}}); err != nil {
		t.Fatal(err)
	}

	metrics, probes := freeAddr(t), freeAddr(t)
	h := startFleet(t, "hub", "--kubeconfig", writeKubeconfig(t, env.Config), "--metrics-bind-address", metrics,
		"--metrics-cert-dir", certDir, "--health-probe-bind-address", probes, "--leader-election-namespace", "fleet-system")
	testenv.Eventually(t, "readyz", func() error {
		if code, ok := h.exited(); ok {
			t.Fatalf("fleet hub exited with %d before it was ready; logs:\n%s", code, h.logs.String())
		}
		return httpOK("http://" + probes + "/readyz")
	})

	pool := x509.NewCertPool()
	pem, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(pem)
	var served string // the CN of the certificate of the last scrape
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool,
		VerifyConnection: func(cs tls.ConnectionState) error { served = cs.PeerCertificates[0].Subject.CommonName; return nil }},
		DisableKeepAlives: true}}
	// scrapeErr returns a transport error rather than failing: /readyz answers on its own
	// listener, which can be up before the metrics listener is, so the first wait retries.
	scrapeErr := func(tok string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+metrics+"/metrics", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", fmt.Errorf("scrape: %w", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	scrape := func(tok string) (int, string) {
		code, b, err := scrapeErr(tok)
		if err != nil {
			t.Fatal(err)
		}
		return code, b
	}
	var got []int
	var body string
	testenv.Eventually(t, "metrics served", func() error {
		code, b, err := scrapeErr(scraper)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("%d %s", code, b)
		}
		body = b
		return nil
	})
	for _, tok := range []string{"", stranger, scraper} {
		code, _ := scrape(tok)
		got = append(got, code)
	}
	if diff := cmp.Diff([]int{http.StatusUnauthorized, http.StatusForbidden, http.StatusOK}, got); diff != "" {
		t.Errorf("scrapes with no token, a stranger's, the scraper's (-want +got):\n%s", diff)
	}
	for _, want := range []string{"rest_client_requests_total", "fleetsim_"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if served != "metrics-first" {
		t.Errorf("served certificate %q, want metrics-first", served)
	}
	install("metrics-second")
	testenv.Eventually(t, "the renewed metrics certificate served", func() error {
		if code, b := scrape(scraper); code != http.StatusOK {
			return fmt.Errorf("%d %s", code, b)
		}
		if served != "metrics-second" {
			return fmt.Errorf("served %q", served)
		}
		return nil
	})
	// Plain HTTP is refused on the HTTPS port.
	if _, err := httpGet("http://" + metrics + "/metrics"); err == nil {
		t.Error("plain HTTP scrape of the secure endpoint succeeded")
	}
}
