package hub

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The hub's own metrics, served with controller-runtime's on --metrics-bind-address; with
// client-go's rest_client_requests_total they give the API calls per decision.
var (
	decisionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "fleetsim_hub_decision_duration_seconds",
		Help:    "How long one hub decision took, from reading its scope to the end of its writes, by controller.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"controller"})
	decisionWaitSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "fleetsim_hub_decision_wait_seconds",
		Help:    "How long one hub decision waited before reading: for the cache to hold the hub's own writes, for its placement's or binding's lock and for a worker slot, by controller.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"controller"})
	decisionRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetsim_hub_decision_retries_total",
		Help: "Decisions taken again on fresh objects because a write met a Conflict, AlreadyExists or NotFound.",
	}, []string{"controller"})
	writesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetsim_hub_writes_total",
		Help: "Successful API writes of the hub's decisions, by kind and verb (create, update, update-status, patch, patch-status, delete).",
	}, []string{"kind", "verb"})
	invariantViolations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetsim_invariant_violations_total",
		Help: "Fleet invariants (model/invariants) found violated after a hub decision, by invariant; with --check-invariants.",
	}, []string{"invariant"})
	wakesServedInline = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetsim_hub_wakes_served_inline_total",
		Help: "Queued decisions skipped because another decision had already run their controller for their key on current objects (a placement-wide decision serving its bindings' work generator and fan-in, or its chain), by controller.",
	}, []string{"controller"})
	expectationWaitSeconds = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "fleetsim_hub_expectation_wait_seconds_total",
		Help: "Time decisions spent waiting for the cache to hold the hub's own earlier writes.",
	})
)

func init() {
	crmetrics.Registry.MustRegister(decisionSeconds, decisionWaitSeconds, decisionRetries, writesTotal, invariantViolations, expectationWaitSeconds, wakesServedInline)
}
