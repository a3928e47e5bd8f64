package engine

import (
	"testing"

	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
)

// TestFirstNamed: a violation's event goes to the unit its detail names first, in any list
// order, even where one unit's name is inside another's.
func TestFirstNamed(t *testing.T) {
	units := func(names ...string) []fleetv1.Unit {
		var l []fleetv1.Unit
		for _, n := range names {
			l = append(l, fleetv1.Unit{Spec: fleetv1.UnitSpec{Name: n}})
		}
		return l
	}
	tests := []struct {
		detail string
		list   []fleetv1.Unit
		want   string
	}{
		{"invariant unitConflicts: a.service and b.service, which conflict, are both scheduled to machine m1", units("b.service", "a.service"), "a.service"},
		{"invariant unitConflicts: aa.service and a.service, which conflict, are both scheduled to machine m1", units("a.service", "aa.service"), "aa.service"},
		{"invariant unitConflicts: a.service and aa.service, which conflict, are both scheduled to machine m1", units("aa.service", "a.service"), "a.service"},
		{"invariant unitMachineOf: nothing known", units("a.service"), ""},
	}
	for _, tc := range tests {
		got := ""
		if u := firstNamed(tc.list, tc.detail); u != nil {
			got = u.Spec.Name
		}
		if got != tc.want {
			t.Errorf("firstNamed(%q) = %q, want %q", tc.detail, got, tc.want)
		}
	}
}
