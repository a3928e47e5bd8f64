package plan

// The plan file: its types (Plan, its parameters, sweep axes and phases) and the parser
// that reads and validates it. The hub model a plan may set or sweep is hub.go; the
// sweep's points and the scenario rendered for each are points.go.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/input"
	"github.com/fleetsim/fleetsim/sim/timing"
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
	// Calibration is the calibrated hub model's base (nil: the embedded reference);
	// `fleetsim plan --calibration FILE` sets it.
	Calibration *timing.Calibration `json:"-"`
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
	// Small: the plan runs at the reduced size of its small: key (--small); the question is
	// then small.question when the plan gives one (the question scaled to the small run).
	Small bool
	// SmallQuestion says the question was scaled to the small run (small.question).
	SmallQuestion bool

	tmpl *template.Template
	// sampleLine is the line of sample: (of the plan's first key without one).
	sampleLine int
	// maxSteps and maxRendered bound one render: MaxTemplateSteps and MaxRenderedBytes
	// unless a test lowers them.
	maxSteps, maxRendered int
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

	// maxSteps and maxRendered, when positive, lower MaxTemplateSteps and MaxRenderedBytes
	// (tests, which must not spend a second of rendering to reach a bound).
	maxSteps, maxRendered int
}

// LoadWith reads and validates a plan file with options. The file is read with
// input.ReadFile's bound, then refused over MaxPlanBytes.
func LoadWith(path string, o ParseOptions) (*Plan, error) {
	data, err := input.ReadFileLimit(path, MaxPlanBytes+1)
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
			pl, err = nil, p.errorf(0, "", "internal error (a bug in fleetsim; please report it with this plan): %v", r)
		}
	}()
	if len(data) > MaxPlanBytes {
		return nil, p.errorf(0, "", "%s bytes, larger than the %s a plan file may have (MaxPlanBytes); is it the file you meant?", countText(float64(len(data))), countText(MaxPlanBytes))
	}
	var doc yaml.Node
	if err := unmarshalYAML(data, &doc); err != nil {
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
	pl = &Plan{Path: path, Seed: 1, Repetitions: 5, Parameters: map[string]Value{}, Sample: 10 * time.Second, sampleLine: root.Line,
		maxSteps: MaxTemplateSteps, maxRendered: MaxRenderedBytes}
	if o.maxSteps > 0 {
		pl.maxSteps = o.maxSteps
	}
	if o.maxRendered > 0 {
		pl.maxRendered = o.maxRendered
	}
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
		if err != nil || v < 1 || v > MaxRepetitions || n.Kind != yaml.ScalarNode {
			return nil, p.errorf(n.Line, "repetitions", "must be an integer from 1 to %s (MaxRepetitions), not %q", countText(MaxRepetitions), n.Value)
		}
		pl.Repetitions = v
	}
	if n := f["sample"]; n != nil {
		d, err := time.ParseDuration(n.Value)
		if err != nil || d < time.Second {
			return nil, p.errorf(n.Line, "sample", "must be a duration of at least 1s, not %q", n.Value)
		}
		pl.Sample, pl.sampleLine = d, n.Line
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
		data, err := input.ReadFileLimit(tp, MaxPlanBytes+1)
		if err != nil {
			return nil, p.errorf(file.Line, "scenarioFile", "%v", err)
		}
		if len(data) > MaxPlanBytes {
			return nil, p.errorf(file.Line, "scenarioFile", "%s is %s bytes, larger than the %s a template may have (MaxPlanBytes)", tp, countText(float64(len(data))), countText(MaxPlanBytes))
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
	sweptTokenBucket := false
	if n := f["sweep"]; n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if key, ok := strings.CutPrefix(n.Content[i].Value, "hub."); ok && hubModelOf(key) == TokenBucket {
				sweptTokenBucket = true
			}
		}
	}
	if pl.Hub == nil && !sweptTokenBucket {
		// No hub: section: the calibrated model with its defaults, as every plan's hub
		// unless it asks for the token bucket.
		h := DefaultHub
		pl.Hub = &h
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
					if hubModelOf(hubKey) == TokenBucket {
						h.Model = TokenBucket
					}
					pl.Hub = &h
				}
				if m := hubModelOf(hubKey); m != "" && m != pl.Hub.Model {
					return nil, p.errorf(k.Line, field, "is a parameter of the %s model, and the plan's hub is the %s model: sweep that model's parameters", m, pl.Hub.Model)
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
			// Count the points before making any value: the product cannot overflow.
			counted, lens := append(slices.Clip(pl.Sweep), Axis{Name: k.Value}), map[string]int{k.Value: len(v.Content)}
			if _, over := countPoints(counted, lens); over >= 0 {
				return nil, p.errorf(k.Line, field, "the sweep has more than %s points so far (%s); a plan may have at most %s (MaxPoints)",
					countText(MaxPoints), axesText(counted, lens), countText(MaxPoints))
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
	// A parameter the template never reads changes nothing: refused, naming it.
	ref := pl.referenced()
	if n := f["parameters"]; n != nil {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !ref[k.Value] {
				return nil, p.errorf(k.Line, "parameters."+k.Value, "the scenario template never reads it ({{.%s}}): it would change nothing; remove it or use it", k.Value)
			}
		}
	}
	for _, a := range pl.Sweep {
		if !strings.HasPrefix(a.Name, "hub.") && !ref[a.Name] {
			return nil, p.errorf(a.Line, "sweep."+a.Name, "the scenario template never reads it ({{.%s}}): sweeping it would change nothing; remove it or use it", a.Name)
		}
	}
	if err := pl.instrument(); err != nil {
		return nil, &scenarios.Error{Path: pl.TemplatePath, Line: pl.TemplateLine, Field: "scenario", Reason: "template: " + err.Error()}
	}
	// Render and validate every point now: a plan that parses runs. Each point costs one
	// render, so this is linear in the points, of which there are at most MaxPoints.
	for i := range pl.NumPoints() {
		if _, err := pl.Scenario(i); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// unmarshalYAML decodes a document, turning a panic of the YAML library into an error.
func unmarshalYAML(data []byte, doc *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML library failed on this input: %v", r)
		}
	}()
	return yaml.Unmarshal(data, doc)
}

