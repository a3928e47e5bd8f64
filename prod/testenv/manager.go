package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/prod/hub"
)

// RunManager starts a controller-runtime manager on cfg with the controllers setup
// registers, without metrics or probe listeners, and returns a stop function that ends it
// and waits; the test's cleanup stops it too. A test may run several managers one after
// another (a hub restart): controller names may repeat.
func RunManager(t testing.TB, cfg *rest.Config, log logr.Logger, setup func(ctrl.Manager) error) (stop func()) {
	t.Helper()
	repeat := true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: Scheme(t), Logger: log, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: ctrlconfig.Controller{SkipNameValidation: &repeat},
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	if err := setup(mgr); err != nil {
		t.Fatalf("set up the controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// RunHub runs every hub controller (hub.Setup) with HubOptions.
func RunHub(t testing.TB, cfg *rest.Config, log logr.Logger) (stop func()) {
	t.Helper()
	return RunHubWith(t, cfg, HubOptions(log))
}

// HubOptions are the hub's options as the end-to-end tests want them: member heartbeats
// time out after 10s, and there is no periodic resync within a test, so watches and the
// trigger table must wake every decision (a lost wake-up fails the test). The fleet
// invariants are checked after every decision (`--check-invariants`): a violation is logged
// as "invariant violated". Benchmarks turn that off.
func HubOptions(log logr.Logger) hub.Options {
	return hub.Options{Log: log, Resync: time.Hour, CheckInvariants: true,
		Eligibility: member.EligibilityConfig{HeartbeatTimeout: 10 * time.Second, UnhealthyTolerance: 10 * time.Second}}
}

// RunHubWith runs every hub controller with o.
func RunHubWith(t testing.TB, cfg *rest.Config, o hub.Options) (stop func()) {
	t.Helper()
	return RunManager(t, cfg, o.Log, func(mgr ctrl.Manager) error {
		_, err := hub.Setup(mgr, o)
		return err
	})
}
