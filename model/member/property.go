package member

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// CapacityType selects one of the three resource usage figures.
type CapacityType uint8

const (
	// NotResource marks a non-resource property, looked up by its name.
	NotResource CapacityType = iota
	Total
	Allocatable
	Available
)

// PropertyRef is a parsed property name, resolved once per decision so that looking a
// property up on each member costs one map access.
type PropertyRef struct {
	Name     string
	Capacity CapacityType
	// Resource is the resource name when Capacity != NotResource.
	Resource string
}

// ParsePropertyName splits resources.kubernetes-fleet.io/<total|allocatable|available>-<name>;
// any other name is a non-resource property. A name with the resource prefix but an unknown
// capacity type is returned as a non-resource property, which simply never matches a
// reported resource: upstream treats it the same way.
func ParsePropertyName(name string) PropertyRef {
	rest, ok := strings.CutPrefix(name, ResourcePropertyPrefix)
	if !ok {
		return PropertyRef{Name: name}
	}
	for _, c := range []struct {
		prefix string
		typ    CapacityType
	}{{"total-", Total}, {"allocatable-", Allocatable}, {"available-", Available}} {
		if res, ok := strings.CutPrefix(rest, c.prefix); ok && res != "" {
			return PropertyRef{Name: name, Capacity: c.typ, Resource: res}
		}
	}
	return PropertyRef{Name: name}
}

// Property returns the member's value for ref, and whether the member reports it.
func (m *Member) Property(ref PropertyRef) (resource.Quantity, bool) {
	var list map[string]resource.Quantity
	switch ref.Capacity {
	case NotResource:
		list = m.Properties
		q, ok := list[ref.Name]
		return q, ok
	case Total:
		list = m.Resources.Capacity
	case Allocatable:
		list = m.Resources.Allocatable
	case Available:
		list = m.Resources.Available
	}
	q, ok := list[ref.Resource]
	return q, ok
}