// axesText writes the sweep's lengths as a product: "members 4 × hub.qps 2".
func axesText(axes []Axis, replace map[string]int) string {
	var parts []string
	for _, a := range axes {
		k, ok := replace[a.Name]
		if !ok {
			k = len(a.Values)
		}
		parts = append(parts, fmt.Sprintf("%s %d", a.Name, k))
	}
	return strings.Join(parts, " × ")
}

// small checks the `small:` key (sweep: values replacing swept ones or parameter defaults,
// repetitions) and, when apply, applies it.
func (p *parser) small(pl *Plan, n *yaml.Node, apply bool) error {
	f, err := p.fields(n, "small", []string{"sweep", "repetitions", "question"})
	if err != nil {
		return err
	}
	if apply {
		pl.Small = true
	}
	if q := f["question"]; q != nil {
		if q.Kind != yaml.ScalarNode {
			return p.errorf(q.Line, "small.question", "must be a string, not %s", kindName(q))
		}
		if apply {
			pl.Question, pl.SmallQuestion = q.Value, true
		}
	}
	if r := f["repetitions"]; r != nil {
		v, err := strconv.Atoi(r.Value)
		if err != nil || v < 1 || v > MaxRepetitions || r.Kind != yaml.ScalarNode {
			return p.errorf(r.Line, "small.repetitions", "must be an integer from 1 to %s (MaxRepetitions), not %q", countText(MaxRepetitions), r.Value)
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
	// Count the points small: gives before making any value.
	lens := map[string]int{}
	for i := 0; i+1 < len(s.Content); i += 2 {
		if k, v := s.Content[i], s.Content[i+1]; v.Kind == yaml.SequenceNode && pl.axis(k.Value) != nil {
			lens[k.Value] = len(v.Content)
		}
	}
	if _, over := countPoints(pl.Sweep, lens); over >= 0 {
		return p.errorf(s.Line, "small.sweep", "gives more than %s points (%s); a plan may have at most %s (MaxPoints)",
			countText(MaxPoints), axesText(pl.Sweep, lens), countText(MaxPoints))
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
