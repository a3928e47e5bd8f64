package hub_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestStatusReportingScope: a NamespaceAccessible placement gets a
// ClusterResourcePlacementStatus in its namespace that follows its status (all conditions
// but StatusSynced), StatusSynced False while the namespace is missing, and the copy goes
// with the placement; a ClusterScopeOnly placement gets none.
func TestStatusReportingScope(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	ctx := context.Background()
	f.join("east", nil)
	f.create(namespaceWithConfigMap("team")...)
	f.create(namespaceWithConfigMap("plain")...)
	f.create(
		&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "team"},
			Spec: placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("team"), StatusReportingScope: placement.NamespaceAccessible}},
		&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
			Spec: placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("plain")}},
		&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "later"},
			Spec: placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("later"), StatusReportingScope: placement.NamespaceAccessible}},
	)
	synced := append(slices.Clone(placedConditions), "ClusterResourcePlacementStatusSynced=True/StatusSyncSucceeded")
	sort.Strings(synced)
	f.waitPlacement("team", []string{"east=Bound"}, synced)
	f.waitPlacement("plain", []string{"east=Bound"}, placedConditions)
	waitCopy := func(name, ns string) {
		t.Helper()
		testenv.Eventually(t, "ClusterResourcePlacementStatus "+ns+"/"+name+" mirrors the placement", func() error {
			conds, crp, err := f.crpConditions(name)
			if err != nil {
				return err
			}
			cp := &placementv1beta1.ClusterResourcePlacementStatus{}
			if err := f.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cp); err != nil {
				return err
			}
			var got []string
			for _, c := range cp.SourceStatus.Conditions {
				got = append(got, c.Type+"="+string(c.Status)+"/"+c.Reason)
			}
			sort.Strings(got)
			want := slices.DeleteFunc(conds, func(c string) bool { return c == "ClusterResourcePlacementStatusSynced=True/StatusSyncSucceeded" })
			if !slices.Equal(got, want) || len(cp.SourceStatus.PlacementStatuses) != len(crp.Status.PlacementStatuses) ||
				cp.SourceStatus.ObservedResourceIndex != crp.Status.ObservedResourceIndex {
				return fmt.Errorf("copy has %v, %d clusters, index %q; placement has %v, %d clusters, index %q", got, len(cp.SourceStatus.PlacementStatuses),
					cp.SourceStatus.ObservedResourceIndex, want, len(crp.Status.PlacementStatuses), crp.Status.ObservedResourceIndex)
			}
			if cp.Labels[placementv1beta1.CRPTrackingLabel] != name || len(cp.OwnerReferences) != 1 || cp.OwnerReferences[0].UID != crp.UID || cp.LastUpdatedTime.IsZero() {
				return fmt.Errorf("copy metadata %+v, lastUpdatedTime %v: want the placement's label and owner and a time", cp.ObjectMeta, cp.LastUpdatedTime)
			}
			return nil
		})
	}
	waitCopy("team", "team")
	var copies placementv1beta1.ClusterResourcePlacementStatusList
	if err := f.admin.List(ctx, &copies, client.InNamespace("plain")); err != nil {
		t.Fatal(err)
	}
	if len(copies.Items) != 0 {
		t.Errorf("ClusterScopeOnly placement plain has status copies %v, want none", copies.Items)
	}

	// The scope cannot change.
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := f.admin.Get(ctx, client.ObjectKey{Name: "plain"}, crp); err != nil {
		t.Fatal(err)
	}
	crp.Spec.StatusReportingScope = placement.NamespaceAccessible
	if err := f.admin.Update(ctx, crp); err == nil || !apierrors.IsInvalid(err) {
		t.Errorf("changing statusReportingScope: %v, want Invalid (immutable)", err)
	}

	// A missing namespace: StatusSynced False and no copy, until the namespace exists.
	testenv.Eventually(t, "placement later reports StatusSyncFailed", func() error {
		conds, _, err := f.crpConditions("later")
		if err != nil {
			return err
		}
		if !slices.Contains(conds, "ClusterResourcePlacementStatusSynced=False/StatusSyncFailed") {
			return fmt.Errorf("conditions %v", conds)
		}
		return nil
	})
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "later"}})
	f.waitPlacement("later", []string{"east=Bound"}, synced)
	waitCopy("later", "later")

	// The copy goes with its placement.
	if err := f.admin.Delete(ctx, &placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "placement team and its status copy deleted", func() error {
		err := f.admin.Get(ctx, client.ObjectKey{Namespace: "team", Name: "team"}, &placementv1beta1.ClusterResourcePlacementStatus{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the status copy is still there (%v)", err)
		}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "team"}, &placementv1beta1.ClusterResourcePlacement{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the placement is still there (%v)", err)
		}
		return nil
	})
}
