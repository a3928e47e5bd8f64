package fuzz

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetsim/fleetsim/scenarios"
)

// inMemory builds a campaign run's scenario without writing and parsing the whole file:
// the file (as render writes it without faults) is parsed once per target
// (scenarios.Base), and each run encodes and parses only its fault steps and convergence
// expectations (Base.Extend). The run must see exactly the scenario the rendered file
// gives, lines included: steps and manifests carry their lines into the trace
// (`step-failed`, `apply-rejected`), so the trace hash and the campaign's digest depend on
// them. The added nodes are encoded apart, in a fragment laid out as the file lays them
// out (the steps after a first item of the timeline, the expectations after it), and their
// lines shifted to the file's.
type inMemory struct {
	base *scenarios.Base
	// stepShift and expectShift turn a line of the fragment into the line of the file:
	// for the fault steps, for the expectations (which the file has after its other keys).
	stepShift, expectShift int
}

// selfChecks is how many drawn schedules prepareInMemory compares with their rendered
// files before it trusts the in-memory path for a target.
const selfChecks = 2

// prepareInMemory parses the target's file for in-memory runs and measures the line
// shifts on a probe (a hub restart, and the convergence check of one member). It returns
// nil, and every run renders and parses its file, when the file does not lend itself
// (no timeline steps to add after, a flow-style timeline) or when a probe or a few drawn
// schedules give another scenario in memory than their rendered file.
func (t *Target) prepareInMemory() (*inMemory, error) {
	data, err := t.renderFor(1, nil, t.Duration, nil, nil)
	if err != nil {
		return nil, err
	}
	base, err := scenarios.ParseBase(t.Path, data, scenarios.Options{})
	if err != nil {
		return nil, err
	}
	if base.TimelineLen() == 0 {
		return nil, nil // the faults would start the timeline: no step of the file to follow
	}
	probe := []Fault{{Kind: RestartHub}}
	var members []string
	for _, m := range t.members {
		if m.cluster {
			members = []string{m.name}
			break
		}
	}
	full, err := t.renderFor(1, probe, t.Duration, nil, members)
	if err != nil {
		return nil, err
	}
	sc, err := scenarios.Parse(t.Path, full)
	if err != nil {
		return nil, nil // a hub restart at 0s does not parse here: no probe, no in-memory path
	}
	m := &inMemory{base: base}
	steps, expect, err := m.fragment(probe, t.Duration, members)
	if err != nil {
		return nil, err
	}
	field := fmt.Sprintf("timeline[%d]", base.TimelineLen())
	found := false
	for _, st := range sc.Timeline {
		if st.Field == field && len(steps) == 1 {
			m.stepShift, found = st.Line-steps[0].Line, true
		}
	}
	if !found || len(sc.Expect) != len(expect) {
		return nil, nil
	}
	if len(expect) > 0 {
		m.expectShift = sc.Expect[0].Line - expect[0].Line
	}
	r := rand.New(rand.NewPCG(1, 0x696e6d656d))
	for i := range selfChecks {
		faults := probe
		if i > 0 {
			faults = t.draw(r, Kinds, 6)
		}
		if ok, err := m.agrees(t, 1+uint64(i), faults); err != nil || !ok {
			return nil, err
		}
	}
	return m, nil
}

// agrees: the in-memory scenario of a schedule (with its convergence check) is the one its
// rendered file parses to, or both fail with the same error.
func (m *inMemory) agrees(t *Target, seed uint64, faults []Fault) (bool, error) {
	members := t.convergent(faults, t.Duration, nil)
	data, err := t.renderFor(seed, faults, t.Duration, nil, members)
	if err != nil {
		return false, err
	}
	want, werr := scenarios.Parse(t.Path, data)
	got, gerr := m.build(seed, faults, t.Duration, members)
	if werr != nil || gerr != nil {
		return fmt.Sprint(werr) == fmt.Sprint(gerr), nil
	}
	return reflect.DeepEqual(got, want), nil
}

// scenario is a campaign run's scenario: the file with the faults' steps, the convergence
// check of members, the seed, every invariant and the target's duration.
func (m *inMemory) scenario(seed uint64, faults []Fault, end time.Duration, members []string) (*scenarios.Scenario, error) {
	sc, err := m.build(seed, faults, end, members)
	if err != nil {
		return nil, fmt.Errorf("the fuzzed scenario does not parse: %w", err)
	}
	return sc, nil
}

func (m *inMemory) build(seed uint64, faults []Fault, end time.Duration, members []string) (*scenarios.Scenario, error) {
	steps, expect, err := m.fragment(faults, end, members)
	if err != nil {
		return nil, err
	}
	for _, n := range steps {
		shiftLines(n, m.stepShift)
	}
	for _, n := range expect {
		shiftLines(n, m.expectShift)
	}
	return m.base.Extend(seed, steps, expect)
}

// fragment encodes the faults' steps and the expectations as the rendered file holds them
// (a timeline whose first item is a placeholder, as the file's steps come first there;
// then expect) and decodes them, with the fragment's lines.
func (m *inMemory) fragment(faults []Fault, end time.Duration, members []string) (steps, expect []*yaml.Node, err error) {
	fs, err := faultNodes(faults, end)
	if err != nil {
		return nil, nil, err
	}
	first := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("at"), scalar("0s")}}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Content: append([]*yaml.Node{first}, fs...)}
	root := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("timeline"), seq}}
	if len(members) > 0 {
		en, err := expectNode(members)
		if err != nil {
			return nil, nil, err
		}
		root.Content = append(root.Content, scalar("expect"), en)
	}
	data, err := encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}})
	if err != nil {
		return nil, nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("the fault steps do not read back: %w", err)
	}
	r := doc.Content[0]
	steps = get(r, "timeline").Content[1:]
	if e := get(r, "expect"); e != nil {
		expect = e.Content
	}
	return steps, expect, nil
}

// shiftLines moves a decoded node and everything in it by d lines.
func shiftLines(n *yaml.Node, d int) {
	n.Line += d
	for _, c := range n.Content {
		shiftLines(c, d)
	}
}
