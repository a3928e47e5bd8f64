package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis/convert"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// budgetView is a placement's bindings as one List saw them: the clusters whose binding
// carries a resource snapshot other than the first one, and those whose binding is not
// ready (Available is not True at the binding's generation).
type budgetView struct {
	snapshots map[string]string // cluster → resource snapshot name
	updated   []string
	notReady  []string
	// unavailable are the clusters whose Available condition is False at the binding's
	// generation: the agent reported their resources unavailable.
	unavailable []string
}

func (v budgetView) String() string {
	return fmt.Sprintf("updated %v, not ready %v, reported unavailable %v", v.updated, v.notReady, v.unavailable)
}

// budgetView reads the placement's bindings; first names the resource snapshot they all
// carried before the update.
func (f *fleetHub) budgetView(crp, first string) (budgetView, error) {
	var list placementv1beta1.ClusterResourceBindingList
	if err := f.admin.List(context.Background(), &list, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return budgetView{}, err
	}
	v := budgetView{snapshots: map[string]string{}}
	for i := range list.Items {
		b := convert.BindingToModel(&list.Items[i])
		v.snapshots[b.TargetCluster] = b.ResourceSnapshotName
		if b.ResourceSnapshotName != first {
			v.updated = append(v.updated, b.TargetCluster)
		}
		if !condition.IsTrue(b.Conditions, condition.TypeAvailable, b.Generation) {
			v.notReady = append(v.notReady, b.TargetCluster)
		}
		if c, ok := condition.Find(b.Conditions, condition.TypeAvailable); ok && c.Status == metav1.ConditionFalse && c.ObservedGeneration == b.Generation {
			v.unavailable = append(v.unavailable, b.TargetCluster)
		}
	}
	for _, l := range [][]string{v.updated, v.notReady, v.unavailable} {
		sort.Strings(l)
	}
	return v, nil
}

// watchBudget reads the placement's bindings every 50ms for at most d, failing the test as
// soon as a view breaks the budget: more than maxNotReady bindings not ready, or (when
// maxUpdated >= 0) more than maxUpdated bindings updated. It returns the first view for which
// done says true, or, if done is nil, the last view after d.
func (f *fleetHub) watchBudget(crp, first, phase string, d time.Duration, maxNotReady, maxUpdated int, done func(budgetView) bool) budgetView {
	f.t.Helper()
	var v budgetView
	var err error
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if v, err = f.budgetView(crp, first); err != nil {
			f.t.Fatalf("%s: %v", phase, err)
		}
		if len(v.notReady) > maxNotReady {
			f.t.Fatalf("%s: got %d bindings not ready (%s), want at most maxUnavailable=%d", phase, len(v.notReady), v, maxNotReady)
		}
		if maxUpdated >= 0 && len(v.updated) > maxUpdated {
			f.t.Fatalf("%s: got %d bindings on a new resource snapshot (%s), want at most %d while the updated cluster is unavailable", phase, len(v.updated), v, maxUpdated)
		}
		if done != nil && done(v) {
			return v
		}
	}
	if done != nil {
		f.t.Fatalf("%s: not done after %v: %s", phase, d, v)
	}
	return v
}

// latestResourceSnapshot names the placement's latest resource snapshot.
func (f *fleetHub) latestResourceSnapshot(crp string) (string, error) {
	var list placementv1beta1.ClusterResourceSnapshotList
	if err := f.admin.List(context.Background(), &list, client.MatchingLabels{
		placementv1beta1.CRPTrackingLabel: crp, placementv1beta1.IsLatestSnapshotLabel: "true",
	}); err != nil {
		return "", err
	}
	if len(list.Items) != 1 {
		return "", fmt.Errorf("%d latest resource snapshots of %s, want 1", len(list.Items), crp)
	}
	return list.Items[0].Name, nil
}

