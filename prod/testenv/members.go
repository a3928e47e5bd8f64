package testenv

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fleetsim/fleetsim/agentk8s/member"
)

// StartMemberCluster starts a member cluster's kube-apiserver and etcd (a separate pair from
// the hub's) with the member agent's CRDs (config/member/crd: AppliedWork) installed, and
// stops them when the test ends. It skips or fails as StartEnv does without the binaries.
// No kubelet or controller-manager runs: a test that needs a workload to become available
// writes its status the way they would.
func StartMemberCluster(t testing.TB) *Env {
	t.Helper()
	return startEnv(t, []string{MemberCRDDir()})
}

// StartMemberOn starts a member cluster's kube-apiserver on the etcd of e (a started hub
// environment), under an etcd prefix of its own (/member-<name>), with the member agent's
// CRDs installed, and stops it when the test ends: lighter than StartMemberCluster when a
// test needs many members.
func (e *Env) StartMemberOn(t testing.TB, name string) *Env {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	// A loaded machine can take long to start one more API server.
	api := &envtest.APIServer{EtcdURL: e.env.ControlPlane.Etcd.URL, Path: filepath.Join(assets, "kube-apiserver"),
		StartTimeout: 2 * time.Minute, StopTimeout: time.Minute}
	api.Configure().Set("etcd-prefix", "/member-"+name)
	if err := api.Start(); err != nil {
		t.Fatalf("start the kube-apiserver of member %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := api.Stop(); err != nil {
			t.Errorf("stop the kube-apiserver of member %s: %v", name, err)
		}
	})
	plane := &envtest.ControlPlane{APIServer: api}
	u, err := plane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatalf("member %s: add the administrator: %v", name, err)
	}
	cfg := u.Config()
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{MemberCRDDir()}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("member %s: install CRDs: %v", name, err)
	}
	return &Env{Config: cfg, plane: plane}
}

// MemberCRDDir is config/member/crd of this repository.
func MemberCRDDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "config", "member", "crd")
}

// RunMemberAgent runs a real member agent (agentk8s/member) for member name: hub is a config
// with the member's identity on the hub, memberCfg an administrator's config of the member
// cluster. The agent polls every 100ms, watches the objects it applied, and checks drift every
// driftPeriod too (15s when 0). The
// returned stop function ends it and waits; the test's cleanup stops it too. done receives
// the agent's error when it returns (ErrLeft after leaving, nil once stopped).
func RunMemberAgent(t testing.TB, name string, hub, memberCfg *rest.Config, log logr.Logger, driftPeriod time.Duration) (stop func(), done <-chan error) {
	t.Helper()
	return RunMemberAgentPolling(t, name, hub, memberCfg, log, 100*time.Millisecond, driftPeriod)
}

// RunMemberAgentPolling is RunMemberAgent with the agent polling the hub every poll.
func RunMemberAgentPolling(t testing.TB, name string, hub, memberCfg *rest.Config, log logr.Logger, poll, driftPeriod time.Duration) (stop func(), done <-chan error) {
	t.Helper()
	return RunMemberAgentClock(t, name, hub, memberCfg, log, poll, driftPeriod, nil)
}

// RunMemberAgentClock is RunMemberAgentPolling with the agent on clk (the wall clock when
// nil): a test that drives the hub with a mock clock gives the agents the same one.
func RunMemberAgentClock(t testing.TB, name string, hub, memberCfg *rest.Config, log logr.Logger, poll, driftPeriod time.Duration, clk clock.Clock) (stop func(), done <-chan error) {
	t.Helper()
	a := &member.Agent{Hub: Client(t, hub), Member: Client(t, memberCfg), Name: name, Log: log.WithValues("member", name),
		Poll: poll, DriftPeriod: driftPeriod, MemberConfig: memberCfg, Clock: clk}
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		err := a.Run(ctx)
		result <- err
		close(finished)
	}()
	stop = func() {
		cancel()
		<-finished
	}
	t.Cleanup(stop)
	return stop, result
}
