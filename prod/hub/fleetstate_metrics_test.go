package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// gauges gathers the metric families named in names from the registry the hub serves, as
// "name{label=value,...} value" lines.
func gauges(t *testing.T, names ...string) map[string][]string {
	t.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, mf := range mfs {
		for _, n := range names {
			if mf.GetName() != n {
				continue
			}
			for _, m := range mf.GetMetric() {
				var labels []string
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				out[n] = append(out[n], fmt.Sprintf("{%s} %g", strings.Join(labels, ","), m.GetGauge().GetValue()))
			}
		}
	}
	return out
}

// TestFleetStateGauges: with one joined, healthy member and one placement Available on it
// (a real API server and the hub's controllers), the hub's registry reports the member by
// its conditions, the placement by condition, and KubeFleet's per-placement status gauge.
func TestFleetStateGauges(t *testing.T) {
	env := testenv.StartEnv(t)
	testenv.RunHub(t, env.Config, testr.New(t))
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	if err := admin.Create(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "east"},
		Spec: clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: 1, Identity: rbacv1.Subject{Kind: "User", Name: "east-agent", APIGroup: rbacv1.GroupName}}}); err != nil {
		t.Fatal(err)
	}
	agent := &testenv.StandInAgent{Client: testenv.Client(t, env.User(t, "east-agent")), Member: "east"}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	go agent.Run(actx)
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: placementv1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: []placementv1beta1.ClusterResourceSelector{{Version: "v1", Kind: "Namespace", Name: "app"}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: "PickAll"}}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the gauges", func() error {
		g := gauges(t, "fleetsim_hub_member_clusters", "fleetsim_hub_placements")
		if diff := cmp.Diff([]string{"{healthy=True,joined=True} 1"}, g["fleetsim_hub_member_clusters"]); diff != "" {
			return fmt.Errorf("members (-want +got):\n%s", diff)
		}
		want := "{condition=ClusterResourcePlacementAvailable,status=True} 1"
		for _, l := range g["fleetsim_hub_placements"] {
			if l == want {
				return nil
			}
		}
		return fmt.Errorf("placements %v lack %s", g["fleetsim_hub_placements"], want)
	})
	var found bool
	for _, l := range gauges(t, "fleet_workload_placement_status_last_timestamp_seconds")["fleet_workload_placement_status_last_timestamp_seconds"] {
		if strings.Contains(l, "conditionType=ClusterResourcePlacementAvailable,") && strings.Contains(l, "name=app,") &&
			strings.Contains(l, "reason=ResourceAvailable,status=True}") && !strings.HasSuffix(l, " 0") {
			found = true
		}
	}
	if !found {
		t.Errorf("no fleet_workload_placement_status_last_timestamp_seconds for app's Available condition: %v",
			gauges(t, "fleet_workload_placement_status_last_timestamp_seconds"))
	}
}
