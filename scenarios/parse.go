package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Error is a problem in a scenario file: where it is (Path, Line, Field) and what is wrong.
// Parse and Load report the first problem they meet as an *Error.
type Error struct {
	Path string
	// Line is 1-based; 0 when the problem has no line (an empty file, say).
	Line int
	// Field is the path of the offending element, e.g. timeline[2].fail.mode or
	// timeline[0].apply[1] (ClusterResourcePlacement crp); "" for the file as a whole.
	Field  string
	Reason string
}

// Error renders `path:line: field: reason`, leaving out the parts that are empty; without a
// path it renders `line N: field: reason`.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Path != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.Path, e.Line)
	case e.Path != "":
		b.WriteString(e.Path + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Load reads the scenario file at path and parses it. A file that cannot be read is reported
// as the *fs.PathError from os.ReadFile; a file that is not a valid scenario as an *Error.
func Load(path string) (*Scenario, error) {
	return LoadWith(path, Options{})
}

// LoadWith is Load with options (work limits, the run's length).
func LoadWith(path string, opts Options) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseWith(path, data, opts)
}

// Parse parses and validates a scenario file; path is only used in error messages and kept in
// Scenario.Path. The first problem found is returned as an *Error. Parse never panics.
//
// Problems are looked for in this order: the YAML syntax and the top-level keys, then name,
// description, seed, duration, members, timeline (first each step on its own, in file order,
// then the member names steps refer to, in timeline order), expect, always and faults; last,
// the work the scenario asks for is estimated and checked against [DefaultLimits].
func Parse(path string, data []byte) (*Scenario, error) {
	return ParseWith(path, data, Options{})
}

// ParseWith is Parse with options (work limits, the run's length).
func ParseWith(path string, data []byte, opts Options) (*Scenario, error) {
	opts.Limits = opts.Limits.withDefaults()
	p := &parser{path: path, opts: opts, members: map[string]memberDef{}, created: map[string]int{}}
	s, err := p.parse(data)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Top-level keys, in the order they are processed.
var topLevelKeys = []string{"name", "description", "seed", "duration", "members", "timeline", "expect", "always", "faults", "network", "hub"}

// memberDef records where a member name was defined.
type memberDef struct {
	field string
	line  int
}

type parser struct {
	path     string
	opts     Options
	duration time.Duration
	// durationLine is the line of the duration key.
	durationLine int
	// members are the names defined by `members`.
	members map[string]memberDef
	// created are the names of MemberClusters applied anywhere in the timeline, with the line
	// of the manifest that creates them first.
	created map[string]int
}

func (p *parser) errorf(line int, field, format string, args ...any) *Error {
	return &Error{Path: p.path, Line: line, Field: field, Reason: fmt.Sprintf(format, args...)}
}

func (p *parser) parse(data []byte) (*Scenario, error) {
	root, err := p.document(data)
	if err != nil {
		return nil, err
	}
	if isNull(root) {
		return nil, p.errorf(root.Line, "", "the scenario is empty")
	}
	f, err := p.fields(root, "", 1, topLevelKeys...)
	if err != nil {
		return nil, err
	}
	s := &Scenario{Path: p.path, Seed: 1}

	if s.Name, err = p.requiredString(f, "name"); err != nil {
		return nil, err
	}
	if s.Description, _, err = p.optionalString(f, "description"); err != nil {
		return nil, err
	}
	if n := f.get("seed"); n != nil {
		if s.Seed, err = p.uint64(n, "seed"); err != nil {
			return nil, err
		}
	}
	n := f.get("duration")
	if n == nil {
		return nil, p.missing(f, "duration")
	}
	if s.Duration, err = p.durationValue(n, "duration"); err != nil {
		return nil, err
	}
	if s.Duration <= 0 {
		return nil, p.errorf(n.Line, "duration", "must be greater than 0")
	}
	p.duration = s.Duration
	p.durationLine = f.keyLine("duration")

	if s.Members, err = p.parseMembers(f.get("members")); err != nil {
		return nil, err
	}
	if s.Timeline, err = p.parseTimeline(f.get("timeline")); err != nil {
		return nil, err
	}
	if s.Expect, err = p.parseExpect(f.get("expect")); err != nil {
		return nil, err
	}
	if s.Always, err = p.parseAlways(f.get("always")); err != nil {
		return nil, err
	}
	if n := f.get("network"); n != nil {
		if s.Network, err = p.parseNetwork(n, f.keyLine("network")); err != nil {
			return nil, err
		}
	}
	if n := f.get("hub"); n != nil {
		if s.Hub, err = p.parseHub(n, f.keyLine("hub")); err != nil {
			return nil, err
		}
	}
	if n := f.get("faults"); n != nil {
		if s.Faults, err = p.parseFaults(n, f.keyLine("faults")); err != nil {
			return nil, err
		}
	}
	if err := p.checkWork(s); err != nil {
		return nil, err
	}
	return s, nil
}

// document decodes the single YAML document of a scenario file and returns its root node.
func (p *parser) document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := safely(func() error { return dec.Decode(&doc) })
	if errors.Is(err, io.EOF) {
		return nil, p.errorf(0, "", "the scenario is empty")
	}
	if err != nil {
		line, reason := yamlError(err)
		return nil, p.errorf(max(line, 1), "", "%s", reason)
	}
	var next yaml.Node
	switch err := safely(func() error { return dec.Decode(&next) }); {
	case errors.Is(err, io.EOF):
	case err != nil:
		line, reason := yamlError(err)
		return nil, p.errorf(max(line, 1), "", "%s", reason)
	default:
		return nil, p.errorf(max(next.Line, 1), "", "a scenario file holds one YAML document; found a second one (manifests go in a timeline step's apply)")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, p.errorf(0, "", "the scenario is empty")
	}
	return resolve(doc.Content[0]), nil
}

