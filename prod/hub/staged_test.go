package hub_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestStagedUpdateRun rolls an External placement out with a staged update run: the
// staging stage first, a timed wait, then the canary stage; the run succeeds only once the
// canary stage's approval request is approved through its status, as a user does with
// kubectl.
func TestStagedUpdateRun(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("member1", map[string]string{"environment": "canary", "order": "2"})
	f.join("member2", map[string]string{"environment": "staging"})
	f.join("member3", map[string]string{"environment": "canary", "order": "1"})
	ctx := context.Background()
	f.create(namespaceWithConfigMap("web")...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: placementv1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: namespaceSelector("web"),
			Strategy:          placementv1beta1.RolloutStrategy{Type: placement.ExternalStrategy},
		},
	})
	// External: scheduled, nothing deployed until a run.
	testenv.Eventually(t, "scheduled, not bound", func() error {
		got, err := f.bindings("web")
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != "[member1=Scheduled member2=Scheduled member3=Scheduled]" {
			return fmt.Errorf("bindings %v", got)
		}
		return nil
	})
	f.create(&placementv1beta1.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "two-stages"},
		Spec: placementv1beta1.StagedUpdateStrategySpec{Stages: []placementv1beta1.StageConfig{
			{Name: "staging", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"environment": "staging"}},
				AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: "TimedWait", WaitTime: &metav1.Duration{Duration: 2 * time.Second}}}},
			{Name: "canary", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"environment": "canary"}},
				SortingLabelKey: ptrTo("order"), AfterStageTasks: []placementv1beta1.AfterStageTask{{Type: "Approval"}}},
		}},
	}, &placementv1beta1.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: "run"},
		Spec:       placementv1beta1.StagedUpdateRunSpec{PlacementName: "web", ResourceSnapshotIndex: "0", StagedRolloutStrategyName: "two-stages"},
	})

	testenv.Eventually(t, "both stages updated, approval requested after canary", func() error {
		got, err := f.bindings("web")
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != "[member1=Bound member2=Bound member3=Bound]" {
			return fmt.Errorf("bindings %v", got)
		}
		return f.admin.Get(ctx, client.ObjectKey{Name: "run-after-canary"}, &placementv1beta1.ClusterApprovalRequest{})
	})
	// Without the approval the run cannot finish.
	time.Sleep(time.Second)
	run := &placementv1beta1.ClusterStagedUpdateRun{}
	if err := f.admin.Get(ctx, client.ObjectKey{Name: "run"}, run); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, staged.TypeSucceeded); c != nil {
		t.Fatalf("run has %s=%s before its approval, want no Succeeded condition yet", c.Type, c.Status)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		a := &placementv1beta1.ClusterApprovalRequest{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "run-after-canary"}, a); err != nil {
			return err
		}
		meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: staged.TypeApproved, Status: metav1.ConditionTrue, Reason: "Approved", Message: "approved by the test", ObservedGeneration: a.Generation})
		return f.admin.Status().Update(ctx, a)
	}); err != nil {
		t.Fatalf("approve: %v", err)
	}
	f.waitPlacement("web", []string{"member1=Bound", "member2=Bound", "member3=Bound"}, placedConditions)
	testenv.Eventually(t, "run succeeded, approval accepted", func() error {
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "run"}, run); err != nil {
			return err
		}
		var got []string
		for _, c := range run.Status.Conditions {
			got = append(got, c.Type+"="+string(c.Status)+"/"+c.Reason)
		}
		sort.Strings(got)
		want := "[Initialized=True/UpdateRunInitializedSuccessfully Progressing=True/UpdateRunStarted Succeeded=True/UpdateRunSucceeded]"
		if fmt.Sprint(got) != want {
			return fmt.Errorf("run conditions %v, want %s", got, want)
		}
		a := &placementv1beta1.ClusterApprovalRequest{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: "run-after-canary"}, a); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(a.Status.Conditions, staged.TypeApprovalAccepted) {
			return fmt.Errorf("approval request conditions %v, want ApprovalAccepted True", a.Status.Conditions)
		}
		return nil
	})
}

func ptrTo[T any](v T) *T { return &v }
