package main

import (
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetsim/fleetsim/model/units"
	"github.com/fleetsim/fleetsim/prod/engine"
)

// unitOptions are the hub's flags for the CoreOS-fleet half: the unit engine and the fleet
// API v1.
type unitOptions struct {
	machineTTL     time.Duration
	engineLeaseTTL time.Duration
	engineLeaseNS  string
	engineLease    string
}

func (o *unitOptions) addFlags(f *pflag.FlagSet) {
	f.DurationVar(&o.machineTTL, "machine-ttl", units.DefaultMachineTTL, "a machine whose agent has not reported for this long is lost and its units move")
	f.DurationVar(&o.engineLeaseTTL, "engine-lease-ttl", units.DefaultLeaseTTL, "TTL of the unit engine's fenced lease")
	f.StringVar(&o.engineLeaseNS, "engine-lease-namespace", "fleet-system", "namespace of the unit engine's Lease")
	f.StringVar(&o.engineLease, "engine-lease-name", "fleetsim-unit-engine", "name of the unit engine's Lease")
}

// setupUnits adds the unit engine (and the fleet API v1, when configured) to the hub.
func setupUnits(mgr ctrl.Manager, o unitOptions, log logr.Logger) error {
	if o.machineTTL <= 0 || o.engineLeaseTTL <= 0 {
		return invalid("--machine-ttl and --engine-lease-ttl must be positive")
	}
	if _, err := engine.Setup(mgr, engine.Options{
		LeaseNamespace: o.engineLeaseNS, LeaseName: o.engineLease,
		LeaseTTL: o.engineLeaseTTL, MachineTTL: o.machineTTL, Log: log.WithName("unit-engine"),
	}); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}