// safely runs a call into a YAML or JSON library, turning a panic into an error, so that Parse
// never panics whatever the input.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the YAML library failed on this input: %v", r)
		}
	}()
	return f()
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the messages of yaml.v3's parser (as opposed to its scanner). For
// them yaml.v3 reports the 0-based line of the construct being parsed, one less than its
// 1-based line, so yamlError adds one.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlError splits a YAML syntax error into its line (0 when it has none) and a reason.
func yamlError(err error) (int, string) {
	msg := strings.TrimSpace(err.Error())
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if parserProblems[m[2]] {
			line++
		}
		return line, "invalid YAML: " + m[2]
	}
	return 0, "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")
}

// resolve follows aliases to the anchored node.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a node is, for "must be a mapping, not a list" messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unresolved alias"
}

// join builds a field path: join("members[0]", "labels") = members[0].labels.
func join(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

func index(parent string, i int) string { return fmt.Sprintf("%s[%d]", parent, i) }

// key addresses a map entry the way k8s field paths do: labels[kubernetes.io/region].
func key(parent, k string) string { return parent + "[" + k + "]" }

// fields is a YAML mapping with a fixed set of keys, checked for unknown and duplicate keys.
type fields struct {
	field string // path of the mapping
	line  int    // where to report a missing key
	keys  map[string]*yaml.Node
	vals  map[string]*yaml.Node
}

// fields checks that n is a mapping (or null, which counts as empty) whose keys are all in
// allowed and appear once. line is where missing keys are reported (0: the mapping's line).
func (p *parser) fields(n *yaml.Node, field string, line int, allowed ...string) (*fields, error) {
	n = resolve(n)
	if line == 0 && n != nil {
		line = n.Line
	}
	f := &fields{field: field, line: line, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	if isNull(n) {
		return f, nil
	}
	if n.Kind != yaml.MappingNode {
		what := "must be a mapping"
		if field == "" {
			what = "the scenario must be a mapping of " + strings.Join(topLevelKeys, ", ")
		}
		return nil, p.errorf(n.Line, field, "%s, not %s", what, describe(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, v := resolve(n.Content[i]), n.Content[i+1]
		name, err := p.mapKey(kn, field)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(allowed, name) {
			return nil, p.errorf(kn.Line, field, "unknown field %q", name)
		}
		if prev, dup := f.keys[name]; dup {
			return nil, p.errorf(kn.Line, field, "duplicate field %q (first at line %d)", name, prev.Line)
		}
		f.keys[name], f.vals[name] = kn, v
	}
	return f, nil
}

// mapKey returns the text of a mapping key, refusing merge keys and non-scalar keys.
func (p *parser) mapKey(kn *yaml.Node, field string) (string, error) {
	if kn == nil || kn.Kind != yaml.ScalarNode {
		line := 0
		if kn != nil {
			line = kn.Line
		}
		return "", p.errorf(line, field, "keys must be strings, not %s", describe(kn))
	}
	if kn.ShortTag() == "!!merge" {
		return "", p.errorf(kn.Line, field, "merge keys (<<) are not supported")
	}
	return kn.Value, nil
}

// present reports whether the key is there, even with a null value.
func (f *fields) present(name string) bool { _, ok := f.keys[name]; return ok }

// get returns the value of a key, or nil when the key is absent or null.
func (f *fields) get(name string) *yaml.Node {
	v := resolve(f.vals[name])
	if isNull(v) {
		return nil
	}
	return v
}

func (f *fields) keyLine(name string) int {
	if k := f.keys[name]; k != nil {
		return k.Line
	}
	return f.line
}

func (f *fields) child(name string) string { return join(f.field, name) }

func (p *parser) missing(f *fields, name string) *Error {
	line := f.line
	if f.present(name) {
		line = f.keyLine(name)
	}
	return p.errorf(line, f.child(name), "required")
}

// entry is one entry of a mapping with free-form keys (labels, properties, ...).
type entry struct {
	key  string
	line int
	val  *yaml.Node // resolved; may be a null scalar
}

// entries returns the entries of a free-form mapping (null: none), refusing duplicate keys.
func (p *parser) entries(n *yaml.Node, field string) ([]entry, error) {
	n = resolve(n)
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n.Line, field, "must be a mapping, not %s", describe(n))
	}
	var out []entry
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := resolve(n.Content[i])
		k, err := p.mapKey(kn, field)
		if err != nil {
			return nil, err
		}
		if first, dup := seen[k]; dup {
			return nil, p.errorf(kn.Line, field, "duplicate key %q (first at line %d)", k, first)
		}
		seen[k] = kn.Line
		out = append(out, entry{key: k, line: kn.Line, val: resolve(n.Content[i+1])})
	}
	return out, nil
}

// list returns the items of a sequence (null: none), aliases resolved.
func (p *parser) list(n *yaml.Node, field string) ([]*yaml.Node, error) {
	n = resolve(n)
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errorf(n.Line, field, "must be a list, not %s", describe(n))
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = resolve(c)
		if out[i] == nil || out[i].Kind == yaml.AliasNode {
			return nil, p.errorf(n.Line, index(field, i), "unresolved alias")
		}
	}
	return out, nil
}

