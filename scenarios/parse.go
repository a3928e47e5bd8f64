package scenarios

// Parsing a scenario file: the entry points (Load, Parse and their options), the parse
// error, and the parser's top level, which reads each section in order and hands it to
// its file (members.go, timeline.go, expect.go, environment.go). Decoding the YAML is
// document.go; reading typed values from its nodes is nodes.go.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/scenarios/input"
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
// as the *fs.PathError of opening or reading it, a file larger than [input.MaxFileBytes]
// (/dev/zero, a runaway file) as an *input.TooLargeError, and a file that is not a valid
// scenario as an *Error.
func Load(path string) (*Scenario, error) {
	return LoadWith(path, Options{})
}

// LoadWith is Load with options (work limits, the run's length).
func LoadWith(path string, opts Options) (*Scenario, error) {
	data, err := input.ReadFile(path)
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
	s, err := newParser(path, opts).parse(data)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func newParser(path string, opts Options) *parser {
	opts.Limits = opts.Limits.withDefaults()
	return &parser{path: path, opts: opts, members: map[string]memberDef{}, created: map[string]int{}, stepLines: map[string]int{}, objects: map[string]bool{}}
}

// Top-level keys, in the order they are processed.
var topLevelKeys = []string{"name", "description", "seed", "duration", "members", "timeline", "expect", "always", "faults", "network", "hub", "propagation", "initial"}

// memberDef records where a member name was defined: the group's field and index in
// `members`, and the line of its name.
type memberDef struct {
	field string
	line  int
	group int
}

type parser struct {
	path     string
	opts     Options
	duration time.Duration
	// durationLine is the line of the duration key.
	durationLine int
	// members are the names defined by `members`, and groups the groups defining them.
	members map[string]memberDef
	groups  []MemberGroup
	// created are the names of MemberClusters applied anywhere in the timeline, with the line
	// of the manifest that creates them first.
	created map[string]int
	// names caches knownNames; stepNames are the timeline's named steps (`name:`), with
	// their time, for expectations measured from a step.
	names     []string
	stepNames map[string]time.Duration
	stepLines map[string]int
	// objects are the objects apply steps create, as kind/name.
	objects map[string]bool
	// fileSteps are the timeline's steps as read, in file order (for Base).
	fileSteps []parsedStep
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
	if n := f.get("initial"); n != nil {
		if s.Initial, err = p.parseInitial(n, f.keyLine("initial")); err != nil {
			return nil, err
		}
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
	if n := f.get("propagation"); n != nil {
		if s.Propagation, err = p.parsePropagation(n, f.keyLine("propagation")); err != nil {
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
