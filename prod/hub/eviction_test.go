package hub_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// evictionConditions renders an eviction's conditions as "Type=Status/Reason: Message".
func (f *fleetHub) evictionConditions(name string) ([]string, error) {
	e := &placementv1beta1.ClusterResourcePlacementEviction{}
	if err := f.admin.Get(context.Background(), client.ObjectKey{Name: name}, e); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range e.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return out, nil
}

// evict creates an eviction of the placement from cluster and waits until its conditions
// are want.
func (f *fleetHub) evict(name, crp, cluster string, want []string) {
	f.t.Helper()
	f.create(&placementv1beta1.ClusterResourcePlacementEviction{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       placementv1beta1.PlacementEvictionSpec{PlacementName: crp, ClusterName: cluster},
	})
	testenv.Eventually(f.t, "eviction "+name, func() error {
		got, err := f.evictionConditions(name)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("conditions (-want +got):\n%s", diff)
		}
		return nil
	})
}

// bindingUIDs maps each cluster to the UID of the placement's binding on it.
func (f *fleetHub) bindingUIDs(crp string) map[string]types.UID {
	f.t.Helper()
	var list placementv1beta1.ClusterResourceBindingList
	if err := f.admin.List(context.Background(), &list, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		f.t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, b := range list.Items {
		out[b.Spec.TargetCluster] = b.UID
	}
	return out
}

// TestEvictionHonoursDisruptionBudget: on a PickAll placement available on three members,
// an eviction that the ClusterResourcePlacementDisruptionBudget (minAvailable 3) does not
// allow is valid but not executed and leaves the binding alone; with the budget lowered to
// minAvailable 2, a new eviction executes and deletes the binding and its Work
// (EVICT-EXECUTION, PDB-ACCOUNTING, the eviction TSG "blocked by specified CRPDB"). East is
// tainted first, as the eviction how-to does, so that PickAll does not place on it again.
func TestEvictionHonoursDisruptionBudget(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	for _, m := range []string{"east", "north", "west"} {
		f.join(m, nil)
	}
	f.create(namespaceWithConfigMap("app")...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("app")},
	})
	all := []string{"east=Bound", "north=Bound", "west=Bound"}
	f.waitPlacement("app", all, placedConditions)
	f.waitWorks("app", []string{"east", "north", "west"})
	before := f.bindingUIDs("app")

	// The budget is named after the placement it protects.
	f.create(&placementv1beta1.ClusterResourcePlacementDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec:       placementv1beta1.PlacementDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(3))},
	})
	valid := "Valid=True/" + eviction.ReasonValid + ": " + eviction.MessageValid
	blocked := []string{valid, "Executed=False/" + eviction.ReasonNotExecuted + ": " + fmt.Sprintf(eviction.FormatBlockedByBudget, 3, 3)}
	f.evict("evict-east", "app", "east", blocked)
	if got, err := f.bindings("app"); err != nil || !cmp.Equal(got, all) {
		t.Fatalf("bindings after the blocked eviction: got %v (err %v), want %v", got, err, all)
	}
	if diff := cmp.Diff(before, f.bindingUIDs("app")); diff != "" {
		t.Fatalf("bindings replaced by the blocked eviction (-before +after):\n%s", diff)
	}

	// Taint east, then lower the budget and evict again.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := f.admin.Get(context.Background(), client.ObjectKey{Name: "east"}, mc); err != nil {
			return err
		}
		mc.Spec.Taints = []clusterv1beta1.Taint{{Key: "evict", Value: "true", Effect: "NoSchedule"}}
		return f.admin.Update(context.Background(), mc)
	})
	if err != nil {
		t.Fatalf("taint east: %v", err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pdb := &placementv1beta1.ClusterResourcePlacementDisruptionBudget{}
		if err := f.admin.Get(context.Background(), client.ObjectKey{Name: "app"}, pdb); err != nil {
			return err
		}
		pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(2))
		return f.admin.Update(context.Background(), pdb)
	})
	if err != nil {
		t.Fatalf("lower the budget: %v", err)
	}
	f.evict("evict-east-2", "app", "east", []string{valid,
		"Executed=True/" + eviction.ReasonExecuted + ": " + fmt.Sprintf(eviction.FormatAllowedByBudget, 3, 3)})
	f.waitPlacement("app", []string{"north=Bound", "west=Bound"}, placedConditions)
	f.waitWorks("app", []string{"north", "west"})
	after := f.bindingUIDs("app")
	for _, m := range []string{"north", "west"} {
		if after[m] != before[m] {
			t.Errorf("binding on %s: got UID %s, want %s (untouched by the eviction of east)", m, after[m], before[m])
		}
	}
	// An eviction is decided once: the blocked one stays as it was.
	if got, err := f.evictionConditions("evict-east"); err != nil || !cmp.Equal(got, blocked) {
		t.Errorf("conditions of evict-east after evict-east-2: got %v (err %v), want %v", got, err, blocked)
	}
}
