package member

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParsePropertyName(t *testing.T) {
	cases := map[string]PropertyRef{
		"kubernetes-fleet.io/node-count":                   {Name: "kubernetes-fleet.io/node-count"},
		"resources.kubernetes-fleet.io/total-cpu":          {Name: "resources.kubernetes-fleet.io/total-cpu", Capacity: Total, Resource: "cpu"},
		"resources.kubernetes-fleet.io/allocatable-memory": {Name: "resources.kubernetes-fleet.io/allocatable-memory", Capacity: Allocatable, Resource: "memory"},
		"resources.kubernetes-fleet.io/available-cpu":      {Name: "resources.kubernetes-fleet.io/available-cpu", Capacity: Available, Resource: "cpu"},
		"resources.kubernetes-fleet.io/spare-cpu":          {Name: "resources.kubernetes-fleet.io/spare-cpu"},
		"resources.kubernetes-fleet.io/available-":         {Name: "resources.kubernetes-fleet.io/available-"},
		// A dash in the resource part (upstream admits these, then fails every cycle on them).
		"resources.kubernetes-fleet.io/allocatable-ephemeral-storage": {Name: "resources.kubernetes-fleet.io/allocatable-ephemeral-storage", Capacity: Allocatable, Resource: "ephemeral-storage"},
	}
	for name, want := range cases {
		if diff := cmp.Diff(want, ParsePropertyName(name)); diff != "" {
			t.Errorf("ParsePropertyName(%q) (-want +got):\n%s", name, diff)
		}
	}
}

func TestProperty(t *testing.T) {
	m := &Member{
		Properties: map[string]resource.Quantity{NodeCountProperty: resource.MustParse("3")},
		Resources: ResourceUsage{Capacity: ResourceList{"cpu": resource.MustParse("8")}, Available: ResourceList{"cpu": resource.MustParse("2")},
			Allocatable: ResourceList{"ephemeral-storage": resource.MustParse("100Gi")}},
	}
	for _, c := range []struct {
		name string
		want string
		ok   bool
	}{
		{NodeCountProperty, "3", true},
		{"resources.kubernetes-fleet.io/total-cpu", "8", true},
		{"resources.kubernetes-fleet.io/available-cpu", "2", true},
		{"resources.kubernetes-fleet.io/allocatable-cpu", "", false},
		{"resources.kubernetes-fleet.io/allocatable-ephemeral-storage", "100Gi", true},
		{"unknown", "", false},
	} {
		q, ok := m.Property(ParsePropertyName(c.name))
		if ok != c.ok || (ok && q.String() != c.want) {
			t.Errorf("Property(%q) = %v, %v; want %q, %v", c.name, q.String(), ok, c.want, c.ok)
		}
	}
}
