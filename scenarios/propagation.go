package scenarios

// The `propagation:` section: the hub's propagation filter, in the syntax of `fleet hub`'s
// flags, so that a scenario and a production hub are told the same thing the same way.

import (
	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetsim/fleetsim/model/resources"
)

// parsePropagation reads skippedAPIs, allowedAPIs (exclusive) and skippedNamespaces: the
// values of --skipped-propagating-apis, --allowed-propagating-apis and
// --skipped-propagating-namespaces.
func (p *parser) parsePropagation(n *yaml.Node, keyLine int) (*resources.Filter, error) {
	f, err := p.fields(n, "propagation", keyLine, "skippedAPIs", "allowedAPIs", "skippedNamespaces")
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	for i, name := range []string{"skippedAPIs", "allowedAPIs", "skippedNamespaces"} {
		v, _, err := p.optionalString(f, name)
		if err != nil {
			return nil, err
		}
		vals[name] = v
		// Each value alone first, so an error points at its own line.
		args := [3]string{}
		args[i] = v
		if _, err := resources.ParseFilter(args[0], args[1], args[2]); err != nil {
			return nil, p.errorf(f.keyLine(name), f.child(name), "%v", err)
		}
	}
	filter, err := resources.ParseFilter(vals["skippedAPIs"], vals["allowedAPIs"], vals["skippedNamespaces"])
	if err != nil {
		return nil, p.errorf(f.keyLine("allowedAPIs"), f.child("allowedAPIs"), "%v", err)
	}
	return filter, nil
}