// TestRollingUpdateKeepsToMaxUnavailable: a PickAll placement on four members with
// RollingUpdate maxUnavailable 1 updates one cluster at a time (ROLL-MAXUNAVAILABLE). A new
// version that never becomes available stops the rollout after the first cluster, with the
// other three held back by the strategy (TSG-ROLLOUT-BADIMAGE); once the new version becomes
// available the rollout goes on, never with more than one cluster unavailable, until every
// cluster runs the latest resource snapshot.
func TestRollingUpdateKeepsToMaxUnavailable(t *testing.T) {
	start := time.Now()
	f := startFleet(t, testenv.StartEnv(t))
	members := []string{"east", "north", "south", "west"}
	for _, m := range members {
		f.join(m, nil)
	}
	f.create(namespaceWithConfigMap("app")...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: placementv1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: namespaceSelector("app"),
			Strategy: placementv1beta1.RolloutStrategy{Type: "RollingUpdate", RollingUpdate: &placementv1beta1.RollingUpdateConfig{
				MaxUnavailable: ptr.To(intstr.FromInt32(1)), UnavailablePeriodSeconds: ptr.To(1),
			}},
		},
	})
	f.waitPlacement("app", []string{"east=Bound", "north=Bound", "south=Bound", "west=Bound"}, placedConditions)
	first, err := f.latestResourceSnapshot("app")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := f.budgetView("app", first); err != nil || len(v.updated) != 0 || len(v.notReady) != 0 {
		t.Fatalf("before the update: got %v (err %v), want every binding on %s and ready", v, err, first)
	}

	// The new version (color green) never becomes available on any member.
	green := func(o *unstructured.Unstructured) testenv.Outcome {
		if c, _, _ := unstructured.NestedString(o.Object, "data", "color"); o.GetKind() == "ConfigMap" && c == "green" {
			return testenv.Unavailable
		}
		return testenv.Available
	}
	for _, m := range members {
		f.agents[m].SetBehavior(green)
	}
	t.Logf("placed on every member after %v; updating the ConfigMap", time.Since(start).Round(time.Millisecond))
	f.setColor("app", "settings", "green")

	// The first cluster is updated and reported unavailable; the others are held back.
	stuck := f.watchBudget("app", first, "rolling out an unavailable version", 20*time.Second, 1, 1, func(v budgetView) bool {
		return len(v.updated) == 1 && slices.Equal(v.unavailable, v.updated)
	})
	latest, err := f.latestResourceSnapshot("app")
	if err != nil {
		t.Fatal(err)
	}
	if latest == first {
		t.Fatalf("latest resource snapshot is still %s after the ConfigMap changed, want a new one", first)
	}
	bad := stuck.updated[0]
	if got := stuck.snapshots[bad]; got != latest {
		t.Fatalf("updated cluster %s carries %s, want the latest snapshot %s", bad, got, latest)
	}
	t.Logf("%s updated and reported unavailable after %v", bad, time.Since(start).Round(time.Millisecond))
	// It stays so, for a resync period (5s) and several unavailable periods (1s).
	f.watchBudget("app", first, "holding on an unavailable cluster", 5*time.Second, 1, 1, nil)
	var statuses []string
	for _, m := range members {
		if m == bad {
			statuses = append(statuses, m+": Scheduled=True/Scheduled RolloutStarted=True/RolloutStarted Overridden=True/NoOverrideSpecified"+
				" WorkSynchronized=True/AllWorkSynced Applied=True/AllWorkHaveBeenApplied Available=False/NotAllWorkAreAvailable")
		} else {
			statuses = append(statuses, m+": Scheduled=True/Scheduled RolloutStarted=False/RolloutNotStartedYet")
		}
	}
	f.waitPlacement("app", []string{"east=Bound", "north=Bound", "south=Bound", "west=Bound"}, []string{
		"ClusterResourcePlacementRolloutStarted=False/RolloutNotStartedYet",
		"ClusterResourcePlacementScheduled=True/SchedulingPolicyFulfilled",
	})
	f.waitClusterStatuses("app", statuses)

	// The new version becomes available: the rollout completes, one cluster at a time.
	t.Logf("rollout held as the strategy says after %v; the new version becomes available", time.Since(start).Round(time.Millisecond))
	for _, m := range members {
		f.agents[m].SetBehavior(nil)
	}
	f.watchBudget("app", first, "completing the rollout", 25*time.Second, 1, -1, func(v budgetView) bool {
		return len(v.updated) == len(members) && len(v.notReady) == 0
	})
	t.Logf("rolled out everywhere after %v", time.Since(start).Round(time.Millisecond))
	f.waitPlacement("app", []string{"east=Bound", "north=Bound", "south=Bound", "west=Bound"}, placedConditions)
	v, err := f.budgetView("app", first)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if v.snapshots[m] != latest {
			t.Errorf("binding on %s carries %s, want the latest resource snapshot %s", m, v.snapshots[m], latest)
		}
	}
	_, crp, err := f.crpConditions("app")
	if err != nil {
		t.Fatal(err)
	}
	if want := "1"; crp.Status.ObservedResourceIndex != want || latest != resources.SnapshotName("app", 1) {
		t.Errorf("observedResourceIndex = %q and latest resource snapshot %s, want index %s (snapshot %s)",
			crp.Status.ObservedResourceIndex, latest, want, resources.SnapshotName("app", 1))
	}
}

