package plan

// The hub model: the production hub's workers, client rate limits and API latency as
// the simulator models them, their defaults, the `hub:` key and the hub.<key> values a
// sweep may give. Separate because it is the one part of a plan that is not the
// scenario's own parameters: it becomes the rendered scenario's hub.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetsim/fleetsim/sim/timing"
)

// HubModel is the production hub as the simulator models it. Model says which model:
//
//   - calibrated (the default): sim/timing's measured model (sim.HubModel): Workers
//     decisions at once, each taking the hub's CPU and the API server's CPU for the writes
//     the hub's decision of that controller makes, on the calibration's cores. The
//     calibration is the embedded reference (or `fleetsim plan --calibration FILE`), with the
//     constants the plan names (Set, by the constant's last name: cores, bindingStatus,
//     watched, cpuPerBinding...).
//   - tokenBucket: the earlier request-count model, kept to compare: each decision makes
//     CallsPerDecision API requests through a client-side token bucket of QPS per second
//     holding Burst, one after another, each taking APILatency. A plan asks for it by
//     naming any of its parameters (qps, burst, callsPerDecision, apiLatency).
type HubModel struct {
	Line             int
	Model            string
	Workers          int
	QPS              float64
	Burst            int
	CallsPerDecision int
	APILatency       time.Duration
	// Set are the calibration constants the plan gives, by full name (apiServer.cores).
	Set map[string]float64 `json:",omitempty"`
}

// The hub models.
const (
	Calibrated  = "calibrated"
	TokenBucket = "tokenBucket"
)

// DefaultHub is the calibrated model with `fleet hub`'s 8 workers; the token bucket's
// fields hold `fleet hub`'s client defaults (250 qps, burst 1000) with 10 requests per
// decision at 0.5 ms each, for a plan that asks for that model.
var DefaultHub = HubModel{Model: Calibrated, Workers: 8, QPS: 250, Burst: 1000, CallsPerDecision: 10, APILatency: 500 * time.Microsecond}

// tokenBucketParams are the token bucket's parameters: naming one chooses that model.
var tokenBucketParams = []string{"qps", "burst", "callsPerDecision", "apiLatency"}

// calibrationParams maps the calibration's constants, by their last name, to their full
// name: what a plan may set or sweep as hub.<name> in the calibrated model.
var calibrationParams = func() map[string]string {
	out := map[string]string{}
	for _, full := range timing.Names() {
		out[full[strings.LastIndex(full, ".")+1:]] = full
	}
	return out
}()

// hubParams are the hub's parameters a plan may give or sweep as hub.<key>.
var hubParams = func() []string {
	out := append([]string{"workers"}, tokenBucketParams...)
	for _, full := range timing.Names() {
		out = append(out, full[strings.LastIndex(full, ".")+1:])
	}
	return out
}()

// hubInts are the hub model's integer parameters with their ranges.
var hubInts = map[string]struct{ min, max int }{
	"workers":          {1, MaxWorkers},
	"burst":            {1, MaxBurst},
	"callsPerDecision": {0, MaxCallsPerDecision},
}

// checkHubValue checks a value of hub.<key> against its bounds (limits.go, and the
// calibration's own for its constants), so that no product or wait the hub model computes
// can overflow and nothing prints wrapped around.
func checkHubValue(key string, v Value) error {
	if full, ok := calibrationParams[key]; ok {
		if _, isStr := v.Go.(string); isStr {
			return fmt.Errorf("must be a number in the constant's unit (%s), not %q", full, v.Text)
		}
		probe := timing.Reference()
		return probe.Set(full, v.Num, "plan")
	}
	switch key {
	case "apiLatency":
		if d, err := time.ParseDuration(v.Text); err != nil || d < 0 || d > MaxAPILatency {
			return fmt.Errorf("must be a duration from 0s to %s (MaxAPILatency), such as 5ms, not %q", MaxAPILatency, v.Text)
		}
	case "qps":
		if _, isStr := v.Go.(string); isStr || !(v.Num >= MinQPS && v.Num <= MaxQPS) {
			return fmt.Errorf("must be a number from %g to %s (MinQPS, MaxQPS), not %q", MinQPS, countText(MaxQPS), v.Text)
		}
	default:
		r := hubInts[key]
		if i, err := strconv.Atoi(v.Text); err != nil || i < r.min || i > r.max {
			return fmt.Errorf("must be an integer from %d to %s (Max%s%s), not %q", r.min, countText(float64(r.max)), strings.ToUpper(key[:1]), key[1:], v.Text)
		}
	}
	return nil
}

// hubModelOf is the model a hub parameter belongs to ("" for workers, which both have).
func hubModelOf(key string) string {
	switch {
	case slices.Contains(tokenBucketParams, key):
		return TokenBucket
	case calibrationParams[key] != "":
		return Calibrated
	}
	return ""
}

func (p *parser) hub(n *yaml.Node) (*HubModel, error) {
	f, err := p.fields(n, "hub", hubParams)
	if err != nil {
		return nil, err
	}
	h := DefaultHub
	h.Line = n.Line
	h.Model = ""
	for _, k := range hubParams {
		c := f[k]
		if c == nil {
			continue
		}
		if m := hubModelOf(k); m != "" && h.Model != "" && m != h.Model {
			return nil, p.errorf(c.Line, "hub."+k, "is a parameter of the %s model, and the hub: section already gives the %s model's: give one model's parameters", m, h.Model)
		} else if m != "" {
			h.Model = m
		}
		v, err := p.value(c, "hub."+k)
		if err == nil {
			err = checkHubValue(k, v)
		}
		if err != nil {
			return nil, p.errorf(c.Line, "hub."+k, "%v", strings.TrimPrefix(err.Error(), p.path+":"))
		}
		setHub(&h, k, v)
	}
	if h.Model == "" {
		h.Model = Calibrated
	}
	if h.CallsPerDecision > h.Burst {
		return nil, p.errorf(n.Line, "hub", "callsPerDecision %d exceeds burst %d: no decision could ever get its requests", h.CallsPerDecision, h.Burst)
	}
	return &h, nil
}

// setHub sets hub.<key> to a value checkHubValue accepted.
func setHub(h *HubModel, key string, v Value) {
	if full, ok := calibrationParams[key]; ok {
		set := make(map[string]float64, len(h.Set)+1)
		maps.Copy(set, h.Set)
		set[full] = v.Num
		h.Set = set
		return
	}
	switch key {
	case "workers":
		h.Workers, _ = strconv.Atoi(v.Text)
	case "qps":
		h.QPS = v.Num
	case "burst":
		h.Burst, _ = strconv.Atoi(v.Text)
	case "callsPerDecision":
		h.CallsPerDecision, _ = strconv.Atoi(v.Text)
	case "apiLatency":
		h.APILatency, _ = time.ParseDuration(v.Text)
	}
}
