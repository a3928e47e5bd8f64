package scenarios

// Reading typed values from YAML nodes: mappings with fixed or free-form keys, lists,
// strings, enumerations, integers, durations and simulated times, each refusing what is
// wrong with an Error naming its field path and line. Separate because every section's
// parser is built of these, and none of them knows a scenario's schema.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

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

func (p *parser) boolean(n *yaml.Node, field string) (bool, error) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || safely(func() error { return n.Decode(&v) }) != nil {
		return false, p.errorf(n.Line, field, "must be true or false, not %s", describe(n))
	}
	return v, nil
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
