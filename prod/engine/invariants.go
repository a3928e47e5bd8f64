package engine

import (
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/invariants"
	"github.com/fleetsim/fleetsim/model/units"
)

// registryChecks are the unit invariants the engine can judge from the registry alone. The
// others (globalUnits, unitOnOneMachine) need what each machine's systemd runs and whether
// its agent has caught up, which only the simulator knows exactly.
var registryChecks = []string{"unitConflicts", "unitMachineOf"}

var unitViolations = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "fleetsim_unit_invariant_violations_total",
	Help: "Unit invariants (model/invariants: unitConflicts, unitMachineOf) found violated in the registry at an engine pass, by invariant; with --check-invariants.",
}, []string{"invariant"})

func init() {
	crmetrics.Registry.MustRegister(unitViolations)
	for _, n := range registryChecks {
		unitViolations.WithLabelValues(n) // present at 0 from the start
	}
}

// registry is invariants.UnitReader over the units as one engine pass read them.
type registry []units.Job

func (r registry) Jobs() []units.Job                      { return r }
func (r registry) UnitMachines() []invariants.UnitMachine { return nil }

// checkInvariants evaluates the registry's unit invariants on what a pass read: the
// previous passes' writes and anyone else's. A violation is logged, counted and recorded as
// a Warning event on the unit it names first, once while it lasts with the same detail;
// the engine goes on (its plan repairs what it can).
func (e *Engine) checkInvariants(list []fleetv1.Unit, jobs []units.Job) {
	for _, name := range registryChecks {
		err := invariants.UnitChecks[name](registry(jobs))
		detail := ""
		if err != nil {
			detail = err.Error()
		}
		e.mu.Lock()
		same := e.reported[name] == detail
		e.reported[name] = detail
		e.mu.Unlock()
		if err == nil || same {
			continue
		}
		unitViolations.WithLabelValues(name).Inc()
		e.o.Log.Error(errors.New(detail), "invariant violated", "invariant", name)
		if e.o.Events == nil {
			continue
		}
		if u := firstNamed(list, detail); u != nil {
			e.o.Events.Eventf(u, nil, corev1.EventTypeWarning, "InvariantViolated", name, "%s", detail)
		}
	}
}

// firstNamed is the unit a violation's detail names first (the longest name where two
// start at the same place), whatever order the cache listed the units in.
func firstNamed(list []fleetv1.Unit, detail string) *fleetv1.Unit {
	var best *fleetv1.Unit
	at := len(detail)
	for i := range list {
		n := list[i].Spec.Name
		k := strings.Index(detail, n)
		if k >= 0 && (k < at || k == at && len(n) > len(best.Spec.Name)) {
			best, at = &list[i], k
		}
	}
	return best
}
