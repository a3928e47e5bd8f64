package main

import (
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// managerOptions are what `fleet hub` and `fleet member` configure alike on their
// controller-runtime manager: probes, metrics, the profiler and leader election.
type managerOptions struct {
	metrics                   metricsserver.Options
	probeAddr, pprofAddr      string
	leaderElect               bool
	leaderID, leaderNamespace string
}

// newManager makes the manager with /healthz and /readyz answering once it runs. A bad
// option is the user's (exit 2); a failed health check registration is ours (exit 1).
func newManager(cfg *rest.Config, scheme *runtime.Scheme, log logr.Logger, o managerOptions) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Logger:                        log,
		Metrics:                       o.metrics,
		HealthProbeBindAddress:        o.probeAddr,
		PprofBindAddress:              o.pprofAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              o.leaderID,
		LeaderElectionNamespace:       o.leaderNamespace,
		LeaderElectionReleaseOnCancel: true,
		Controller:                    ctrlconfig.Controller{SkipNameValidation: &repeatedManagers},
	})
	if err != nil {
		return nil, invalid("set up the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	return mgr, nil
}
