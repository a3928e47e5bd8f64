package engine

import (
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fleetsim/fleetsim/model/invariants"
	"github.com/fleetsim/fleetsim/model/units"
	fleetv1 "github.com/fleetsim/fleetsim/prod/apis/fleet/v1alpha1"
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
// a Warning event on the first unit it names, once while it lasts with the same detail;
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
		if e.reported == nil {
			e.reported = map[string]string{}
		}
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
		for i := range list {
			if strings.Contains(detail, list[i].Spec.Name) {
				e.o.Events.Eventf(&list[i], nil, corev1.EventTypeWarning, "InvariantViolated", name, "%s", detail)
				break
			}
		}
	}
}
