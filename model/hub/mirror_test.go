package hub

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/status"
)

func TestMirrorStatus(t *testing.T) {
	now := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	nsObj := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(name)
		return u
	}
	available := condition.Timed{Condition: condition.True(status.TypePlacementAvailable, "ResourceAvailable", "ok"), ObservedGeneration: 1}
	for _, tc := range []struct {
		name       string
		scope      placement.StatusReportingScope
		selected   []*unstructured.Unstructured
		prevSynced bool
		wantSynced metav1.ConditionStatus // "" means no StatusSynced condition
		wantMirror bool
	}{
		{"cluster scope only", placement.ClusterScopeOnly, []*unstructured.Unstructured{nsObj("team")}, false, "", false},
		{"cluster scope only drops a stale condition", "", []*unstructured.Unstructured{nsObj("team")}, true, "", false},
		{"namespace exists", placement.NamespaceAccessible, []*unstructured.Unstructured{nsObj("team")}, false, metav1.ConditionTrue, true},
		{"namespace missing", placement.NamespaceAccessible, nil, false, metav1.ConditionFalse, false},
	} {
		p := &Placement{Generation: 1, Selected: tc.selected}
		p.CRP.Name = "crp"
		p.CRP.Spec = placement.PlacementSpec{StatusReportingScope: tc.scope,
			ResourceSelectors: []placement.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "team"}}}
		p.Mirror = &StatusMirror{Namespace: "stale"}
		if tc.prevSynced {
			p.Status.Conditions = []condition.Timed{{Condition: condition.True(status.TypePlacementStatusSynced, status.ReasonStatusSyncSucceeded, ""), ObservedGeneration: 1}}
		}
		next := status.Status{ObservedResourceIndex: "0", Conditions: []condition.Timed{available}}
		MirrorStatus(p, &next, now)
		synced, ok := condition.Find(next.Conditions, status.TypePlacementStatusSynced)
		switch {
		case tc.wantSynced == "" && ok:
			t.Errorf("%s: StatusSynced %v, want none", tc.name, synced)
		case tc.wantSynced != "" && (!ok || synced.Status != tc.wantSynced):
			t.Errorf("%s: StatusSynced %v (present %t), want %s", tc.name, synced, ok, tc.wantSynced)
		}
		if !tc.wantMirror {
			if p.Mirror != nil {
				t.Errorf("%s: mirror %+v, want none", tc.name, p.Mirror)
			}
			continue
		}
		want := &StatusMirror{Namespace: "team", Status: status.Status{ObservedResourceIndex: "0", Conditions: []condition.Timed{available}}}
		if diff := cmp.Diff(want, p.Mirror); diff != "" {
			t.Errorf("%s: mirror (-want +got):\n%s", tc.name, diff)
		}
	}
}
