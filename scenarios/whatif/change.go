package whatif

// Change files and the scenario they are folded into: the snapshot's scenario, its
// timeline followed by the change's steps at the instant the fleet has settled.

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/input"
)

// Change is one change file: its path, the timeline steps it holds (as YAML mappings
// without their `at`) and each step's offset from the instant the change starts.
type Change struct {
	Path    string
	steps   []*yaml.Node
	offsets []time.Duration
}

// Steps is how many timeline steps the change makes.
func (c *Change) Steps() int { return len(c.steps) }

// LoadChange reads a change file: either a mapping with a `changes:` list of timeline steps
// (each as in a scenario's timeline, `at` optional and counted from the change's start), or
// KubeFleet manifests separated by --- lines, applied as they are (created or updated).
func LoadChange(path string) (*Change, error) {
	data, err := input.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseChange(path, data)
}

// ParseChange parses a change file's text; path names it in errors.
func ParseChange(path string, data []byte) (*Change, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: the change file is empty", path)
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := &Change{Path: path}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind == yaml.MappingNode && len(doc.Content) >= 2 && doc.Content[0].Value == "changes" {
		if len(doc.Content) > 2 {
			return nil, fmt.Errorf("%s:%d: a change file with `changes:` holds nothing else (found %q)", path, doc.Content[2].Line, doc.Content[2].Value)
		}
		list := doc.Content[1]
		if list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
			return nil, fmt.Errorf("%s:%d: changes: must be a non-empty list of timeline steps", path, list.Line)
		}
		for i, item := range list.Content {
			if item.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s:%d: changes[%d]: must be a mapping holding one timeline step", path, item.Line, i)
			}
			step := &yaml.Node{Kind: yaml.MappingNode, Line: item.Line}
			var offset time.Duration
			for j := 0; j+1 < len(item.Content); j += 2 {
				k, v := item.Content[j], item.Content[j+1]
				if k.Value == "at" {
					d, err := time.ParseDuration(v.Value)
					if err != nil || d < 0 {
						return nil, fmt.Errorf("%s:%d: changes[%d].at: %q is not a duration from the change's start such as 0s or 5m", path, v.Line, i, v.Value)
					}
					offset = d
					continue
				}
				step.Content = append(step.Content, k, v)
			}
			c.steps = append(c.steps, step)
			c.offsets = append(c.offsets, offset)
		}
		return c, nil
	}
	// Manifests: one apply step with the file's text (the scenario parser reads and
	// checks every document as `apply` does).
	c.steps = append(c.steps, &yaml.Node{Kind: yaml.MappingNode, Line: 1, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "apply"},
		{Kind: yaml.ScalarNode, Value: string(data), Style: yaml.LiteralStyle},
	}})
	c.offsets = append(c.offsets, 0)
	return c, nil
}

// combine returns the snapshot scenario's text with the changes' steps appended to its
// timeline at start (plus each step's offset), its duration set to end, and its
// expectations and invariants dropped: they were about the snapshot's own run (the
// preview watches every invariant from the change on).
func combine(snapshot []byte, changes []*Change, start, end time.Duration) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(snapshot, &root); err != nil {
		return nil, err
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the snapshot is not a scenario mapping")
	}
	m := root.Content[0]
	var timeline *yaml.Node
	var kept []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "expect", "always", "duration":
			continue
		case "timeline":
			timeline = m.Content[i+1]
		}
		kept = append(kept, m.Content[i], m.Content[i+1])
	}
	if timeline == nil || timeline.Kind != yaml.SequenceNode {
		timeline = &yaml.Node{Kind: yaml.SequenceNode}
		kept = append(kept, &yaml.Node{Kind: yaml.ScalarNode, Value: "timeline"}, timeline)
	}
	kept = append(kept,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "duration"}, &yaml.Node{Kind: yaml.ScalarNode, Value: end.String()})
	m.Content = kept
	for _, c := range changes {
		for i, st := range c.steps {
			step := &yaml.Node{Kind: yaml.MappingNode, Content: append([]*yaml.Node{
				{Kind: yaml.ScalarNode, Value: "at"}, {Kind: yaml.ScalarNode, Value: (start + c.offsets[i]).String()},
			}, st.Content...)}
			timeline.Content = append(timeline.Content, step)
		}
	}
	return yaml.Marshal(&root)
}

var timelineField = regexp.MustCompile(`^timeline\[(\d+)\]`)

// changeError turns an error of the combined scenario that concerns a change's step into
// one naming the change file, its step and the step's line there.
func changeError(err error, snapshotSteps int, changes []*Change) error {
	var pe *scenarios.Error
	if !errors.As(err, &pe) {
		return err
	}
	sm := timelineField.FindStringSubmatch(pe.Field)
	if sm == nil {
		return err
	}
	i, _ := strconv.Atoi(sm[1])
	if i < snapshotSteps {
		return err
	}
	i -= snapshotSteps
	for _, c := range changes {
		if i < len(c.steps) {
			field := "changes[" + strconv.Itoa(i) + "]" + pe.Field[len(sm[0]):]
			return &scenarios.Error{Path: c.Path, Line: c.steps[i].Line, Field: field, Reason: pe.Reason}
		}
		i -= len(c.steps)
	}
	return err
}
