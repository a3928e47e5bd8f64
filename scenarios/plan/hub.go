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

func checkHubValue(key string, v Value) error {
	switch key {
	case "apiLatency":
		if _, err := time.ParseDuration(v.Text); err != nil || v.Num < 0 {
			return fmt.Errorf("must be a duration such as 5ms, not %q", v.Text)
		}
	case "qps":
		if !v.IsNum || v.Num <= 0 {
			return fmt.Errorf("must be a positive number, not %q", v.Text)
		}
	default:
		if _, err := strconv.Atoi(v.Text); err != nil || v.Num < 0 || (key != "callsPerDecision" && v.Num < 1) {
			return fmt.Errorf("must be a positive integer, not %q", v.Text)
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

func setHub(h *HubModel, key string, v Value) {
	switch key {
	case "workers":
		h.Workers = int(v.Num)
	case "qps":
		h.QPS = v.Num
	case "burst":
		h.Burst = int(v.Num)
	case "callsPerDecision":
		h.CallsPerDecision = int(v.Num)
	case "apiLatency":
		d, _ := time.ParseDuration(v.Text)
		h.APILatency = d
	}
}
