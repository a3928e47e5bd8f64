package snapshot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fleetsim/fleetsim/apis"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/snapshot"
	"github.com/fleetsim/fleetsim/scenarios"
)

func ptr[T any](v T) *T { return &v }

// TestScenarioFromHubObjects: what a hub holds becomes members, manifests and initial
// bindings; what a scenario cannot hold is listed, not guessed.
func TestScenarioFromHubObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cond := func(typ string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, LastTransitionTime: metav1.Now()}
	}
	objs := []client.Object{
		&clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "alpha", Labels: map[string]string{"region": "east"}},
			Spec: clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: 30, Taints: []clusterv1beta1.Taint{{Key: "gpu", Value: "yes", Effect: "NoSchedule"}}},
			Status: clusterv1beta1.MemberClusterStatus{
				Conditions: []metav1.Condition{cond("Joined", metav1.ConditionTrue, "Joined"), cond("Healthy", metav1.ConditionTrue, "Healthy")},
				Properties: map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{"kubernetes-fleet.io/node-count": {Value: "3"}, "example.com/zone": {Value: "not a quantity"}},
			}},
		&clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "bravo"},
			Status: clusterv1beta1.MemberClusterStatus{Conditions: []metav1.Condition{cond("Joined", metav1.ConditionTrue, "Joined"), cond("Healthy", metav1.ConditionFalse, "HeartbeatTimeout")}}},
		&v1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: v1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: []v1beta1.ClusterResourceSelector{{Group: "", Version: "v1", Kind: "Namespace", Name: "app"}},
			Policy:            &v1beta1.PlacementPolicy{PlacementType: "PickN", NumberOfClusters: ptr(int32(1))},
		}},
		&v1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-alpha-1", Labels: map[string]string{v1beta1.CRPTrackingLabel: "web"}},
			Spec: v1beta1.ResourceBindingSpec{State: "Bound", TargetCluster: "alpha"}},
		&v1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-bravo-1", Labels: map[string]string{v1beta1.CRPTrackingLabel: "web"}},
			Spec: v1beta1.ResourceBindingSpec{State: "Unscheduled", TargetCluster: "bravo"}},
		&v1beta1.ClusterResourceSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "web-4-snapshot",
			Labels: map[string]string{v1beta1.CRPTrackingLabel: "web", v1beta1.ResourceIndexLabel: "4"}},
			Spec: v1beta1.ResourceSnapshotSpec{SelectedResources: []v1beta1.ResourceContent{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}`)}}}}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	s, err := snapshot.Take(context.Background(), c, "captured")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse("captured.yaml", s.Scenario)
	if err != nil {
		t.Fatalf("%v\n%s", err, s.Scenario)
	}
	var members []string
	for _, g := range sc.Members {
		members = append(members, g.Names...)
	}
	if d := cmp.Diff([]string{"alpha", "bravo"}, members); d != "" {
		t.Errorf("members (-want +got):\n%s", d)
	}
	alpha := sc.Members[0]
	if d := cmp.Diff(map[string]string{"kubernetes-fleet.io/node-count": "3"}, alpha.Properties); d != "" || len(alpha.Taints) != 1 || alpha.Labels["region"] != "east" || alpha.HeartbeatPeriod.Seconds() != 30 {
		t.Errorf("alpha: %+v (properties diff %s)", alpha, d)
	}
	if sc.Initial == nil || len(sc.Initial.Bindings) != 1 {
		t.Fatalf("initial: %+v", sc.Initial)
	}
	if d := cmp.Diff(scenarios.InitialBindings{Line: sc.Initial.Bindings[0].Line, Placement: "web", Clusters: []string{"alpha"}}, sc.Initial.Bindings[0]); d != "" {
		t.Errorf("initial bindings (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]int{"MemberCluster": 2, "ClusterResourcePlacement": 1, "selected resource": 1}, s.Captured); d != "" {
		t.Errorf("captured (-want +got):\n%s", d)
	}
	missed := strings.Join(s.Missed, "\n")
	for _, want := range []string{
		`member alpha: property example.com/zone="not a quantity" is not a quantity`,
		"member bravo: Healthy is False (HeartbeatTimeout) on the hub; the simulator starts it joined and healthy",
		"binding web-bravo-1 (placement web on bravo) is Unscheduled",
		"policy and resource snapshot history",
	} {
		if !strings.Contains(missed, want) {
			t.Errorf("missed lacks %q:\n%s", want, missed)
		}
	}
	if strings.Contains(missed, "refuses") || strings.Contains(missed, "does not reproduce") {
		t.Errorf("the simulator does not take the scenario as written:\n%s", missed)
	}
}
