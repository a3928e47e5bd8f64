package hubbench

// The hub's counters: its decisions, API requests, retries, waits and writes, scraped
// from its Prometheus endpoint. Separate because it is the one place that knows the
// metric names the hub exports.

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
)

type metricSums struct {
	// reconciles counts every dequeued key; decisions leaves out those skipped because
	// another decision had served them inline.
	reconciles, decisions, requests, retries, waited, decideSum, decideCount float64
	servedInline                                                             float64
	// placementReconciles are the reconciles of every controller but membership, whose
	// heartbeats never stop.
	placementReconciles float64
	// snapshotReconciles are the policy-snapshot controller's, decided or served inline:
	// a starting hub wakes it once for every placement.
	snapshotReconciles   float64
	writes, byController map[string]float64
	// decision time by controller: sum and count of the hub's own histogram
	durSum, durCount map[string]float64
	// waits before deciding by controller: sum of the hub's histogram
	waitSum map[string]float64
}

// scrape reads the hub's decisions (controller-runtime's reconcile count, over every
// controller) and API requests (client-go's) from its metrics endpoint.
func (b *bench) scrape() (metricSums, error) {
	m := metricSums{writes: map[string]float64{}, byController: map[string]float64{}, durSum: map[string]float64{}, durCount: map[string]float64{}, waitSum: map[string]float64{}}
	resp, err := http.Get("http://" + b.metrics + "/metrics")
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var into *float64
		switch {
		case strings.HasPrefix(line, "controller_runtime_reconcile_total{"):
			into = &m.decisions
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.byController[label(line, "controller")] += v
				if c := label(line, "controller"); c != "membership" && c != "clusterprofile" {
					m.placementReconciles += v
				}
				if label(line, "controller") == "policy-snapshot" {
					m.snapshotReconciles += v
				}
			}
		case strings.HasPrefix(line, "fleetsim_hub_wakes_served_inline_total{"):
			into = &m.servedInline
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.byController[label(line, "controller")] -= v
			}
		case strings.HasPrefix(line, "rest_client_requests_total{"):
			into = &m.requests
		case strings.HasPrefix(line, "fleetsim_hub_decision_retries_total{"):
			into = &m.retries
		case strings.HasPrefix(line, "fleetsim_hub_expectation_wait_seconds_total "):
			into = &m.waited
		case strings.HasPrefix(line, "fleetsim_hub_decision_duration_seconds_sum{"):
			into = &m.decideSum
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.durSum[label(line, "controller")] += v
			}
		case strings.HasPrefix(line, "fleetsim_hub_decision_duration_seconds_count{"):
			into = &m.decideCount
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.durCount[label(line, "controller")] += v
			}
		case strings.HasPrefix(line, "fleetsim_hub_decision_wait_seconds_sum{"):
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.waitSum[label(line, "controller")] += v
			}
			continue
		case strings.HasPrefix(line, "fleetsim_hub_writes_total{"):
			kind, verb := label(line, "kind"), label(line, "verb")
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.writes[kind+" "+verb] += v
			}
			continue
		default:
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			*into += v
		}
	}
	m.reconciles = m.decisions
	m.decisions -= m.servedInline
	return m, sc.Err()
}

// label reads one label's value from a line of the Prometheus text format.
func label(line, name string) string {
	_, rest, ok := strings.Cut(line, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}
