package scenarios

// Expectations on durations and peaks (rollout, peakUnavailable, unhealthy): measured over
// the whole run and checked at its end, unlike the other expectations, which check the
// state at one instant.

import (
	"path"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/labels"
)

// measuredKinds are the expectation kinds measured over the run.
var measuredKinds = []string{"rollout", "peakUnavailable", "unhealthy"}

func (p *parser) rolloutExpectation(n *yaml.Node, fieldPath string, keyLine int) (*RolloutExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "placement", "from", "within", "by")
	if err != nil {
		return nil, err
	}
	re := &RolloutExpectation{}
	if re.Placement, err = p.requiredString(f, "placement"); err != nil {
		return nil, err
	}
	if err := p.checkPlacementCreated(f, "placement", re.Placement); err != nil {
		return nil, err
	}
	if fr := f.get("from"); fr != nil {
		v, err := p.scalar(fr, f.child("from"))
		if err != nil {
			return nil, err
		}
		if at, ok := p.stepNames[v]; ok {
			re.From, re.FromStep = at, v
		} else if re.From, err = p.simTime(fr, f.child("from")); err != nil {
			return nil, p.errorf(fr.Line, f.child("from"), "%q is neither the name of a timeline step (`name:`) nor an instant such as 10m within the scenario", v)
		}
	}
	w, b := f.get("within"), f.get("by")
	switch {
	case w == nil && b == nil:
		return nil, p.errorf(f.line, fieldPath, "needs within (a duration from `from`) or by (an instant)")
	case w != nil && b != nil:
		return nil, p.errorf(f.keyLine("by"), fieldPath, "has either within or by, not both")
	case w != nil:
		if re.Within, err = p.durationValue(w, f.child("within")); err != nil {
			return nil, err
		}
		if re.Within <= 0 {
			return nil, p.errorf(w.Line, f.child("within"), "must be greater than 0")
		}
	default:
		if re.By, err = p.simTime(b, f.child("by")); err != nil {
			return nil, err
		}
		if re.By < re.From {
			return nil, p.errorf(b.Line, f.child("by"), "%s is before from (%s)", re.By, re.From)
		}
		re.HasBy = true
	}
	return re, nil
}

func (p *parser) peakExpectation(n *yaml.Node, fieldPath string, keyLine int) (*PeakExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "placement", "members", "selector", "atMost", "from", "until")
	if err != nil {
		return nil, err
	}
	pe := &PeakExpectation{Until: p.duration}
	if f.present("placement") {
		if f.present("members") || f.present("selector") {
			return nil, p.errorf(f.keyLine("placement"), fieldPath, "a peak is of a placement or of a group of members (members, selector), not both")
		}
		if pe.Placement, err = p.requiredString(f, "placement"); err != nil {
			return nil, err
		}
		if err := p.checkPlacementCreated(f, "placement", pe.Placement); err != nil {
			return nil, err
		}
	} else if f.present("members") || f.present("selector") {
		if pe.Group, err = p.group(f); err != nil {
			return nil, err
		}
	}
	am := f.get("atMost")
	if am == nil {
		return nil, p.missing(f, "atMost")
	}
	v, err := p.scalar(am, f.child("atMost"))
	if err != nil {
		return nil, err
	}
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		x, perr := strconv.ParseFloat(pct, 64)
		if perr != nil || x < 0 || x > 100 {
			return nil, p.errorf(am.Line, f.child("atMost"), "%q is not a percentage from 0%% to 100%%", v)
		}
		pe.Percent, pe.IsPercent = x, true
	} else {
		x, perr := strconv.Atoi(v)
		if perr != nil || x < 0 {
			return nil, p.errorf(am.Line, f.child("atMost"), "%q is neither a count of clusters (e.g. 50) nor a percentage (e.g. 25%%)", v)
		}
		pe.AtMost = x
	}
	if fr := f.get("from"); fr != nil {
		if pe.From, err = p.simTime(fr, f.child("from")); err != nil {
			return nil, err
		}
	}
	if u := f.get("until"); u != nil {
		if pe.Until, err = p.simTime(u, f.child("until")); err != nil {
			return nil, err
		}
		if pe.Until < pe.From {
			return nil, p.errorf(u.Line, f.child("until"), "%s is before from (%s)", pe.Until, pe.From)
		}
	}
	return pe, nil
}

func (p *parser) unhealthyExpectation(n *yaml.Node, fieldPath string, keyLine int) (*UnhealthyExpectation, error) {
	f, err := p.fields(n, fieldPath, keyLine, "members", "selector", "atMost")
	if err != nil {
		return nil, err
	}
	ue := &UnhealthyExpectation{}
	if ue.Group, err = p.group(f); err != nil {
		return nil, err
	}
	am := f.get("atMost")
	if am == nil {
		return nil, p.missing(f, "atMost")
	}
	if ue.AtMost, err = p.durationValue(am, f.child("atMost")); err != nil {
		return nil, err
	}
	if ue.AtMost < 0 {
		return nil, p.errorf(am.Line, f.child("atMost"), "must not be negative")
	}
	return ue, nil
}

// group reads a group of members: members (a name or a name pattern) and/or selector (a
// label selector).
func (p *parser) group(f *fields) (*MemberSelector, error) {
	m, hasM, err := p.optionalString(f, "members")
	if err != nil {
		return nil, err
	}
	ls, hasS, err := p.optionalString(f, "selector")
	if err != nil {
		return nil, err
	}
	if !hasM && !hasS {
		return nil, p.errorf(f.line, f.field, "needs members (a name or a pattern such as eu-*) or selector (labels such as region=eu)")
	}
	sel := &MemberSelector{}
	if hasM {
		if m == "" {
			return nil, p.missing(f, "members")
		}
		if _, perr := path.Match(m, ""); perr != nil {
			return nil, p.errorf(f.get("members").Line, f.child("members"), "%q is not a valid name pattern (use *, ? and [a-z]): %v", m, perr)
		}
		if err := p.checkPattern(patternUse{pattern: m, field: f.child("members"), line: f.get("members").Line}); err != nil {
			return nil, err
		}
		sel.Pattern = m
	}
	if hasS {
		if ls == "" {
			return nil, p.missing(f, "selector")
		}
		parsed, perr := labels.Parse(ls)
		if perr != nil {
			return nil, p.errorf(f.get("selector").Line, f.child("selector"), "%q is not a label selector (e.g. region=eu, region in (eu,us), !canary): %v", ls, perr)
		}
		sel.Labels, sel.selector = ls, parsed
	}
	return sel, nil
}

// checkPlacementCreated refuses an expectation on a placement no apply step of the
// timeline creates: it would be checked against nothing.
func (p *parser) checkPlacementCreated(f *fields, key, name string) error {
	return p.checkCreated(f, key, "ClusterResourcePlacement", name)
}

// checkCreated refuses an expectation on an object of kind no apply step of the timeline
// creates (a placement, an eviction, a staged update run).
func (p *parser) checkCreated(f *fields, key, kind, name string) error {
	if p.objects[kind+"/"+name] {
		return nil
	}
	return p.errorf(f.get(key).Line, f.child(key), "no apply step of the timeline creates %s %q: the expectation would be checked against nothing", kind, name)
}
