package hub_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// rolloutView is what a rollout has done so far, read from the API server.
type rolloutView struct {
	bindings          []string // cluster=state@resourceSnapshot
	onSnapshot        map[string]int
	works             int
	resourceSnapshots []string
	policySnapshots   []string
}

func (f *fleetHub) rollout(crp string) (rolloutView, error) {
	ctx := context.Background()
	v := rolloutView{onSnapshot: map[string]int{}}
	var bs placementv1beta1.ClusterResourceBindingList
	if err := f.admin.List(ctx, &bs, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return v, err
	}
	for _, b := range bs.Items {
		v.bindings = append(v.bindings, fmt.Sprintf("%s=%s@%s", b.Spec.TargetCluster, b.Spec.State, b.Spec.ResourceSnapshotName))
		v.onSnapshot[b.Spec.ResourceSnapshotName]++
	}
	sort.Strings(v.bindings)
	var ws placementv1beta1.WorkList
	if err := f.admin.List(ctx, &ws, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return v, err
	}
	v.works = len(ws.Items)
	var rs placementv1beta1.ClusterResourceSnapshotList
	if err := f.admin.List(ctx, &rs, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return v, err
	}
	for _, s := range rs.Items {
		v.resourceSnapshots = append(v.resourceSnapshots, s.Name)
	}
	sort.Strings(v.resourceSnapshots)
	var ps placementv1beta1.ClusterSchedulingPolicySnapshotList
	if err := f.admin.List(ctx, &ps, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return v, err
	}
	for _, s := range ps.Items {
		v.policySnapshots = append(v.policySnapshots, s.Name)
	}
	sort.Strings(v.policySnapshots)
	return v, nil
}

// TestHubRestartMidRollout stops the hub while a rolling update waits on an unavailable
// member and starts a new one: the new hub carries on from what is stored. It does not
// update more clusters than the budget allows, makes no second snapshot, binding or Work,
// and finishes the rollout once the new version becomes available.
func TestHubRestartMidRollout(t *testing.T) {
	env := testenv.StartEnv(t)
	f := startFleet(t, env)
	members := []string{"east", "north", "west"}
	for _, m := range members {
		f.join(m, map[string]string{"env": "prod"})
	}
	f.create(namespaceWithConfigMap("shop")...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: placementv1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: namespaceSelector("shop"),
			Strategy: placementv1beta1.RolloutStrategy{Type: placement.RollingUpdateStrategy, RollingUpdate: &placementv1beta1.RollingUpdateConfig{
				MaxUnavailable: ptr.To(intstr.FromInt32(1)), UnavailablePeriodSeconds: ptr.To(1),
			}},
		},
	})
	f.waitPlacement("shop", []string{"east=Bound", "north=Bound", "west=Bound"}, placedConditions)

	// The new version never becomes available: the rollout updates one cluster and waits.
	green := func(o *unstructured.Unstructured) testenv.Outcome {
		if c, _, _ := unstructured.NestedString(o.Object, "data", "color"); c == "green" {
			return testenv.Unavailable
		}
		return testenv.Available
	}
	for _, a := range f.agents {
		a.SetBehavior(green)
	}
	cm := &corev1.ConfigMap{}
	if err := f.admin.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "green"
	if err := f.admin.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	const first, second = "shop-0-snapshot", "shop-1-snapshot"
	testenv.Eventually(t, "one cluster updated to the new snapshot", func() error {
		v, err := f.rollout("shop")
		if err != nil {
			return err
		}
		if v.onSnapshot[second] != 1 || v.onSnapshot[first] != 2 {
			return fmt.Errorf("bindings %v", v.bindings)
		}
		return nil
	})

	f.stop()
	before, err := f.rollout("shop")
	if err != nil {
		t.Fatal(err)
	}
	f.stop = runManager(t, env.Config)

	// The new hub reconciles everything on start (HubStarted) and must hold the line:
	// watch the state for three seconds, it must not move.
	for range 20 {
		time.Sleep(150 * time.Millisecond)
		v, err := f.rollout("shop")
		if err != nil {
			t.Fatal(err)
		}
		if v.onSnapshot[second] > 1 {
			t.Fatalf("after the restart %d clusters run the unavailable version, the budget allows 1: %v", v.onSnapshot[second], v.bindings)
		}
		if len(v.bindings) != 3 || v.works != 3 || !slices.Equal(v.resourceSnapshots, before.resourceSnapshots) || !slices.Equal(v.policySnapshots, before.policySnapshots) {
			t.Fatalf("after the restart: bindings %v, %d Works, resource snapshots %v, policy snapshots %v; before: %v, %d, %v, %v",
				v.bindings, v.works, v.resourceSnapshots, v.policySnapshots, before.bindings, before.works, before.resourceSnapshots, before.policySnapshots)
		}
	}

	for _, a := range f.agents {
		a.SetBehavior(nil)
	}
	f.waitPlacement("shop", []string{"east=Bound", "north=Bound", "west=Bound"}, placedConditions)
	testenv.Eventually(t, "every cluster on the new snapshot, nothing duplicated", func() error {
		v, err := f.rollout("shop")
		if err != nil {
			return err
		}
		want := rolloutView{
			bindings:          []string{"east=Bound@" + second, "north=Bound@" + second, "west=Bound@" + second},
			onSnapshot:        map[string]int{second: 3},
			works:             3,
			resourceSnapshots: before.resourceSnapshots,
			policySnapshots:   before.policySnapshots,
		}
		if fmt.Sprint(v) != fmt.Sprint(want) {
			return fmt.Errorf("rollout %+v, want %+v", v, want)
		}
		return nil
	})
}
