package scenarios

// Adding timeline steps and expectations to a parsed file without parsing it again. The
// fuzzer runs each scenario file thousands of times, each time with its own fault steps and
// convergence expectations; parsing the whole file for each run (its YAML, every manifest)
// was a large part of a run's CPU. A Base keeps what the parser read from the file and
// parses only the added nodes, then checks what needs every step (time order, member
// names, patterns, fleetctl unit states, the work estimate) as Parse does.

import (
	"maps"
	"slices"

	yaml "go.yaml.in/yaml/v3"
)

// Base is a parsed scenario file that Extend adds timeline steps and expectations to.
type Base struct {
	sc *Scenario
	// p is the parser's state after the file: its members, named steps and objects.
	p *parser
}

// ParseBase parses a scenario file as ParseWith does and keeps what Extend needs.
func ParseBase(path string, data []byte, opts Options) (*Base, error) {
	p := newParser(path, opts)
	s, err := p.parse(data)
	if err != nil {
		return nil, err
	}
	return &Base{sc: s, p: p}, nil
}

// Scenario is the file's scenario as parsed (shared with every Extend: not to be changed).
func (b *Base) Scenario() *Scenario { return b.sc }

// TimelineLen is the number of steps in the file's timeline: the index the first added
// step has (timeline[TimelineLen]).
func (b *Base) TimelineLen() int { return len(b.p.fileSteps) }

// Extend returns what Parse returns for the file with steps added at the end of its
// timeline, expect added at the end of its expectations and seed as its seed. Each node
// must carry the line it would have in that file (a caller that encodes the nodes apart
// shifts their lines): the steps' Line, their manifests' lines and every message are then
// the ones Parse gives, and each added step's Field counts on from the file's steps. The
// Base is not changed; the returned scenario shares the file's steps and manifests, which
// runs only read.
func (b *Base) Extend(seed uint64, steps, expect []*yaml.Node) (*Scenario, error) {
	p := *b.p
	// What the timeline check fills in again for every step; the rest is the file's.
	p.created = map[string]int{}
	p.names = nil
	p.stepLines = maps.Clone(b.p.stepLines)
	p.objects = maps.Clone(b.p.objects)
	all := make([]parsedStep, len(b.p.fileSteps), len(b.p.fileSteps)+len(steps))
	copy(all, b.p.fileSteps)
	for i, n := range steps {
		field := index("timeline", len(b.p.fileSteps)+i)
		n = resolve(n)
		if n == nil || n.Kind == yaml.AliasNode {
			return nil, p.errorf(0, field, "unresolved alias")
		}
		ps, err := p.parseStep(n, field)
		if err != nil {
			return nil, err
		}
		all = append(all, ps)
	}
	p.fileSteps = all
	s := *b.sc
	s.Seed = seed
	var err error
	if s.Timeline, err = p.orderSteps(all); err != nil {
		return nil, err
	}
	if len(expect) > 0 {
		s.Expect = slices.Clip(s.Expect)
		for i, n := range expect {
			field := index("expect", len(b.sc.Expect)+i)
			n = resolve(n)
			if n == nil || n.Kind == yaml.AliasNode {
				return nil, p.errorf(0, field, "unresolved alias")
			}
			e, err := p.parseExpectation(n, field)
			if err != nil {
				return nil, err
			}
			s.Expect = append(s.Expect, e)
		}
	}
	if err := p.checkWork(&s); err != nil {
		return nil, err
	}
	return &s, nil
}
