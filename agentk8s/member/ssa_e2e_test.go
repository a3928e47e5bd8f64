package member_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// TestServerSideApplyConflict: under applyStrategy ServerSideApply, another field manager
// on the member ("other-team", applying server-side with force) takes data.color of an
// applied ConfigMap. Without force the agent's apply conflicts: the manifest's Applied
// condition, the Work's failed manifest, the placement's failedPlacements entry (and the
// per-cluster Applied condition) say ApplyConflictWithOtherApplier, and the other manager's
// value stays. With serverSideApplyConfig.force the apply wins: Fleet takes the field back
// and the placement is available again (APPLY-SSA).
func TestServerSideApplyConflict(t *testing.T) {
	f := startFleet(t, "member-1")
	ctx := context.Background()
	m := f.members["member-1"]
	f.placeNamespace(t, "ssa", "applyStrategy: {type: ServerSideApply}")
	wait(t, "ssa is available", func() error {
		return f.placementCondition("ssa", "ClusterResourcePlacementAvailable", metav1.ConditionTrue)
	})

	other := &unstructured.Unstructured{}
	other.SetAPIVersion("v1")
	other.SetKind("ConfigMap")
	other.SetNamespace("ssa")
	other.SetName("settings")
	_ = unstructured.SetNestedField(other.Object, "red", "data", "color")
	if err := m.Apply(ctx, client.ApplyConfigurationFromUnstructured(other), client.FieldOwner("other-team"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}

	color := func() (any, error) {
		cm, err := f.memberObject("member-1", "v1", "ConfigMap", "ssa", "settings")
		if err != nil {
			return nil, err
		}
		return cm.Object["data"].(map[string]any)["color"], nil
	}
	wait(t, "the conflict is reported on the Work, the placement's cluster entry and the placement", func() error {
		w := &v1beta1.Work{}
		works := &v1beta1.WorkList{}
		if err := f.admin.List(ctx, works, client.InNamespace("fleet-member-member-1")); err != nil {
			return err
		}
		for i := range works.Items {
			if strings.HasPrefix(works.Items[i].Name, "ssa-") {
				w = &works.Items[i]
			}
		}
		var manifest *metav1.Condition
		for _, mc := range w.Status.ManifestConditions {
			if mc.Identifier.Kind == "ConfigMap" {
				manifest = meta.FindStatusCondition(mc.Conditions, "Applied")
			}
		}
		if manifest == nil || manifest.Status != metav1.ConditionFalse || manifest.Reason != agentk8s.ReasonConflictWithOtherApplier ||
			!strings.Contains(manifest.Message, "other-team") {
			return fmt.Errorf("Work %s: the ConfigMap's Applied condition is %+v", w.Name, manifest)
		}
		if c := meta.FindStatusCondition(w.Status.Conditions, "Applied"); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("Work %s: Applied is %+v", w.Name, c)
		}
		e, err := f.clusterEntry("ssa", "member-1")
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(e.FailedPlacements, func(p v1beta1.FailedResourcePlacement) bool {
			return p.Kind == "ConfigMap" && p.Condition.Reason == agentk8s.ReasonConflictWithOtherApplier
		}) {
			return fmt.Errorf("failed placements %+v", e.FailedPlacements)
		}
		if c := meta.FindStatusCondition(e.Conditions, "Applied"); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("the cluster entry's Applied is %+v", c)
		}
		return f.placementCondition("ssa", "ClusterResourcePlacementApplied", metav1.ConditionFalse)
	})
	if c, err := color(); err != nil || c != "red" {
		t.Errorf("without force the other manager's value stays: color %v (%v), want red", c, err)
	}

	wait(t, "force the apply", func() error {
		p := &v1beta1.ClusterResourcePlacement{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "ssa"}, p); err != nil {
			return err
		}
		p.Spec.Strategy.ApplyStrategy.ServerSideApplyConfig = &v1beta1.ServerSideApplyConfig{ForceConflicts: true}
		return f.admin.Update(ctx, p)
	})
	wait(t, "with force the apply wins", func() error {
		if c, err := color(); err != nil || c != "blue" {
			return fmt.Errorf("color %v (%v)", c, err)
		}
		cm, err := f.memberObject("member-1", "v1", "ConfigMap", "ssa", "settings")
		if err != nil {
			return err
		}
		for _, mf := range cm.GetManagedFields() {
			if mf.Manager == "other-team" && mf.FieldsV1 != nil && strings.Contains(mf.FieldsV1.GetRawString(), "f:color") {
				return fmt.Errorf("other-team still owns data.color: %s", mf.FieldsV1.GetRawString())
			}
		}
		return f.placementCondition("ssa", "ClusterResourcePlacementAvailable", metav1.ConditionTrue)
	})
}
