package scenarios

// The `initial:` section: state a scenario starts in that the simulator cannot derive from
// its timeline, because it depends on the history of a real hub. `fleetsim snapshot` writes
// it for the bindings of each placement, which a PickN placement keeps even when the
// scheduler would pick otherwise on an empty fleet today.

import (
	"slices"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Initial is a scenario's starting state beyond its members and timeline.
type Initial struct {
	Line int
	// Bindings are each placement's bindings as they were captured, by placement.
	Bindings []InitialBindings
}

// InitialBindings are the clusters a placement is bound to when the scenario starts: the
// simulator installs them before the scheduler's first decision for the placement, so the
// scheduler keeps them as its own earlier picks.
type InitialBindings struct {
	Line      int
	Placement string
	// Clusters, sorted, each a member the scenario defines.
	Clusters []string
}

var (
	initialKeys        = []string{"bindings"}
	initialBindingKeys = []string{"placement", "clusters"}
)

func (p *parser) parseInitial(n *yaml.Node, keyLine int) (*Initial, error) {
	f, err := p.fields(n, "initial", keyLine, initialKeys...)
	if err != nil {
		return nil, err
	}
	in := &Initial{Line: keyLine}
	items, err := p.list(f.get("bindings"), f.child("bindings"))
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for i, item := range items {
		field := index(f.child("bindings"), i)
		bf, err := p.fields(item, field, item.Line, initialBindingKeys...)
		if err != nil {
			return nil, err
		}
		b := InitialBindings{Line: item.Line}
		if b.Placement, err = p.requiredString(bf, "placement"); err != nil {
			return nil, err
		}
		if errs := validation.IsDNS1123Subdomain(b.Placement); len(errs) > 0 {
			return nil, p.errorf(item.Line, bf.child("placement"), "invalid placement name %q: %s", b.Placement, errs[0])
		}
		if first, dup := seen[b.Placement]; dup {
			return nil, p.errorf(item.Line, bf.child("placement"), "placement %s already has its bindings in %s", b.Placement, first)
		}
		seen[b.Placement] = field
		cs, err := p.list(bf.get("clusters"), bf.child("clusters"))
		if err != nil {
			return nil, err
		}
		for j, c := range cs {
			cf := index(bf.child("clusters"), j)
			name, err := p.scalar(c, cf)
			if err != nil {
				return nil, err
			}
			if !p.knownMember(name) {
				return nil, p.errorf(c.Line, cf, "unknown member %q: not defined in members, nor created by a MemberCluster manifest", name)
			}
			if slices.Contains(b.Clusters, name) {
				return nil, p.errorf(c.Line, cf, "cluster %q is listed twice", name)
			}
			b.Clusters = append(b.Clusters, name)
		}
		slices.Sort(b.Clusters)
		in.Bindings = append(in.Bindings, b)
	}
	return in, nil
}
