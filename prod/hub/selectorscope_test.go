package hub_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestPlacementOfNamespacedKindRefused: on a real API server, a ClusterResourcePlacement
// whose selector names a namespaced kind (a ConfigMap) is refused: fleet hub has no
// admission webhook, so the refusal is the placement's Scheduled=False condition with
// InvalidResourceSelectors and KubeFleet's webhook message, and it never reports Available.
func TestPlacementOfNamespacedKindRefused(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", nil)
	f.create(namespaceWithConfigMap("app")...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "cm"},
		Spec: placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: []placementv1beta1.ClusterResourceSelector{
			{Version: "v1", Kind: "ConfigMap", Name: "settings"}}},
	})
	const want = "the resource is not found in schema (please retry) or it is not a cluster scoped resource: /v1, Kind=ConfigMap"
	testenv.Eventually(t, "placement cm refused", func() error {
		conds, crp, err := f.crpConditions("cm")
		if err != nil {
			return err
		}
		if fmt.Sprint(conds) != "[ClusterResourcePlacementScheduled=False/InvalidResourceSelectors]" {
			return fmt.Errorf("conditions %v, want only Scheduled=False/InvalidResourceSelectors", conds)
		}
		if c := meta.FindStatusCondition(crp.Status.Conditions, "ClusterResourcePlacementScheduled"); !strings.Contains(c.Message, want) {
			return fmt.Errorf("Scheduled message %q, want it to contain %q", c.Message, want)
		}
		return nil
	})
}
