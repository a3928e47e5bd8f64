package testenv

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// MemberCRDDir is config/member/crd of this repository.
func MemberCRDDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "config", "member", "crd")
}

// RunMemberAgent runs a real member agent (agentk8s/member) for member name: hub is a config
// with the member's identity on the hub, memberCfg an administrator's config of the member
// cluster. The agent polls every 100ms and checks drift every driftPeriod (15s when 0). The
// returned stop function ends it and waits; the test's cleanup stops it too. done is closed
// when the agent returns (after leaving, or once stopped), with its error.
func RunMemberAgent(t testing.TB, name string, hub, memberCfg *rest.Config, log logr.Logger, driftPeriod time.Duration) (stop func(), done <-chan error) {
	t.Helper()
	a := &member.Agent{Hub: Client(t, hub), Member: uncached(t, memberCfg), Name: name, Log: log.WithValues("member", name),
		Poll: 100 * time.Millisecond, DriftPeriod: driftPeriod}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- a.Run(ctx) }()
	out := make(chan error, 1)
	stopped := false
	var result error
	finished := make(chan struct{})
	go func() { result = <-ch; out <- result; close(finished) }()
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-finished
	}
	t.Cleanup(stop)
	return stop, out
}

func uncached(t testing.TB, cfg *rest.Config) client.Client {
	return Client(t, cfg)
}
