package override_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
)

func TestClusterCondition(t *testing.T) {
	cases := []struct {
		name string
		cro  []string
		ro   []placement.NamespacedName
		err  error
		want condition.Condition
	}{
		{name: "no override applies", want: condition.True("Overridden", "NoOverrideSpecified", "No override rules are configured for the selected resources")},
		{name: "a CRO applied", cro: []string{"example-cro-0"},
			want: condition.True("Overridden", "OverriddenSucceeded", "Successfully applied the override rules on the resources")},
		{name: "an RO applied", ro: []placement.NamespacedName{{Namespace: "test-app", Name: "ro-1-0"}},
			want: condition.True("Overridden", "OverriddenSucceeded", "Successfully applied the override rules on the resources")},
		{name: "failure", cro: []string{"cro-1-0"}, err: errors.New("boom"),
			want: condition.False("Overridden", "OverriddenFailed", "Failed to apply the override rules on the resources: boom")},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, override.ClusterCondition(c.cro, c.ro, c.err)); diff != "" {
			t.Errorf("ClusterCondition(%s) mismatch (-want +got):\n%s", c.name, diff)
		}
	}
	want := condition.Condition{Type: "Overridden", Status: metav1.ConditionUnknown, Reason: "OverriddenPending",
		Message: "In the process of overriding the selected resources if there is any override defined"}
	if diff := cmp.Diff(want, override.ClusterPendingCondition()); diff != "" {
		t.Errorf("ClusterPendingCondition() mismatch (-want +got):\n%s", diff)
	}
}

func TestPlacementCondition(t *testing.T) {
	none := override.ClusterCondition(nil, nil, nil)
	ok := override.ClusterCondition([]string{"cro-0"}, nil, nil)
	failed := override.ClusterCondition([]string{"cro-0"}, nil, errors.New("x"))
	pending := override.ClusterPendingCondition()
	const typ = "ClusterResourcePlacementOverridden"
	cases := []struct {
		name     string
		clusters []condition.Condition
		want     condition.Condition
	}{
		{name: "no overrides anywhere", clusters: []condition.Condition{none, none},
			want: condition.True(typ, "NoOverrideSpecified", "No override rules are configured for the selected resources")},
		{name: "no clusters", want: condition.True(typ, "NoOverrideSpecified", "No override rules are configured for the selected resources")},
		{name: "3 clusters, one without overrides [Override › Sample output]", clusters: []condition.Condition{ok, none, ok},
			want: condition.True(typ, "OverriddenSucceeded", "The selected resources are successfully overridden in the 3 clusters")},
		{name: "TSG: 1 of 1 failed [CRP Override Failure TSG › ClusterResourcePlacement Status]", clusters: []condition.Condition{failed},
			want: condition.False(typ, "OverriddenFailed", "Failed to override resources in 1 cluster(s)")},
		{name: "2 of 3 failed", clusters: []condition.Condition{failed, ok, failed},
			want: condition.False(typ, "OverriddenFailed", "Failed to override resources in 2 cluster(s)")},
		{name: "pending beats failed", clusters: []condition.Condition{failed, pending, {}},
			want: condition.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: "OverriddenPending",
				Message: "There are still 2 cluster(s) in the process of overriding the selected resources if there is any override defined"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, override.PlacementCondition(c.clusters)); diff != "" {
			t.Errorf("PlacementCondition(%s) mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}
