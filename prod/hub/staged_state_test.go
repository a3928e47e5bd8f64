package hub_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestStagedUpdateRunState: a run created with spec.state Initialize initializes and binds
// nothing; set to Run, it rolls out and succeeds, with the strategy's maxConcurrency frozen
// in its status.
func TestStagedUpdateRunState(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("member1", map[string]string{"environment": "prod"})
	f.join("member2", map[string]string{"environment": "prod"})
	f.join("member3", map[string]string{"environment": "prod"})
	ctx := context.Background()
	f.create(namespaceWithConfigMap("web")...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: placementv1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: namespaceSelector("web"),
			Strategy:          placementv1beta1.RolloutStrategy{Type: placement.ExternalStrategy},
		},
	})
	two := intstr.FromInt32(2)
	f.create(&placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "two-at-a-time"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "prod", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"environment": "prod"}}, MaxConcurrency: &two},
		}},
	}, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: "run"},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: "web", ResourceSnapshotIndex: "0", StagedRolloutStrategyName: "two-at-a-time", State: staged.StateInitialize},
	})
	run := &placementv1beta1.ClusterStagedUpdateRun{}
	testenv.Eventually(t, "run initialized, nothing bound", func() error {
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "run"}, run); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(run.Status.Conditions, staged.TypeInitialized) {
			return fmt.Errorf("run conditions %v, want Initialized True", run.Status.Conditions)
		}
		got, err := f.bindings("web")
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != "[member1=Scheduled member2=Scheduled member3=Scheduled]" {
			return fmt.Errorf("bindings %v", got)
		}
		return nil
	})
	if c := meta.FindStatusCondition(run.Status.Conditions, staged.TypeProgressing); c != nil {
		t.Errorf("an Initialize run has %s=%s/%s, want no Progressing condition", c.Type, c.Status, c.Reason)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		r := &placementv1beta1.ClusterStagedUpdateRun{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "run"}, r); err != nil {
			return err
		}
		r.Spec.State = staged.StateRun
		return f.admin.Update(ctx, r)
	}); err != nil {
		t.Fatalf("set state Run: %v", err)
	}
	f.waitPlacement("web", []string{"member1=Bound", "member2=Bound", "member3=Bound"}, placedConditions)
	testenv.Eventually(t, "run succeeded", func() error {
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "run"}, run); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(run.Status.Conditions, staged.TypeSucceeded) {
			return fmt.Errorf("run conditions %v, want Succeeded True", run.Status.Conditions)
		}
		return nil
	})
	// The run froze the strategy with its maxConcurrency (the model's tests pin the order).
	if snap := run.Status.StagedUpdateStrategySnapshot; snap == nil || len(snap.Stages) != 1 || snap.Stages[0].MaxConcurrency == nil || *snap.Stages[0].MaxConcurrency != two {
		t.Errorf("strategy snapshot %+v, want one stage with maxConcurrency 2", snap)
	}
}
