package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestLargeSelectionWritesAWorkPerPart: on a real API server, a placement selecting about
// 2 MB (three ConfigMaps of 700 KiB, more than one Work may hold) gets its resource
// snapshot split into parts and one Work per part, named as KubeFleet names them
// (big-work, big-1, big-2), each under the API server's request limit; the placement
// becomes available once the agent reports on every Work.
func TestLargeSelectionWritesAWorkPerPart(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", nil)
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "big"}}}
	for _, n := range []string{"a", "b", "c"} {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "big", Name: n},
			Data: map[string]string{"blob": strings.Repeat(n, 700*1024)}})
	}
	f.create(objs...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("big")},
	})
	f.waitPlacement("big", []string{"east=Bound"}, placedConditions)
	testenv.Eventually(t, "a Work per snapshot part", func() error {
		var ws placementv1beta1.WorkList
		if err := f.admin.List(context.Background(), &ws, client.InNamespace(membership.Namespace("east")),
			client.MatchingLabels{placementv1beta1.CRPTrackingLabel: "big"}); err != nil {
			return err
		}
		var got []string
		for _, w := range ws.Items {
			var names []string
			for _, m := range w.Spec.Workload.Manifests {
				for _, n := range []string{`"name":"a"`, `"name":"b"`, `"name":"c"`, `"name":"big"`} {
					if strings.Contains(string(m.Raw), n) {
						names = append(names, strings.Trim(strings.TrimPrefix(n, `"name":`), `"`))
					}
				}
			}
			got = append(got, w.Name+":"+strings.Join(names, ","))
		}
		slices.Sort(got)
		if want := []string{"big-1:b", "big-2:c", "big-work:big,a"}; !slices.Equal(got, want) {
			return fmt.Errorf("Works %v, want %v", got, want)
		}
		return nil
	})
}

// TestOversizedWorkIsReported: a Work the API server cannot store (a 1000 KiB ConfigMap,
// its snapshot part's Work huge-1, that a ResourceOverride grows by 600 KiB, past etcd's
// 1.5 MiB request limit, as the direct create below shows) is neither written nor retried
// for ever: the binding reports
// WorkSynchronized=False/SyncWorkFailed with the reason, and the placement
// WorkSynchronized=False, on a real API server.
func TestOversizedWorkIsReported(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", map[string]string{"region": "east"})
	blob := func(c string, n int) string { return strings.Repeat(c, n) }
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "huge"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "huge", Name: "data"}, Data: map[string]string{"blob": blob("d", 1000*1024)}})
	grow, _ := json.Marshal(map[string]string{"fleetsim.io/padding": blob("p", 600*1024)})
	f.create(&placementv1beta1.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Namespace: "huge", Name: "grow"},
		Spec: placementv1beta1.ResourceOverrideSpec{
			Placement:         &placementv1beta1.PlacementRef{Name: "huge"},
			ResourceSelectors: []placementv1beta1.ResourceSelector{{Group: "", Version: "v1", Kind: "ConfigMap", Name: "data"}},
			Policy: placementv1beta1.OverridePolicy{OverrideRules: []placementv1beta1.OverrideRule{{
				ClusterSelector: &placementv1beta1.ClusterSelector{ClusterSelectorTerms: []placementv1beta1.ClusterSelectorTerm{labelTerm("region", "east")}},
				OverrideType:    override.JSONPatchOverrideType,
				JSONPatchOverrides: []placementv1beta1.JSONPatchOverride{{
					Operator: override.JSONPatchOpAdd, Path: "/metadata/annotations", Value: apiextensionsv1.JSON{Raw: grow},
				}},
			}}},
		},
	})
	testenv.Eventually(t, "override snapshot", func() error {
		var list placementv1beta1.ResourceOverrideSnapshotList
		if err := f.admin.List(context.Background(), &list, client.InNamespace("huge")); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return fmt.Errorf("no ResourceOverrideSnapshot yet")
		}
		return nil
	})
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "huge"},
		Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("huge")},
	})
	testenv.Eventually(t, "the oversized Work reported", func() error {
		conds, _, err := f.crpConditions("huge")
		if err != nil {
			return err
		}
		if !slices.Contains(conds, "ClusterResourcePlacementWorkSynchronized=False/WorkNotSynchronizedYet") {
			return fmt.Errorf("placement conditions %v, want WorkSynchronized=False/WorkNotSynchronizedYet", conds)
		}
		var bs placementv1beta1.ClusterResourceBindingList
		if err := f.admin.List(context.Background(), &bs, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: "huge"}); err != nil {
			return err
		}
		if len(bs.Items) != 1 {
			return fmt.Errorf("%d bindings, want 1", len(bs.Items))
		}
		c := meta.FindStatusCondition(bs.Items[0].Status.Conditions, "WorkSynchronized")
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "SyncWorkFailed" || !strings.Contains(c.Message, "huge-1 would carry") || !strings.Contains(c.Message, "request is too large") {
			return fmt.Errorf("binding WorkSynchronized %+v, want False/SyncWorkFailed naming huge-1 and the limit", c)
		}
		return nil
	})
	var ws placementv1beta1.WorkList
	if err := f.admin.List(context.Background(), &ws, client.InNamespace(membership.Namespace("east"))); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws.Items {
		if w.Name == "huge-1" {
			t.Errorf("the oversized Work %s was written", w.Name)
		}
	}
	// The bound is the API server's: a Work of that size is refused.
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "data", "namespace": "huge",
		"annotations": map[string]any{"fleetsim.io/padding": blob("p", 600*1024)}}, "data": map[string]any{"blob": blob("d", 1000*1024)}}
	raw, _ := json.Marshal(cm)
	direct := &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: membership.Namespace("east"), Name: "direct"},
		Spec: placementv1beta1.WorkSpec{Workload: placementv1beta1.WorkloadTemplate{Manifests: []placementv1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
	if err := f.admin.Create(context.Background(), direct); err == nil {
		t.Errorf("the API server stored a Work of %d bytes of manifests; the hub's bound (%d) is too strict", len(raw), resources.MaxWorkBytes)
	}
}
