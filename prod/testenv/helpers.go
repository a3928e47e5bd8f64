package testenv

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/prod/apis"
)

// Scheme knows the built-in kinds and the fleet API's.
func Scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Client is an uncached client for cfg that knows Scheme's kinds.
func Client(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: Scheme(t)})
	if err != nil {
		t.Fatalf("client for %q: %v", cfg.Host, err)
	}
	return c
}

// Eventually retries f every 100ms until it succeeds, and fails the test with f's last error
// after 30s. Controllers act asynchronously, and RBAC changes reach the authorizer through an
// informer, a moment after the write.
func Eventually(t testing.TB, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: still %v after 30s", what, err)
}