// scalar returns the text of a scalar node exactly as written (so `version: 1.10` stays
// "1.10"); null is "".
func (p *parser) scalar(n *yaml.Node, field string) (string, error) {
	n = resolve(n)
	if isNull(n) {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", p.errorf(n.Line, field, "must be a string, not %s", describe(n))
	}
	return n.Value, nil
}

// requiredString returns a key's non-empty string value.
func (p *parser) requiredString(f *fields, name string) (string, error) {
	s, ok, err := p.optionalString(f, name)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", p.missing(f, name)
	}
	return s, nil
}

func (p *parser) optionalString(f *fields, name string) (string, bool, error) {
	n := f.get(name)
	if n == nil {
		return "", false, nil
	}
	s, err := p.scalar(n, f.child(name))
	return s, true, err
}

// oneOf checks an enumerated string value.
func (p *parser) oneOf(n *yaml.Node, field, value string, allowed ...string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	return p.errorf(n.Line, field, "%q is not one of %s", value, strings.Join(allowed, ", "))
}

// enum reads an optional enumerated key, returning def when it is absent.
func (p *parser) enum(f *fields, name, def string, allowed ...string) (string, error) {
	n := f.get(name)
	if n == nil {
		return def, nil
	}
	s, err := p.scalar(n, f.child(name))
	if err != nil {
		return "", err
	}
	return s, p.oneOf(n, f.child(name), s, allowed...)
}

