package plan

// The hub model: the production hub's workers, client rate limits and API latency as
// the simulator models them, their defaults, the `hub:` key and the hub.<key> values a
// sweep may give. Separate because it is the one part of a plan that is not the
// scenario's own parameters: it becomes the rendered scenario's hub.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// HubModel is the production hub as the simulator models it: Workers decisions at once,
// each making CallsPerDecision API requests through a client-side token bucket of QPS per
// second holding Burst, one after another, each taking APILatency at the API server. A
// decision therefore takes CallsPerDecision × APILatency once it has its tokens.
type HubModel struct {
	Line             int
	Workers          int
	QPS              float64
	Burst            int
	CallsPerDecision int
	APILatency       time.Duration
}

// DefaultHub is `fleet hub`'s defaults (8 workers, 250 qps, burst 1000) with 10 requests
// per decision at 0.5 ms each (the scenario format's default 5 ms per decision).
var DefaultHub = HubModel{Workers: 8, QPS: 250, Burst: 1000, CallsPerDecision: 10, APILatency: 500 * time.Microsecond}

// hubParams are the hub's parameters a sweep may name as hub.<key>.
var hubParams = []string{"workers", "qps", "burst", "callsPerDecision", "apiLatency"}

// hubInts are the hub model's integer parameters with their ranges.
var hubInts = map[string]struct{ min, max int }{
	"workers":          {1, MaxWorkers},
	"burst":            {1, MaxBurst},
	"callsPerDecision": {0, MaxCallsPerDecision},
}

// checkHubValue checks a value of hub.<key> against its bounds (limits.go), so that no
// product or wait the hub model computes can overflow and nothing prints wrapped around.
func checkHubValue(key string, v Value) error {
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

func (p *parser) hub(n *yaml.Node) (*HubModel, error) {
	f, err := p.fields(n, "hub", hubParams)
	if err != nil {
		return nil, err
	}
	h := DefaultHub
	h.Line = n.Line
	for _, k := range hubParams {
		c := f[k]
		if c == nil {
			continue
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
	if h.CallsPerDecision > h.Burst {
		return nil, p.errorf(n.Line, "hub", "callsPerDecision %d exceeds burst %d: no decision could ever get its requests", h.CallsPerDecision, h.Burst)
	}
	return &h, nil
}

// setHub sets hub.<key> to a value checkHubValue accepted.
func setHub(h *HubModel, key string, v Value) {
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