// setColor changes a ConfigMap's color, retrying on conflicts.
func (f *fleetHub) setColor(ns, name, color string) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := f.admin.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			return err
		}
		cm.Data["color"] = color
		return f.admin.Update(context.Background(), cm)
	})
	if err != nil {
		f.t.Fatalf("update ConfigMap %s/%s: %v", ns, name, err)
	}
}

// TestClusterResourceOverridePatchesOneRegion: a ClusterResourceOverride selecting the placed
// namespace applies to everything in it (OVR-CRO-API), here a JSON patch adding an
// annotation with the member's name, on members labelled region=east only. The Work on east
// carries the patched namespace and ConfigMap, the Work on west the originals, and the
// placement reports OverriddenSucceeded with the override snapshot applicable on east
// (OVR-STATUS).
func TestClusterResourceOverridePatchesOneRegion(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", map[string]string{"region": "east"})
	f.join("west", map[string]string{"region": "west"})
	f.create(namespaceWithConfigMap("app")...)
	f.create(&placementv1beta1.ClusterResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Name: "app-cro"},
		Spec: placementv1beta1.ClusterResourceOverrideSpec{
			Placement:                &placementv1beta1.PlacementRef{Name: "app"},
			ClusterResourceSelectors: namespaceSelector("app"),
			Policy: placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				ClusterSelector: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{labelTerm("region", "east")}},
				OverrideType:    override.JSONPatchOverrideType,
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{
					Operator: override.JSONPatchOpAdd, Path: "/metadata/annotations",
					Value: apiextensionsv1.JSON{Raw: []byte(`{"fleetsim.io/cluster":"${MEMBER-CLUSTER-NAME}"}`)},
				}},
			}}},
		},
	})
	snapshot := override.SnapshotName("app-cro", 0)
	testenv.Eventually(t, "override snapshot "+snapshot, func() error {
		return f.admin.Get(context.Background(), client.ObjectKey{Name: snapshot}, &placementv1beta1.ClusterResourceOverrideSnapshot{})
	})
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("app")},
	})
	f.waitPlacement("app", []string{"east=Bound", "west=Bound"},
		withCondition(placedConditions, "ClusterResourcePlacementOverridden=True/OverriddenSucceeded"))
	f.waitClusterStatuses("app", []string{placed("east", "OverriddenSucceeded") + " cro=" + snapshot, placed("west", "NoOverrideSpecified")})

	ws, err := f.works("app")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		member string
		want   map[string]string // the annotations of both manifests
	}{
		{"east", map[string]string{"fleetsim.io/cluster": "east"}},
		{"west", nil},
	} {
		w := ws[tc.member]
		if w == nil {
			t.Errorf("no Work of app on %s", tc.member)
			continue
		}
		m, _, err := convert.WorkToModel(w)
		if err != nil {
			t.Fatalf("read Work %s/%s: %v", w.Namespace, w.Name, err)
		}
		var kinds []string
		for _, o := range m.Manifests {
			kinds = append(kinds, o.GetKind()+"/"+o.GetName())
			if diff := cmp.Diff(tc.want, o.GetAnnotations()); diff != "" {
				t.Errorf("annotations of %s %s in the Work on %s (-want +got):\n%s", o.GetKind(), o.GetName(), tc.member, diff)
			}
			if o.GetKind() == "ConfigMap" {
				data, _, _ := unstructured.NestedStringMap(o.Object, "data")
				if diff := cmp.Diff(map[string]string{"color": "blue"}, data); diff != "" {
					t.Errorf("data of ConfigMap %s in the Work on %s (-want +got):\n%s", o.GetName(), tc.member, diff)
				}
			}
		}
		if want := []string{"Namespace/app", "ConfigMap/settings"}; !slices.Equal(kinds, want) {
			raw, _ := json.Marshal(w.Spec.Workload.Manifests)
			t.Errorf("manifests of the Work on %s: got %v, want %v (%s)", tc.member, kinds, want, raw)
		}
	}
}
