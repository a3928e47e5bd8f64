// compile.go holds the policy compiled once per decision (selectors parsed, property
// matchers and sorters resolved, topology spread constraints and PickFixed names read)
// and its fingerprint, which keys what PickN decisions keep per policy.

package scheduler

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// compiledPolicy is a policy with every selector parsed once per decision, so that the
// per-member work is map lookups and comparisons only.
type compiledPolicy struct {
	typ         placement.PlacementType
	required    []compiledTerm // ORed; empty means no requirement
	preferred   []compiledPreference
	sorters     []member.PropertyRef // distinct sorter properties; preferences index into it
	topology    []compiledConstraint
	tolerations []placement.Toleration
	fixed       map[string]bool // PickFixed cluster names
}

type compiledTerm struct {
	labels labels.Selector // nil matches everything
	props  []compiledPropertyRequirement
}

type compiledPropertyRequirement struct {
	ref   member.PropertyRef
	op    placement.PropertySelectorOperator
	value resource.Quantity
}

type compiledPreference struct {
	weight int32
	labels labels.Selector // nil matches everything
	sorter int             // index into compiledPolicy.sorters, or -1
	desc   bool
}

type compiledConstraint struct {
	key           string
	maxSkew       int32
	doNotSchedule bool
}

func compile(p *placement.PlacementPolicy) (*compiledPolicy, error) {
	c := &compiledPolicy{typ: p.Type()}
	if p == nil {
		return c, nil
	}
	c.tolerations = p.Tolerations
	if c.typ == placement.PickFixed {
		c.fixed = make(map[string]bool, len(p.ClusterNames))
		for _, n := range p.ClusterNames {
			c.fixed[n] = true
		}
		return c, nil
	}
	if a := p.Affinity; a != nil && a.ClusterAffinity != nil {
		if req := a.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			for i, t := range req.ClusterSelectorTerms {
				ct, err := compileTerm(t)
				if err != nil {
					return nil, fmt.Errorf("affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[%d]: %w", i, err)
				}
				c.required = append(c.required, ct)
			}
		}
		// Preferred terms only rank PickN candidates; PickAll ignores them (AFF-PREFERRED).
		if c.typ == placement.PickN {
			for i, pref := range a.ClusterAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				cp := compiledPreference{weight: pref.Weight, sorter: -1}
				if ls := pref.Preference.LabelSelector; ls != nil {
					sel, err := metav1.LabelSelectorAsSelector(ls)
					if err != nil {
						return nil, fmt.Errorf("affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d].preference.labelSelector: %w", i, err)
					}
					cp.labels = sel
				}
				if s := pref.Preference.PropertySorter; s != nil {
					cp.sorter = c.sorterIndex(member.ParsePropertyName(s.Name))
					cp.desc = s.SortOrder == placement.Descending
				}
				c.preferred = append(c.preferred, cp)
			}
		}
	}
	if c.typ == placement.PickN {
		for _, t := range p.TopologySpreadConstraints {
			c.topology = append(c.topology, compiledConstraint{
				key:           t.TopologyKey,
				maxSkew:       t.Skew(),
				doNotSchedule: t.Action() == placement.DoNotSchedule,
			})
		}
	}
	return c, nil
}

func (c *compiledPolicy) sorterIndex(ref member.PropertyRef) int {
	for i, r := range c.sorters {
		if r == ref {
			return i
		}
	}
	c.sorters = append(c.sorters, ref)
	return len(c.sorters) - 1
}

