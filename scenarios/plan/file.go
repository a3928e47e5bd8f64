package plan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetsim/fleetsim/scenarios"
)

// Plan is a parsed, validated plan file.
type Plan struct {
	Path     string
	Name     string
	Question string
	// Seed is the plan's seed; repetition r of every point runs with RunSeed(Seed, r), so
	// points are compared under the same random draws.
	Seed        uint64
	Repetitions int
	// Template is the scenario as a Go text/template; TemplatePath and TemplateLine say where
	// its first line is (the plan itself for an inline template).
	Template     string
	TemplatePath string
	TemplateLine int
	// Parameters are the defaults of every parameter, Sweep the swept ones in file order.
	Parameters map[string]Value
	Sweep      []Axis
	// Hub models the production hub's API server and client (nil: the scenario's own hub:
	// key, or the simulator's fixed 100 ms per decision).
	Hub *HubModel
	// X is the swept parameter on the x axis of plots and growth fits.
	X string
	// Sample is how often time series (unavailable members, available clusters, hub load)
	// are sampled.
	Sample time.Duration
	// Phases name windows of simulated time: a latency whose interval starts within one is
	// also reported as metric@phase (e.g. staged.duration@concurrent).
	Phases []Phase
	// Limits bound the work of each rendered scenario.
	Limits scenarios.Limits

	tmpl *template.Template
}

// Phase is a named window [From, To) of simulated time.
type Phase struct {
	Name     string
	From, To time.Duration
}

// Value is one parameter value: its text as written and, when it is a number or a
// duration, its numeric value (durations in seconds).
type Value struct {
	Text  string
	Num   float64
	IsNum bool
	// Go is what the template sees: int, float64 or string.
	Go any
}

// Axis is one swept parameter.
type Axis struct {
	Name   string
	Values []Value
	Line   int
}

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

var topKeys = []string{"name", "question", "seed", "repetitions", "scenario", "scenarioFile", "parameters", "sweep", "hub", "x", "sample", "small", "phases"}

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// Load reads and validates a plan file.
func Load(path string) (*Plan, error) {
	return LoadWith(path, ParseOptions{})
}

// ParseOptions change how a plan is read.
type ParseOptions struct {
	// Small runs the plan at the reduced size its `small:` key gives (swept values and
	// repetitions replaced), for tests and smoke runs.
	Small bool
}

// LoadWith reads and validates a plan file with options.
func LoadWith(path string, o ParseOptions) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseWith(path, data, o)
}

type parser struct{ path string }

