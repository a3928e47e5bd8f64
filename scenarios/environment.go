package scenarios

// The `network:` and `hub:` sections: the member-to-hub network's delay and loss, and
// the production hub's capacity. A section a file, as members.go, timeline.go and
// expect.go are.

import (
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// parseHub reads the production hub's capacity: workers, qps, burst, callsPerDecision and
// decisionTime (defaults: fleet hub's 8, 250, 1000; 10 calls; 5ms).
func (p *parser) parseHub(n *yaml.Node, keyLine int) (*Hub, error) {
	f, err := p.fields(n, "hub", keyLine, "workers", "qps", "burst", "callsPerDecision", "decisionTime")
	if err != nil {
		return nil, err
	}
	h := &Hub{Line: keyLine, Workers: 8, QPS: 250, Burst: 1000, CallsPerDecision: 10, DecisionTime: 5 * time.Millisecond}
	for _, i := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"workers", &h.Workers, 1, HubMaxWorkers}, {"burst", &h.Burst, 1, HubMaxBurst}, {"callsPerDecision", &h.CallsPerDecision, 0, HubMaxCallsPerDecision}} {
		if v := f.get(i.name); v != nil {
			if *i.dst, err = p.int(v, f.child(i.name)); err != nil {
				return nil, err
			}
			if *i.dst < i.min || *i.dst > i.max {
				return nil, p.errorf(v.Line, f.child(i.name), "must be from %d to %d, not %d", i.min, i.max, *i.dst)
			}
		}
	}
	if v := f.get("qps"); v != nil {
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!float" && v.ShortTag() != "!!int") || safely(func() error { return v.Decode(&h.QPS) }) != nil || !(h.QPS >= HubMinQPS && h.QPS <= HubMaxQPS) {
			return nil, p.errorf(v.Line, f.child("qps"), "must be a number from %g to %d, not %s", HubMinQPS, HubMaxQPS, describe(v))
		}
	}
	if v := f.get("decisionTime"); v != nil {
		if h.DecisionTime, err = p.durationValue(v, f.child("decisionTime")); err != nil {
			return nil, err
		}
		if h.DecisionTime < 0 || h.DecisionTime > HubMaxDecisionTime {
			return nil, p.errorf(v.Line, f.child("decisionTime"), "must be from 0s to %s, not %s", HubMaxDecisionTime, h.DecisionTime)
		}
	}
	if h.CallsPerDecision > h.Burst {
		return nil, p.errorf(f.line, "hub", "callsPerDecision %d exceeds burst %d: no decision could ever get its requests", h.CallsPerDecision, h.Burst)
	}
	return h, nil
}

// parseNetwork reads the member-to-hub network: delay distribution and loss.
func (p *parser) parseNetwork(n *yaml.Node, keyLine int) (*Network, error) {
	f, err := p.fields(n, "network", keyLine, "distribution", "mean", "min", "max", "loss")
	if err != nil {
		return nil, err
	}
	nw := &Network{Line: keyLine, Distribution: "constant"}
	if f.get("distribution") != nil {
		if nw.Distribution, err = p.enum(f, "distribution", "constant", "constant", "uniform", "exponential"); err != nil {
			return nil, err
		}
	}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"mean", &nw.Mean}, {"min", &nw.Min}, {"max", &nw.Max}} {
		if v := f.get(d.name); v != nil {
			if *d.dst, err = p.durationValue(v, f.child(d.name)); err != nil {
				return nil, err
			}
			if *d.dst < 0 {
				return nil, p.errorf(v.Line, f.child(d.name), "must not be negative")
			}
		}
	}
	if nw.Distribution == "uniform" && nw.Max < nw.Min {
		return nil, p.errorf(f.line, "network", "uniform delay needs min <= max, got [%s, %s]", nw.Min, nw.Max)
	}
	if v := f.get("loss"); v != nil {
		var loss float64
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!float" && v.ShortTag() != "!!int") || safely(func() error { return v.Decode(&loss) }) != nil {
			return nil, p.errorf(v.Line, f.child("loss"), "must be a number from 0 to 1, not %s", describe(v))
		}
		if loss < 0 || loss >= 1 {
			return nil, p.errorf(v.Line, f.child("loss"), "%v is out of range: must be at least 0 and below 1", loss)
		}
		nw.Loss = loss
	}
	return nw, nil
}
