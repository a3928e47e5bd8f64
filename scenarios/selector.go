package scenarios

// Member selectors: a member step (fail, heal, taint, untaint, label, skew, workload,
// memberEdit, partition) names one member, a name pattern or a label selector, so that
// "region eu loses its network" is one step rather than one step per member.

import (
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// MemberSelector is the group a member step acts on: the members whose name matches
// Pattern (path.Match syntax: *, ?, [a-z]) and whose labels match Labels (a Kubernetes
// label selector, e.g. region=eu or region in (eu,us)). An empty field matches every
// member; at least one is set. The members are picked when the step runs, from the members
// present then with their labels then, in name order.
type MemberSelector struct {
	Pattern string
	Labels  string
	// selector is Labels parsed.
	selector labels.Selector
}

// Matches reports whether a member with this name and these labels is selected.
func (s *MemberSelector) Matches(name string, memberLabels map[string]string) bool {
	if s.Pattern != "" {
		if ok, _ := path.Match(s.Pattern, name); !ok {
			return false
		}
	}
	if s.Labels != "" {
		sel := s.selector
		if sel == nil {
			var err error
			if sel, err = labels.Parse(s.Labels); err != nil {
				return false
			}
		}
		if !sel.Matches(labels.Set(memberLabels)) {
			return false
		}
	}
	return true
}

// String is the selector as the scenario wrote it, for messages and traces.
func (s *MemberSelector) String() string {
	var parts []string
	if s.Pattern != "" {
		parts = append(parts, "members "+s.Pattern)
	}
	if s.Labels != "" {
		parts = append(parts, "selector "+s.Labels)
	}
	return strings.Join(parts, ", ")
}

// isPattern reports whether a member field holds a name pattern rather than a name.
func isPattern(s string) bool { return strings.ContainsAny(s, "*?[") }

// memberTarget reads a member step's target: `member` (a name, or a pattern when it holds
// *, ? or [) and/or `selector` (a label selector). A single name is returned as name (and
// recorded as a use by the caller); a pattern or selector as a *MemberSelector. allowAll
// keeps the workload step's "*" meaning "every member" as before.
func (p *parser) memberTarget(g *fields, allowAll bool) (name string, sel *MemberSelector, err error) {
	m, hasMember, err := p.optionalString(g, "member")
	if err != nil {
		return "", nil, err
	}
	ls, hasSel, err := p.optionalString(g, "selector")
	if err != nil {
		return "", nil, err
	}
	if !hasMember && !hasSel {
		// member is the usual way; selector is named in the format's documentation.
		return "", nil, p.missing(g, "member")
	}
	if hasMember && m == "" {
		return "", nil, p.missing(g, "member")
	}
	if hasMember && !hasSel && !isPattern(m) {
		return m, nil, nil
	}
	if allowAll && m == AllMembers && !hasSel {
		return m, nil, nil
	}
	sel = &MemberSelector{}
	if hasMember && m != AllMembers {
		if _, perr := path.Match(m, ""); perr != nil {
			return "", nil, p.errorf(g.get("member").Line, g.child("member"), "%q is not a valid name pattern (use *, ? and [a-z]): %v", m, perr)
		}
		sel.Pattern = m
	}
	if hasSel {
		if ls == "" {
			return "", nil, p.missing(g, "selector")
		}
		parsed, perr := labels.Parse(ls)
		if perr != nil {
			return "", nil, p.errorf(g.get("selector").Line, g.child("selector"), "%q is not a label selector (e.g. region=eu, region in (eu,us), !canary): %v", ls, perr)
		}
		sel.Labels, sel.selector = ls, parsed
	}
	return "", sel, nil
}

// checkPattern refuses a pattern that matches no member of `members` nor of a
// MemberCluster manifest (run once every step is read, so that created names are known).
func (p *parser) checkPattern(u patternUse) error {
	if slices.ContainsFunc(p.knownNames(), func(n string) bool { ok, _ := path.Match(u.pattern, n); return ok }) {
		return nil
	}
	return p.errorf(u.line, u.field, "pattern %q matches no member defined in members nor created by a MemberCluster manifest", u.pattern)
}

// patternUse is a name pattern a step uses, checked once every step is read.
type patternUse struct {
	pattern, field string
	line           int
}

// knownNames lists every member name of `members` and of MemberCluster manifests, sorted.
func (p *parser) knownNames() []string {
	if p.names == nil {
		for n := range p.members {
			p.names = append(p.names, n)
		}
		for n := range p.created {
			if _, dup := p.members[n]; !dup {
				p.names = append(p.names, n)
			}
		}
		slices.Sort(p.names)
	}
	return p.names
}