func (p *parser) errorf(line int, field, format string, args ...any) *scenarios.Error {
	return &scenarios.Error{Path: p.path, Line: line, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Parse parses and validates a plan; the first problem is returned as a *scenarios.Error
// naming the file, line and field. Every point's scenario is rendered and validated, so a
// plan that parses runs.
func Parse(path string, data []byte) (*Plan, error) { return ParseWith(path, data, ParseOptions{}) }

// ParseWith is Parse with options.
func ParseWith(path string, data []byte, o ParseOptions) (pl *Plan, err error) {
	p := &parser{path: path}
	defer func() {
		if r := recover(); r != nil {
			pl, err = nil, p.errorf(0, "", "the YAML library failed on this input: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.errorf(yamlLine(err), "", "invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, p.errorf(0, "", "the plan is empty")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root.Line, "", "a plan must be a mapping of %s", strings.Join(topKeys, ", "))
	}
	f, err := p.fields(root, "", topKeys)
	if err != nil {
		return nil, err
	}
	pl = &Plan{Path: path, Seed: 1, Repetitions: 5, Parameters: map[string]Value{}, Sample: 10 * time.Second}
	if n := f["name"]; n != nil {
		pl.Name = n.Value
	}
	if pl.Name == "" {
		return nil, p.errorf(root.Line, "name", "required")
	}
	if n := f["question"]; n != nil {
		pl.Question = n.Value
	}
	if n := f["seed"]; n != nil {
		v, err := strconv.ParseUint(n.Value, 10, 64)
		if err != nil || n.Kind != yaml.ScalarNode {
			return nil, p.errorf(n.Line, "seed", "must be an integer from 0 to %d, not %q", uint64(1<<64-1), n.Value)
		}
		pl.Seed = v
	}
	if n := f["repetitions"]; n != nil {
		v, err := strconv.Atoi(n.Value)
		if err != nil || v < 1 || v > 10000 || n.Kind != yaml.ScalarNode {
			return nil, p.errorf(n.Line, "repetitions", "must be an integer from 1 to 10000, not %q", n.Value)
		}
		pl.Repetitions = v
	}
	if n := f["sample"]; n != nil {
		d, err := time.ParseDuration(n.Value)
		if err != nil || d < time.Second {
			return nil, p.errorf(n.Line, "sample", "must be a duration of at least 1s, not %q", n.Value)
		}
		pl.Sample = d
	}
	switch s, file := f["scenario"], f["scenarioFile"]; {
	case s != nil && file != nil:
		return nil, p.errorf(file.Line, "scenarioFile", "give either scenario (inline) or scenarioFile, not both")
	case s != nil:
		if s.Kind != yaml.ScalarNode {
			return nil, p.errorf(s.Line, "scenario", "must be the scenario's text as a block (scenario: |), not %s", kindName(s))
		}
		pl.Template, pl.TemplatePath, pl.TemplateLine = s.Value, path, s.Line
		if s.Style == yaml.LiteralStyle || s.Style == yaml.FoldedStyle {
			pl.TemplateLine = s.Line + 1
		}
	case file != nil:
		tp := file.Value
		if !filepath.IsAbs(tp) {
			tp = filepath.Join(filepath.Dir(path), tp)
		}
		data, err := os.ReadFile(tp)
		if err != nil {
			return nil, p.errorf(file.Line, "scenarioFile", "%v", err)
		}
		pl.Template, pl.TemplatePath, pl.TemplateLine = string(data), tp, 1
	default:
		return nil, p.errorf(root.Line, "scenario", "required (or scenarioFile)")
	}
	if n := f["parameters"]; n != nil {
		if n.Kind != yaml.MappingNode {
			return nil, p.errorf(n.Line, "parameters", "must be a mapping of name: value, not %s", kindName(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			field := "parameters." + k.Value
			if !nameRE.MatchString(k.Value) {
				return nil, p.errorf(k.Line, field, "a parameter name is letters, digits and _, starting with a letter")
			}
			if _, dup := pl.Parameters[k.Value]; dup {
				return nil, p.errorf(k.Line, field, "duplicate parameter")
			}
			val, err := p.value(v, field)
			if err != nil {
				return nil, err
			}
			pl.Parameters[k.Value] = val
		}
	}
	if n := f["hub"]; n != nil {
		if pl.Hub, err = p.hub(n); err != nil {
			return nil, err
		}
	}
	if n := f["sweep"]; n != nil {
		if n.Kind != yaml.MappingNode {
			return nil, p.errorf(n.Line, "sweep", "must be a mapping of parameter: [values], not %s", kindName(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			field := "sweep." + k.Value
			name, hubKey, isHub := strings.Cut(k.Value, ".")
			switch {
			case isHub && name == "hub" && slices.Contains(hubParams, hubKey):
				if pl.Hub == nil {
					h := DefaultHub
					h.Line = k.Line
					pl.Hub = &h
				}
			case isHub:
				return nil, p.errorf(k.Line, field, "unknown hub parameter; want one of hub.%s", strings.Join(hubParams, ", hub."))
			case !nameRE.MatchString(k.Value):
				return nil, p.errorf(k.Line, field, "a parameter name is letters, digits and _, starting with a letter")
			}
			if slices.ContainsFunc(pl.Sweep, func(a Axis) bool { return a.Name == k.Value }) {
				return nil, p.errorf(k.Line, field, "duplicate parameter")
			}
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return nil, p.errorf(v.Line, field, "must be a non-empty list of values, not %s", kindName(v))
			}
			ax := Axis{Name: k.Value, Line: k.Line}
			for j, c := range v.Content {
				val, err := p.value(c, fmt.Sprintf("%s[%d]", field, j))
				if err != nil {
					return nil, err
				}
				if isHub {
					if err := checkHubValue(hubKey, val); err != nil {
						return nil, p.errorf(c.Line, fmt.Sprintf("%s[%d]", field, j), "%v", err)
					}
				}
				ax.Values = append(ax.Values, val)
			}
			pl.Sweep = append(pl.Sweep, ax)
		}
	}
	if n := f["phases"]; n != nil {
		if n.Kind != yaml.MappingNode {
			return nil, p.errorf(n.Line, "phases", "must be a mapping of name: {from, to}, not %s", kindName(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			field := "phases." + k.Value
			if !nameRE.MatchString(k.Value) || slices.ContainsFunc(pl.Phases, func(ph Phase) bool { return ph.Name == k.Value }) {
				return nil, p.errorf(k.Line, field, "a phase name is letters, digits and _, starting with a letter, and unique")
			}
			pf, err := p.fields(v, field, []string{"from", "to"})
			if err != nil {
				return nil, err
			}
			ph := Phase{Name: k.Value}
			for _, b := range []struct {
				key string
				dst *time.Duration
			}{{"from", &ph.From}, {"to", &ph.To}} {
				c := pf[b.key]
				if c == nil {
					return nil, p.errorf(v.Line, field+"."+b.key, "required")
				}
				d, err := time.ParseDuration(c.Value)
				if err != nil || d < 0 {
					return nil, p.errorf(c.Line, field+"."+b.key, "must be a duration such as 20m, not %q", c.Value)
				}
				*b.dst = d
			}
			if ph.To <= ph.From {
				return nil, p.errorf(v.Line, field, "to (%s) must be after from (%s)", ph.To, ph.From)
			}
			pl.Phases = append(pl.Phases, ph)
		}
	}
	if n := f["small"]; n != nil {
		if err := p.small(pl, n, o.Small); err != nil {
			return nil, err
		}
	}
	if n := f["x"]; n != nil {
		if !slices.ContainsFunc(pl.Sweep, func(a Axis) bool { return a.Name == n.Value }) {
			return nil, p.errorf(n.Line, "x", "%q is not a swept parameter", n.Value)
		}
		pl.X = n.Value
	} else if len(pl.Sweep) > 0 {
		pl.X = pl.Sweep[0].Name
	}
	if pl.X != "" {
		ax := pl.axis(pl.X)
		for j, v := range ax.Values {
			if !v.IsNum {
				return nil, p.errorf(ax.Line, "sweep."+ax.Name, "the x axis needs numbers or durations; value %d is %q", j, v.Text)
			}
		}
	}
	pl.tmpl, err = template.New("scenario").Option("missingkey=error").Funcs(funcs).Parse(pl.Template)
	if err != nil {
		line, reason := templateError(err)
		return nil, &scenarios.Error{Path: pl.TemplatePath, Line: pl.TemplateLine + max(line, 1) - 1, Field: "scenario", Reason: "template: " + reason}
	}
	// Render and validate every point now: a plan that parses runs.
	for i := range pl.Points() {
		if _, err := pl.Scenario(i); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// small checks the `small:` key (sweep: values replacing swept ones or parameter defaults,
// repetitions) and, when apply, applies it.
func (p *parser) small(pl *Plan, n *yaml.Node, apply bool) error {
	f, err := p.fields(n, "small", []string{"sweep", "repetitions"})
	if err != nil {
		return err
	}
	if r := f["repetitions"]; r != nil {
		v, err := strconv.Atoi(r.Value)
		if err != nil || v < 1 || v > 10000 || r.Kind != yaml.ScalarNode {
			return p.errorf(r.Line, "small.repetitions", "must be an integer from 1 to 10000, not %q", r.Value)
		}
		if apply {
			pl.Repetitions = v
		}
	}
	s := f["sweep"]
	if s == nil {
		return nil
	}
	if s.Kind != yaml.MappingNode {
		return p.errorf(s.Line, "small.sweep", "must be a mapping of parameter: [values], not %s", kindName(s))
	}
	for i := 0; i+1 < len(s.Content); i += 2 {
		k, v := s.Content[i], s.Content[i+1]
		field := "small.sweep." + k.Value
		ax := pl.axis(k.Value)
		_, isParam := pl.Parameters[k.Value]
		if ax == nil && !isParam {
			return p.errorf(k.Line, field, "names neither a swept parameter nor one of parameters")
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 || (ax == nil && len(v.Content) != 1) {
			return p.errorf(v.Line, field, "must be a non-empty list of values (one value for a parameter that is not swept)")
		}
		var vals []Value
		for j, c := range v.Content {
			val, err := p.value(c, fmt.Sprintf("%s[%d]", field, j))
			if err != nil {
				return err
			}
			if key, ok := strings.CutPrefix(k.Value, "hub."); ok {
				if err := checkHubValue(key, val); err != nil {
					return p.errorf(c.Line, fmt.Sprintf("%s[%d]", field, j), "%v", err)
				}
			}
			vals = append(vals, val)
		}
		if !apply {
			continue
		}
		if ax != nil {
			ax.Values = vals
		} else {
			pl.Parameters[k.Value] = vals[0]
		}
	}
	return nil
}

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

// value reads a scalar parameter value.
func (p *parser) value(n *yaml.Node, field string) (Value, error) {
	if n.Kind != yaml.ScalarNode {
		return Value{}, p.errorf(n.Line, field, "must be a number, duration or string, not %s", kindName(n))
	}
	v := Value{Text: n.Value, Go: n.Value}
	switch n.ShortTag() {
	case "!!int":
		i, err := strconv.Atoi(n.Value)
		if err != nil {
			return Value{}, p.errorf(n.Line, field, "%q is not an integer", n.Value)
		}
		v.Num, v.IsNum, v.Go = float64(i), true, i
	case "!!float":
		x, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return Value{}, p.errorf(n.Line, field, "%q is not a number", n.Value)
		}
		v.Num, v.IsNum, v.Go = x, true, x
	case "!!str":
		if d, err := time.ParseDuration(n.Value); err == nil {
			v.Num, v.IsNum = d.Seconds(), true
		}
	default:
		return Value{}, p.errorf(n.Line, field, "must be a number, duration or string, not %q", n.Value)
	}
	return v, nil
}

func (p *parser) fields(n *yaml.Node, field string, allowed []string) (map[string]*yaml.Node, error) {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n.Line, field, "must be a mapping, not %s", kindName(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(allowed, k.Value) {
			return nil, p.errorf(k.Line, join(field, k.Value), "unknown field; want one of %s", strings.Join(allowed, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errorf(k.Line, join(field, k.Value), "duplicate field")
		}
		if v.Kind == yaml.AliasNode {
			return nil, p.errorf(v.Line, join(field, k.Value), "aliases are not supported")
		}
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
			continue
		}
		out[k.Value] = v
	}
	return out, nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

func yamlLine(err error) int {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

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
