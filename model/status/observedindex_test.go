package status_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/status"
)

// TestObservedResourceIndex: each placementStatuses entry names the resource snapshot index
// its conditions describe. Under RollingUpdate that is the latest index once the cluster has
// a binding; under External it is the index of the cluster's own binding, which a staged
// update run chose.
func TestObservedResourceIndex(t *testing.T) {
	runStarted := condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, "started by a run")
	cases := []struct {
		name     string
		strategy placement.RolloutStrategyType
		latest   int
		binding  *placement.Binding // of crp on member1; nil for none
		want     string
	}{
		{name: "rolling update, binding on the latest", latest: 3, binding: bound("crp", "member1", "crp-3-snapshot", 1, runStarted), want: "3"},
		{name: "rolling update, binding on an older index", latest: 3, binding: bound("crp", "member1", "crp-2-snapshot", 1, runStarted), want: "3"},
		{name: "rolling update, no binding yet", latest: 3, want: ""},
		{name: "rolling update, no resource snapshot yet", latest: -1, binding: scheduledOnly("crp", "member1"), want: ""},
		{name: "External, binding on an older index", strategy: placement.ExternalStrategy, latest: 3, binding: bound("crp", "member1", "crp-2-snapshot", 1, runStarted), want: "2"},
		{name: "External, binding on the latest", strategy: placement.ExternalStrategy, latest: 3, binding: bound("crp", "member1", "crp-3-snapshot", 1, runStarted), want: "3"},
		{name: "External, binding without resources", strategy: placement.ExternalStrategy, latest: 3, binding: scheduledOnly("crp", "member1"), want: ""},
		{name: "External, binding on a snapshot no longer kept", strategy: placement.ExternalStrategy, latest: 3, binding: bound("crp", "member1", "crp-0-snapshot", 1, runStarted), want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := status.Input{
				Generation: 1, RolloutStrategy: tc.strategy, PlacementType: placement.PickAll,
				Scheduling:    status.Scheduling{Condition: fulfilled(1), ObservedPlacementGeneration: 1, Decisions: []placement.ClusterDecision{pick("member1")}},
				ResourceIndex: tc.latest, ResourceSnapshots: refs("crp", 2, 3), Now: t0,
			}
			if tc.binding != nil {
				in.Bindings = []*placement.Binding{tc.binding}
			}
			if tc.latest >= 0 {
				in.LatestResourceSnapshot = refName("crp", tc.latest)
			}
			got := status.Placement(in)
			if len(got.PlacementStatuses) != 1 {
				t.Fatalf("Placement() has %d placementStatuses, want 1", len(got.PlacementStatuses))
			}
			if diff := cmp.Diff(tc.want, got.PlacementStatuses[0].ObservedResourceIndex); diff != "" {
				t.Errorf("observedResourceIndex (-want +got):\n%s", diff)
			}
		})
	}
}
