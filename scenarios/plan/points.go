package plan

// A plan's points and their scenarios: the sweep's cartesian product, a point's label,
// and the scenario template rendered and parsed for a point, with the template's helper
// functions and its errors' lines. Separate from the parser (file.go): this is what a
// parsed plan does, once per run.

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/fleetsim/fleetsim/scenarios"
)

var templateLineRE = regexp.MustCompile(`^template: scenario:(\d+):(?:\d+:)? ?(.*)$`)

var startedRE = regexp.MustCompile(`started at scenario:(\d+)`)

func templateError(err error) (int, string) {
	msg := err.Error()
	if m := templateLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if s := startedRE.FindStringSubmatch(m[2]); s != nil {
			n, _ = strconv.Atoi(s[1])
		}
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "template: ")
}

// funcs are the template's helpers: seq a b (the integers a..b), add, sub, mul, div (ints).
var funcs = template.FuncMap{
	"seq": func(a, b int) ([]int, error) {
		if b-a > 10_000_000 {
			return nil, fmt.Errorf("seq %d %d: too many values", a, b)
		}
		var out []int
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
		return out, nil
	},
	"add": func(a, b int) int { return a + b },
	"sub": func(a, b int) int { return a - b },
	"mul": func(a, b int) int { return a * b },
	"div": func(a, b int) (int, error) {
		if b == 0 {
			return 0, errors.New("div by zero")
		}
		return a / b, nil
	},
	"mod": func(a, b int) (int, error) {
		if b == 0 {
			return 0, errors.New("mod by zero")
		}
		return a % b, nil
	},
}

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

// Points lists the cartesian product of the sweep, the first parameter varying slowest.
func (pl *Plan) Points() []Point {
	n := 1
	for _, a := range pl.Sweep {
		n *= len(a.Values)
	}
	out := make([]Point, n)
	for i := range out {
		out[i].Index = i
		rest := i
		vals := make([]Value, len(pl.Sweep))
		for j := len(pl.Sweep) - 1; j >= 0; j-- {
			k := len(pl.Sweep[j].Values)
			vals[j] = pl.Sweep[j].Values[rest%k]
			rest /= k
		}
		out[i].Values = vals
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

// Scenario renders and parses point i's scenario, with the plan's hub model applied.
func (pl *Plan) Scenario(i int) (*scenarios.Scenario, error) {
	pt := pl.Points()[i]
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
	var buf bytes.Buffer
	if err := pl.tmpl.Execute(&buf, data); err != nil {
		line, reason := templateError(err)
		return nil, &scenarios.Error{Path: pl.TemplatePath, Line: pl.TemplateLine + max(line, 1) - 1, Field: "scenario", Reason: fmt.Sprintf("template (%s): %s", pl.Label(pt), reason)}
	}
	sc, err := scenarios.ParseWith(pl.Path, buf.Bytes(), scenarios.Options{Limits: pl.Limits})
	if err != nil {
		var se *scenarios.Error
		if errors.As(err, &se) {
			return nil, &scenarios.Error{Path: pl.TemplatePath, Line: pl.TemplateLine, Field: "scenario",
				Reason: fmt.Sprintf("the scenario rendered for %s is invalid at its line %d: %s", pl.Label(pt), se.Line, strings.TrimPrefix(se.Error(), pl.Path+":"))}
		}
		return nil, err
	}
	if h != nil {
		sc.Hub = &scenarios.Hub{Line: h.Line, Workers: h.Workers, QPS: h.QPS, Burst: h.Burst, CallsPerDecision: h.CallsPerDecision,
			DecisionTime: time.Duration(h.CallsPerDecision) * h.APILatency}
		if h.CallsPerDecision > h.Burst {
			return nil, &scenarios.Error{Path: pl.Path, Line: h.Line, Field: "hub", Reason: fmt.Sprintf("for %s: callsPerDecision %d exceeds burst %d", pl.Label(pt), h.CallsPerDecision, h.Burst)}
		}
	}
	return sc, nil
}
