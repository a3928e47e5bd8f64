package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Start starts a kube-apiserver and etcd from KUBEBUILDER_ASSETS with the CRDs of
// config/crd/bases installed, and stops them when the test ends. Without the binaries it
// fails the test with a message saying how to get them when CI or FLEETSIM_REQUIRE_SERVERS
// is set (make test sets the latter); run by hand without them it skips and says so.
// With -short (make test-short) it skips too.
func Start(t testing.TB) *rest.Config {
	t.Helper()
	return StartEnv(t).Config
}

// Env is a started kube-apiserver and etcd.
type Env struct {
	// Config authenticates as a cluster administrator (system:masters).
	Config *rest.Config
	env    *envtest.Environment
	// plane is the control plane users are added to (env's, or a member API server's).
	plane *envtest.ControlPlane
}

// StartEnv is Start, keeping the environment so tests can add identities.
func StartEnv(t testing.TB) *Env {
	t.Helper()
	return startEnv(t, []string{CRDDir()})
}

func startEnv(t testing.TB, crdDirs []string) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skips the tests that start kube-apiserver and etcd")
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" || !exists(filepath.Join(assets, "kube-apiserver")) || !exists(filepath.Join(assets, "etcd")) {
		msg := fmt.Sprintf("no kube-apiserver and etcd in KUBEBUILDER_ASSETS=%q: run `export KUBEBUILDER_ASSETS=$(hack/test-assets.sh)` (make test does)", assets)
		if os.Getenv("CI") != "" || os.Getenv("FLEETSIM_REQUIRE_SERVERS") != "" {
			t.Fatal(msg)
		}
		t.Skip("skipped when run by hand without a real API server: " + msg)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     crdDirs,
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		// envtest's defaults (20 s each way) are too short on a loaded two-core machine: a
		// kube-apiserver that takes longer to stop failed whole tests at teardown. The
		// member API servers (members.go) use the same bounds.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start kube-apiserver and etcd from %s: %v", assets, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop kube-apiserver and etcd: %v", err)
		}
	})
	return &Env{Config: cfg, env: env, plane: &env.ControlPlane}
}

// User is a config that authenticates as name in groups with a client certificate the API
// server trusts, and holds no permissions until RBAC grants some.
func (e *Env) User(t testing.TB, name string, groups ...string) *rest.Config {
	t.Helper()
	u, err := e.plane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		t.Fatalf("add user %s: %v", name, err)
	}
	return u.Config()
}

// CRDDir is config/crd/bases of this repository.
func CRDDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "config", "crd", "bases")
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
