package hub_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestManyPlacementsDecidedConcurrently: twelve placements on the same four members are
// created at once and updated at once, so the hub's workers decide about them in parallel
// (consistency.go). At every read during the update, every placement keeps the rollout
// invariants the simulator checks: at most one binding per member, at most maxUnavailable
// bindings not ready; in the end every placement is available with every binding on its
// latest resource snapshot and one Work per member. Every other placement requires
// zone=a, so the placements decided side by side pick different members: decisions that
// shared a scheduler's scratch memory once swapped their picks and bindings.
func TestManyPlacementsDecidedConcurrently(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	members := []string{"east", "north", "south", "west"}
	zoneA := []string{"east", "north"}
	for _, m := range members {
		zone := "b"
		if slices.Contains(zoneA, m) {
			zone = "a"
		}
		f.join(m, map[string]string{"zone": zone})
	}
	// wanted is the members each placement must be on.
	wanted := func(i int) []string {
		if i%2 == 1 {
			return zoneA
		}
		return members
	}
	const n = 12
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("app-%02d", i)
		f.create(namespaceWithConfigMap(names[i])...)
	}
	for i, name := range names {
		var policy *placementv1beta1.PlacementPolicy
		if i%2 == 1 {
			policy = &placementv1beta1.PlacementPolicy{PlacementType: "PickAll", Affinity: &placementv1beta1.Affinity{
				ClusterAffinity: &placementv1beta1.ClusterAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &placementv1beta1.ClusterSelector{
					ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{labelTerm("zone", "a")},
				}},
			}}
		}
		f.create(&placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: placementv1beta1.ClusterResourcePlacementSpec{
				Policy:            policy,
				ResourceSelectors: namespaceSelector(name),
				Strategy: placementv1beta1.RolloutStrategy{Type: "RollingUpdate", RollingUpdate: &placementv1beta1.RollingUpdateConfig{
					MaxUnavailable: ptr.To(intstr.FromInt32(1)), UnavailablePeriodSeconds: ptr.To(1),
				}},
			},
		})
	}
	bound := func(i int) []string {
		var out []string
		for _, m := range wanted(i) {
			out = append(out, m+"=Bound")
		}
		return out
	}
	first := map[string]string{}
	for i, name := range names {
		f.waitPlacement(name, bound(i), placedConditions)
		s, err := f.latestResourceSnapshot(name)
		if err != nil {
			t.Fatal(err)
		}
		first[name] = s
	}
	for _, name := range names {
		f.setColor(name, "settings", "green")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		done := 0
		for i, name := range names {
			if err := f.checkRolloutInvariants(name, wanted(i)); err != nil {
				t.Fatal(err)
			}
			v, err := f.budgetView(name, first[name])
			if err != nil {
				t.Fatal(err)
			}
			if len(v.notReady) > 1 {
				t.Fatalf("placement %s: %d bindings not ready (%s), want at most maxUnavailable=1", name, len(v.notReady), v)
			}
			if len(v.updated) == len(wanted(i)) && len(v.notReady) == 0 {
				done++
			}
		}
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d placements rolled out after 2m", done, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i, name := range names {
		f.waitPlacement(name, bound(i), placedConditions)
		latest, err := f.latestResourceSnapshot(name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := f.budgetView(name, first[name])
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range wanted(i) {
			if v.snapshots[m] != latest {
				t.Errorf("placement %s: binding on %s carries %s, want %s", name, m, v.snapshots[m], latest)
			}
		}
		testenv.Eventually(t, "one Work per member for "+name, func() error {
			ws, err := f.workMembers(name)
			if err != nil {
				return err
			}
			if fmt.Sprint(ws) != fmt.Sprint(wanted(i)) {
				return fmt.Errorf("Works on %v, want one on each of %v", ws, wanted(i))
			}
			return nil
		})
	}
}

// checkRolloutInvariants fails when a placement has two bindings for one member, a binding
// for a member that is not in the fleet, or two Works for one member.
func (f *fleetHub) checkRolloutInvariants(crp string, members []string) error {
	ctx := context.Background()
	var bl placementv1beta1.ClusterResourceBindingList
	if err := f.admin.List(ctx, &bl, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return err
	}
	known := map[string]bool{}
	for _, m := range members {
		known[m] = true
	}
	seen := map[string]string{}
	for _, b := range bl.Items {
		if !known[b.Spec.TargetCluster] {
			return fmt.Errorf("placement %s: binding %s targets %q, not a member", crp, b.Name, b.Spec.TargetCluster)
		}
		if other, dup := seen[b.Spec.TargetCluster]; dup {
			return fmt.Errorf("placement %s: bindings %s and %s both target %s", crp, other, b.Name, b.Spec.TargetCluster)
		}
		seen[b.Spec.TargetCluster] = b.Name
	}
	var wl placementv1beta1.WorkList
	if err := f.admin.List(ctx, &wl, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return err
	}
	perNS := map[string]int{}
	for _, w := range wl.Items {
		if perNS[w.Namespace]++; perNS[w.Namespace] > 1 {
			return fmt.Errorf("placement %s: two Works in %s", crp, w.Namespace)
		}
	}
	return nil
}