func (p *parser) uint64(n *yaml.Node, field string) (uint64, error) {
	var v uint64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || safely(func() error { return n.Decode(&v) }) != nil {
		return 0, p.errorf(n.Line, field, "must be an integer from 0 to %d, not %s", uint64(1<<64-1), describe(n))
	}
	return v, nil
}

func (p *parser) int(n *yaml.Node, field string) (int, error) {
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || safely(func() error { return n.Decode(&v) }) != nil {
		return 0, p.errorf(n.Line, field, "must be an integer, not %s", describe(n))
	}
	return v, nil
}

// durationValue parses a Go duration string such as 90s, 5m or 2h30m.
func (p *parser) durationValue(n *yaml.Node, field string) (time.Duration, error) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		return 0, p.errorf(lineOf(n), field, "must be a duration such as 90s, 5m or 2h30m, not %s", describe(n))
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		return 0, p.errorf(n.Line, field, "%q is not a duration (use a Go duration such as 90s, 5m or 2h30m)", n.Value)
	}
	return d, nil
}

// simTime reads an instant of simulated time: a duration from 0 to the scenario's duration.
func (p *parser) simTime(n *yaml.Node, field string) (time.Duration, error) {
	d, err := p.durationValue(n, field)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, p.errorf(n.Line, field, "%s is negative; times count from the start of the scenario", d)
	}
	if d > p.duration {
		return 0, p.errorf(n.Line, field, "%s is after the end of the scenario (duration %s)", d, p.duration)
	}
	return d, nil
}

func lineOf(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// knownMember reports whether name is defined by `members` or by a MemberCluster manifest
// anywhere in the timeline.
func (p *parser) knownMember(name string) bool {
	if _, ok := p.members[name]; ok {
		return true
	}
	_, ok := p.created[name]
	return ok
}

// InvariantNames returns the names `always` accepts, sorted.
func InvariantNames() []string {
	names := make([]string, 0, len(Invariants))
	for n := range Invariants {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// parseHub reads the production hub's capacity: workers, qps, burst, callsPerDecision and
// decisionTime (defaults: fleet hub's 8, 250, 1000; 10 calls; 5ms).
func (p *parser) parseHub(n *yaml.Node, keyLine int) (*Hub, error) {
	f, err := p.fields(n, "hub", keyLine, "workers", "qps", "burst", "callsPerDecision", "decisionTime")
	if err != nil {
		return nil, err
	}
	h := &Hub{Line: keyLine, Workers: 8, QPS: 250, Burst: 1000, CallsPerDecision: 10, DecisionTime: 5 * time.Millisecond}
	for _, i := range []struct {
		name string
		dst  *int
		min  int
	}{{"workers", &h.Workers, 1}, {"burst", &h.Burst, 1}, {"callsPerDecision", &h.CallsPerDecision, 0}} {
		if v := f.get(i.name); v != nil {
			if *i.dst, err = p.int(v, f.child(i.name)); err != nil {
				return nil, err
			}
			if *i.dst < i.min {
				return nil, p.errorf(v.Line, f.child(i.name), "must be at least %d", i.min)
			}
		}
	}
	if v := f.get("qps"); v != nil {
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!float" && v.ShortTag() != "!!int") || safely(func() error { return v.Decode(&h.QPS) }) != nil || !(h.QPS > 0) {
			return nil, p.errorf(v.Line, f.child("qps"), "must be a positive number, not %s", describe(v))
		}
	}
	if v := f.get("decisionTime"); v != nil {
		if h.DecisionTime, err = p.durationValue(v, f.child("decisionTime")); err != nil {
			return nil, err
		}
		if h.DecisionTime < 0 {
			return nil, p.errorf(v.Line, f.child("decisionTime"), "must not be negative")
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
