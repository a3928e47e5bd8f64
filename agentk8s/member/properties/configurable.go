package properties

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/member"
)

// Configurable reports what Kubernetes reports plus properties declared without code: each
// of NodeLabels is the mean of a node label's values (quantities) over the nodes carrying
// it, and each entry of the ConfigMap's data is a YAML mapping of property names to
// quantities (several entries may each declare some).
// A ConfigMap entry overrides a node label property of the same name. An entry that is not
// a property name or whose value is not a quantity is left out and named in the
// ClusterPropertyCollectionSucceeded condition (reason ClusterPropertyCollectionDegraded),
// as is a ConfigMap that cannot be read; the other properties are still reported.
type Configurable struct {
	Kubernetes
	NodeLabels map[string]string
	// ConfigMap is the data's namespace and name; empty Name means none.
	ConfigMap client.ObjectKey
}

func newConfigurable(c Config) (Provider, error) {
	p := &Configurable{NodeLabels: c.NodeLabels}
	for _, name := range slices.Sorted(maps.Keys(c.NodeLabels)) {
		if err := CheckName(name); err != nil {
			return nil, err
		}
		if errs := validation.IsQualifiedName(c.NodeLabels[name]); len(errs) > 0 {
			return nil, fmt.Errorf("property %s: node label %q: %s", name, c.NodeLabels[name], strings.Join(errs, "; "))
		}
	}
	if c.ConfigMap != "" {
		ns, name, ok := strings.Cut(c.ConfigMap, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("properties ConfigMap %q: must be <namespace>/<name>", c.ConfigMap)
		}
		p.ConfigMap = client.ObjectKey{Namespace: ns, Name: name}
	}
	return p, nil
}

// CheckName refuses what cannot be a user-declared property: a name that is not a label key,
// or one the built-in provider reports (the node count, the Kubernetes version, anything
// under resources.kubernetes-fleet.io/).
func CheckName(name string) error {
	if errs := validation.IsQualifiedName(name); len(errs) > 0 {
		return fmt.Errorf("property name %q: %s", name, strings.Join(errs, "; "))
	}
	if name == member.NodeCountProperty || name == KubernetesVersionProperty || strings.HasPrefix(name, member.ResourcePropertyPrefix) {
		return fmt.Errorf("property name %q: reported by the built-in provider, cannot be declared", name)
	}
	return nil
}

// Start starts the embedded Kubernetes provider.
func (p *Configurable) Start(ctx context.Context, cfg *rest.Config) error {
	return p.Kubernetes.Start(ctx, cfg)
}

// Collect adds the declared properties to the built-in ones.
func (p *Configurable) Collect(ctx context.Context) Collection {
	c, nodes := p.collect(ctx)
	if c.Err != nil {
		return c
	}
	for _, name := range slices.Sorted(maps.Keys(p.NodeLabels)) {
		if v, ok, err := MeanOfLabel(nodes, p.NodeLabels[name]); err != nil {
			degraded(&c, fmt.Sprintf("property %s: %v", name, err))
		} else if ok {
			c.Properties[name] = v.String()
		}
	}
	if p.ConfigMap.Name == "" {
		return c
	}
	cm := &corev1.ConfigMap{}
	if err := p.Client.Get(ctx, p.ConfigMap, cm); err != nil {
		degraded(&c, fmt.Sprintf("read the properties ConfigMap %s: %v", p.ConfigMap, err))
		return c
	}
	for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
		entries, err := parseEntry(cm.Data[key])
		if err != nil {
			degraded(&c, fmt.Sprintf("ConfigMap %s: data[%s]: %v", p.ConfigMap, key, err))
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(entries)) {
			if err := CheckName(name); err != nil {
				degraded(&c, fmt.Sprintf("ConfigMap %s: data[%s]: %v", p.ConfigMap, key, err))
				continue
			}
			q, err := resource.ParseQuantity(strings.TrimSpace(entries[name]))
			if err != nil {
				degraded(&c, fmt.Sprintf("ConfigMap %s: data[%s]: property %s: value %q is not a quantity", p.ConfigMap, key, name, entries[name]))
				continue
			}
			c.Properties[name] = q.String()
		}
	}
	return c
}

// parseEntry reads one data entry of the properties ConfigMap: a YAML mapping of property
// names to quantities (a ConfigMap's keys cannot hold the "/" of a property name, so the
// names are inside the values). Numbers are kept as written.
func parseEntry(doc string) (map[string]string, error) {
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a mapping of property names to quantities: %w", err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		switch v := v.(type) {
		case string:
			out[k] = v
		case json.Number:
			out[k] = v.String()
		default:
			return nil, fmt.Errorf("property %s: value %v is not a quantity", k, v)
		}
	}
	return out, nil
}

// MeanOfLabel is the mean, to the thousandth, of the values of label over the nodes carrying
// it; ok is false when none does. A value that is not a quantity is an error.
func MeanOfLabel(nodes []corev1.Node, label string) (mean resource.Quantity, ok bool, err error) {
	var sum, n int64
	for _, node := range nodes {
		v, has := node.Labels[label]
		if !has {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return resource.Quantity{}, false, fmt.Errorf("node %s: label %s=%q is not a quantity", node.Name, label, v)
		}
		sum += q.MilliValue()
		n++
	}
	if n == 0 {
		return resource.Quantity{}, false, nil
	}
	return *resource.NewMilliQuantity(sum/n, resource.DecimalSI), true, nil
}
