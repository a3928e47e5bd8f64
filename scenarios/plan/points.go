package plan

// A plan's points and their scenarios: the sweep's cartesian product (counted without
// overflow, a point computed from its index), a point's label, and the scenario rendered
// (template.go) and parsed for a point. Separate from the parser
// (file.go): this is what a parsed plan does, once per run.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/timing"
)

func (pl *Plan) axis(name string) *Axis {
	for i := range pl.Sweep {
		if pl.Sweep[i].Name == name {
			return &pl.Sweep[i]
		}
	}
	return nil
}

// Point is one combination of swept values.
type Point struct {
	Index int
	// Values are the swept parameters' values, in sweep order.
	Values []Value
}

// NumPoints is the number of points: the product of the sweep's lengths, at most MaxPoints
// for a parsed plan.
func (pl *Plan) NumPoints() int {
	n, _ := countPoints(pl.Sweep, nil)
	return n
}

// countPoints multiplies the axes' lengths (an axis named in replace counts replace's
// length instead) with arithmetic that cannot overflow: it stops at the first axis taking
// the product over MaxPoints and returns that axis' index (-1 when within).
func countPoints(axes []Axis, replace map[string]int) (int, int) {
	n := 1
	for j, a := range axes {
		k, ok := replace[a.Name]
		if !ok {
			k = len(a.Values)
		}
		if k > MaxPoints || n > MaxPoints/k {
			return 0, j
		}
		n *= k
	}
	return n, -1
}

// Point is point i of the sweep's cartesian product, the first parameter varying slowest.
func (pl *Plan) Point(i int) Point {
	vals := make([]Value, len(pl.Sweep))
	rest := i
	for j := len(pl.Sweep) - 1; j >= 0; j-- {
		k := len(pl.Sweep[j].Values)
		vals[j] = pl.Sweep[j].Values[rest%k]
		rest /= k
	}
	return Point{Index: i, Values: vals}
}

// Points lists the cartesian product of the sweep (NumPoints points).
func (pl *Plan) Points() []Point {
	out := make([]Point, pl.NumPoints())
	for i := range out {
		out[i] = pl.Point(i)
	}
	return out
}

// Label names a point: "members=10, hub.qps=50" ("default" without a sweep).
func (pl *Plan) Label(pt Point) string {
	var parts []string
	for j, a := range pl.Sweep {
		parts = append(parts, a.Name+"="+pt.Values[j].Text)
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ", ")
}

// HubModelAt is point i's calibrated hub model (nil when the plan's hub is the token bucket
// or it has none): the plan's calibration (the embedded reference unless Calibration is
// set) with the constants the plan and the point's sweep set.
func (pl *Plan) HubModelAt(i int) (*sim.HubModel, error) {
	if pl.Hub == nil || pl.Hub.Model != Calibrated {
		return nil, nil
	}
	h := *pl.Hub
	pt := pl.Point(i)
	for j, a := range pl.Sweep {
		if key, ok := strings.CutPrefix(a.Name, "hub."); ok {
			setHub(&h, key, pt.Values[j])
		}
	}
	cal := timing.Reference()
	if pl.Calibration != nil {
		c := *pl.Calibration
		cal = &c
	}
	for _, full := range slices.Sorted(maps.Keys(h.Set)) {
		if err := cal.Set(full, h.Set[full], "the plan's hub."+full[strings.LastIndex(full, ".")+1:]); err != nil {
			return nil, &scenarios.Error{Path: pl.Path, Line: h.Line, Field: "hub", Reason: fmt.Sprintf("for %s: %v", pl.Label(pt), err)}
		}
	}
	return &sim.HubModel{Workers: h.Workers, Calibration: cal}, nil
}

// Scenario renders and parses point i's scenario, with the plan's hub model applied. It
// costs one render, whatever i and the number of points.
func (pl *Plan) Scenario(i int) (*scenarios.Scenario, error) {
	pt := pl.Point(i)
	data := map[string]any{}
	hub := map[string]any{}
	var h *HubModel
	if pl.Hub != nil {
		c := *pl.Hub
		h = &c
	}
	for k, v := range pl.Parameters {
		data[k] = v.Go
	}
	for j, a := range pl.Sweep {
		if key, ok := strings.CutPrefix(a.Name, "hub."); ok {
			setHub(h, key, pt.Values[j])
			hub[key] = pt.Values[j].Go
			continue
		}
		data[a.Name] = pt.Values[j].Go
	}
	data["hub"] = hub
	text, line, reason := pl.render(data)
	if reason != "" {
		return nil, &scenarios.Error{Path: pl.TemplatePath, Line: line, Field: "scenario", Reason: fmt.Sprintf("template (%s): %s", pl.Label(pt), reason)}
	}
	sc, err := scenarios.ParseWith(pl.Path, text, scenarios.Options{Limits: pl.Limits})
	if err != nil {
		var se *scenarios.Error
		if errors.As(err, &se) {
			return nil, &scenarios.Error{Path: pl.TemplatePath, Line: pl.TemplateLine, Field: "scenario",
				Reason: fmt.Sprintf("the scenario rendered for %s is invalid at its line %d: %s", pl.Label(pt), se.Line, strings.TrimPrefix(se.Error(), pl.Path+":"))}
		}
		return nil, err
	}
	if n := sc.Duration / pl.Sample; n > MaxSamplesPerRun {
		return nil, &scenarios.Error{Path: pl.Path, Line: pl.sampleLine, Field: "sample",
			Reason: fmt.Sprintf("the scenario rendered for %s lasts %s: sampling every %s takes %s samples per run, more than %s (MaxSamplesPerRun); sample less often",
				pl.Label(pt), sc.Duration, pl.Sample, countText(float64(n)), countText(MaxSamplesPerRun))}
	}
	if h != nil && h.Model == Calibrated {
		sc.Hub = nil // the calibrated model replaces the scenario's own (HubModelAt)
	} else if h != nil {
		sc.Hub = &scenarios.Hub{Line: h.Line, Workers: h.Workers, QPS: h.QPS, Burst: h.Burst, CallsPerDecision: h.CallsPerDecision,
			DecisionTime: time.Duration(h.CallsPerDecision) * h.APILatency}
		if h.CallsPerDecision > h.Burst {
			return nil, &scenarios.Error{Path: pl.Path, Line: h.Line, Field: "hub", Reason: fmt.Sprintf("for %s: callsPerDecision %d exceeds burst %d", pl.Label(pt), h.CallsPerDecision, h.Burst)}
		}
	}
	return sc, nil
}