func compileTerm(t placement.ClusterSelectorTerm) (compiledTerm, error) {
	var ct compiledTerm
	if t.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			return ct, fmt.Errorf("labelSelector: %w", err)
		}
		ct.labels = sel
	}
	if t.PropertySelector != nil {
		for i, r := range t.PropertySelector.MatchExpressions {
			if len(r.Values) != 1 {
				return ct, fmt.Errorf("propertySelector.matchExpressions[%d].values: must have exactly one value, got %d", i, len(r.Values))
			}
			q, err := resource.ParseQuantity(r.Values[0])
			if err != nil {
				return ct, fmt.Errorf("propertySelector.matchExpressions[%d].values[0]: %q is not a quantity: %w", i, r.Values[0], err)
			}
			switch r.Operator {
			case placement.PropertyGt, placement.PropertyGe, placement.PropertyEq, placement.PropertyNe, placement.PropertyLt, placement.PropertyLe:
			default:
				return ct, fmt.Errorf("propertySelector.matchExpressions[%d].operator: unsupported operator %q", i, r.Operator)
			}
			ct.props = append(ct.props, compiledPropertyRequirement{ref: member.ParsePropertyName(r.Name), op: r.Operator, value: q})
		}
	}
	return ct, nil
}

// matches reports whether a member satisfies the term: labels and every property matcher.
// A member without the property fails its matcher (AFF-PROPERTY-SELECTOR).
func (t *compiledTerm) matches(m *member.Member) bool {
	if t.labels != nil && !t.labels.Matches(labels.Set(m.Labels)) {
		return false
	}
	for i := range t.props {
		r := &t.props[i]
		v, ok := m.Property(r.ref)
		if !ok {
			return false
		}
		if !r.pass(&v) {
			return false
		}
	}
	return true
}

// pass reports whether a reported value satisfies the matcher.
func (r *compiledPropertyRequirement) pass(v *resource.Quantity) bool {
	cmp := v.Cmp(r.value)
	switch r.op {
	case placement.PropertyGt:
		return cmp > 0
	case placement.PropertyGe:
		return cmp >= 0
	case placement.PropertyEq:
		return cmp == 0
	case placement.PropertyNe:
		return cmp != 0
	case placement.PropertyLt:
		return cmp < 0
	case placement.PropertyLe:
		return cmp <= 0
	}
	return false
}

// matchesRequired: terms are ORed; no terms means no requirement.
func (c *compiledPolicy) matchesRequired(m *member.Member) bool {
	if len(c.required) == 0 {
		return true
	}
	for i := range c.required {
		if c.required[i].matches(m) {
			return true
		}
	}
	return false
}

// fingerprint renders what a pickNCache depends on in the policy: what its static filters
// and its score plugins read (required terms, tolerations, preferred terms) and its
// topology spread keys. A plugin that reads a part of the policy not rendered here must
// add it, or decisions would share a cache derived for another policy.
func (c *compiledPolicy) fingerprint() string {
	b := make([]byte, 0, 256)
	sel := func(s interface{ String() string }, isNil bool) {
		if isNil {
			b = append(b, '*')
		} else {
			b = strconv.AppendQuote(b, s.String())
		}
	}
	for i := range c.required {
		t := &c.required[i]
		b = append(b, 'R')
		sel(t.labels, t.labels == nil)
		for _, p := range t.props {
			b = append(b, '|')
			b = strconv.AppendQuote(b, p.ref.Name)
			b = strconv.AppendQuote(b, string(p.op))
			b = strconv.AppendQuote(b, p.value.String())
		}
		b = append(b, '\n')
	}
	for i := range c.preferred {
		p := &c.preferred[i]
		b = strconv.AppendInt(append(b, 'P'), int64(p.weight), 10)
		b = append(b, ' ')
		sel(p.labels, p.labels == nil)
		if p.sorter >= 0 {
			b = strconv.AppendQuote(append(b, " S"...), c.sorters[p.sorter].Name)
			b = strconv.AppendBool(append(b, ' '), p.desc)
		}
		b = append(b, '\n')
	}
	for _, t := range c.tolerations {
		b = append(b, 'T')
		for _, f := range []string{t.Key, string(t.Operator), t.Value, string(t.Effect)} {
			b = strconv.AppendQuote(b, f)
		}
		b = append(b, '\n')
	}
	for _, t := range c.topology {
		b = append(strconv.AppendQuote(append(b, 'S'), t.key), '\n')
	}
	return string(b)
}
