package fleethttp_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fleetsim/fleetsim/prod/fleethttp"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// reviews counts the TokenReviews and SubjectAccessReviews the fleet API sends to the API
// server, at the HTTP transport of the client that sends them (the delegating webhooks post
// through the clientset's REST client, so the count is of reviews the API server received).
type reviews struct{ token, sar atomic.Int32 }

type countingTransport struct {
	next http.RoundTripper
	n    *reviews
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		switch {
		case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
			c.n.token.Add(1)
		case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
			c.n.sar.Add(1)
		}
	}
	return c.next.RoundTrip(r)
}

// newAccess is the fleet API's access on env's API server, the client CA ca, counted.
func newAccess(t *testing.T, cfg *rest.Config, ca *testCA, o fleethttp.AccessOptions) (*fleethttp.Access, *reviews) {
	t.Helper()
	n := &reviews{}
	counted := rest.CopyConfig(cfg)
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, n} })
	cs, err := kubernetes.NewForConfig(counted)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
	provider, err := dynamiccertificates.NewStaticCAContent("test-client-ca", caPEM)
	if err != nil {
		t.Fatal(err)
	}
	o.Authentication, o.Authorization, o.ClientCA = cs.AuthenticationV1(), cs.AuthorizationV1(), provider
	a, err := fleethttp.NewAccess(o)
	if err != nil {
		t.Fatal(err)
	}
	return a, n
}

// TestAccessCachesReviews: bearer tokens and client certificates authenticate (401
// otherwise), RBAC allows or denies (403 naming the caller, verb and resource), and a
// second request within the cache TTLs reaches the API server with no new review, while a
// request after them does.
func TestAccessCachesReviews(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	ca := newCA(t)
	const ttl = 3 * time.Second
	access, n := newAccess(t, env.Config, ca, fleethttp.AccessOptions{TokenCacheTTL: ttl, AllowCacheTTL: ttl, DenyCacheTTL: ttl})
	srv := &fleethttp.Server{Client: admin, Reader: admin, Access: access, MachineTTL: time.Minute}
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{ca.issue(t, "fleet-api", nil, net.ParseIP("127.0.0.1"))},
		ClientAuth: tls.RequestClientCert}
	ts.StartTLS()
	defer ts.Close()
	newCaller := func(cert *tls.Certificate, token string) caller {
		cfg := &tls.Config{RootCAs: ca.pool}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		return caller{t: t, base: ts.URL, hc: &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: time.Minute}, token: token}
	}

	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "default"}}); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "reader", &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	grant(t, admin, rbacv1.Subject{Kind: "ServiceAccount", Name: "reader", Namespace: "default"}, "fleet-unit-reader", []string{"units"}, []string{"list"})
	carolCert := ca.issue(t, "carol", []string{"fleet-operators"}, nil)
	grant(t, admin, rbacv1.Subject{Kind: "Group", Name: "fleet-operators"}, "fleet-operators", []string{"machines"}, []string{"list"})
	strangerCA := newCA(t)
	strangerCert := strangerCA.issue(t, "mallory", []string{"fleet-operators"}, nil)
	reader, carol := newCaller(nil, tr.Status.Token), newCaller(&carolCert, "")

	type step struct {
		name        string
		who         caller
		path        string
		code        int
		msg         string // in the error message when code >= 400
		token, sars int32  // reviews the API server received for this request
	}
	steps := []step{
		{"token allowed", reader, "/fleet/v1/units", 200, "", 1, 1},
		{"token allowed again, cached", reader, "/fleet/v1/units", 200, "", 0, 0},
		{"token denied", reader, "/fleet/v1/machines", 403, "system:serviceaccount:default:reader may not list machines", 0, 1},
		{"token denied again, cached", reader, "/fleet/v1/machines", 403, "may not list machines", 0, 0},
		{"certificate allowed", carol, "/fleet/v1/machines", 200, "", 0, 1},
		{"certificate allowed again, cached", carol, "/fleet/v1/machines", 200, "", 0, 0},
		{"certificate denied", carol, "/fleet/v1/units", 403, "carol may not list units", 0, 1},
		{"no credential", newCaller(nil, ""), "/fleet/v1/units", 401, "authentication required", 0, 0},
		{"unknown token", newCaller(nil, "not-a-token"), "/fleet/v1/units", 401, "authentication required", 1, 0},
		// A token the API server rejects with an error (this one cannot be parsed) is not
		// cached: the delegating authenticator caches answers, not errors.
		{"unknown token again, not cached", newCaller(nil, "not-a-token"), "/fleet/v1/units", 401, "authentication required", 1, 0},
		{"certificate from another CA", newCaller(&strangerCert, ""), "/fleet/v1/machines", 401, "certificate signed by unknown authority", 0, 0},
	}
	for _, s := range steps {
		t0, s0 := n.token.Load(), n.sar.Load()
		r := s.who.do("GET", s.path, "", "")
		if r.code != s.code {
			t.Fatalf("%s: GET %s: %d %s, want %d", s.name, s.path, r.code, r.body, s.code)
		}
		if s.code >= 400 {
			if msg := errorMessage(t, r); !strings.Contains(msg, s.msg) {
				t.Errorf("%s: message %q, want it to contain %q", s.name, msg, s.msg)
			}
		}
		got := [2]int32{n.token.Load() - t0, n.sar.Load() - s0}
		if diff := cmp.Diff([2]int32{s.token, s.sars}, got); diff != "" {
			t.Errorf("%s: reviews [TokenReviews, SubjectAccessReviews] (-want +got):\n%s", s.name, diff)
		}
	}

	// Past the TTLs, the same request is reviewed afresh: a revoked grant stops working.
	time.Sleep(ttl + 500*time.Millisecond)
	t0, s0 := n.token.Load(), n.sar.Load()
	if r := reader.do("GET", "/fleet/v1/units", "", ""); r.code != 200 {
		t.Fatalf("after the TTL: %d %s", r.code, r.body)
	}
	if diff := cmp.Diff([2]int32{1, 1}, [2]int32{n.token.Load() - t0, n.sar.Load() - s0}); diff != "" {
		t.Errorf("after the TTL: reviews [TokenReviews, SubjectAccessReviews] (-want +got):\n%s", diff)
	}
}

// TestNewAccessRefusesNoAuthenticator: an Access that could authenticate nobody, or
// authorise nothing, is an error, not a server that answers 401 to everyone.
func TestNewAccessRefusesNoAuthenticator(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:1"})
	for name, o := range map[string]fleethttp.AccessOptions{
		"no authenticator": {Authorization: cs.AuthorizationV1()},
		"no authorizer":    {Authentication: cs.AuthenticationV1()},
	} {
		if _, err := fleethttp.NewAccess(o); err == nil {
			t.Errorf("%s: NewAccess succeeded", name)
		}
	}
}
