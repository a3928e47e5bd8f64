package staged_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/staged"
)

// TestDecodeSeedManifests: the documentation's manifests decode unchanged [[Staged Update › Specify Rollout Strategy for ClusterResourcePlacement; Staged Update › An example ClusterStagedUpdateStrategy looks like below],
// [Staged Update › Trigger rollout with ClusterStagedUpdateRun]].
func TestDecodeSeedManifests(t *testing.T) {
	var s staged.ClusterStagedUpdateStrategy
	if err := yaml.UnmarshalStrict([]byte(`
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: example-strategy
spec:
  stages:
    - name: staging
      labelSelector:
        matchLabels:
          environment: staging
      afterStageTasks:
        - type: TimedWait
          waitTime: 1h
    - name: canary
      labelSelector:
        matchLabels:
          environment: canary
      afterStageTasks:
        - type: Approval
    - name: production
      labelSelector:
        matchLabels:
          environment: production
      sortingLabelKey: order
      afterStageTasks:
        - type: Approval
        - type: TimedWait
          waitTime: 1h
`), &s); err != nil {
		t.Fatal(err)
	}
	want := newStrategy(
		newStage("staging", env("staging"), timedWait(time.Hour)),
		newStage("canary", env("canary"), approvalTask()),
		sortedBy("order", newStage("production", env("production"), approvalTask(), timedWait(time.Hour))),
	)
	want.TypeMeta = metav1.TypeMeta{APIVersion: "placement.kubernetes-fleet.io/v1beta1", Kind: "ClusterStagedUpdateStrategy"}
	if diff := cmp.Diff(want, &s); diff != "" {
		t.Errorf("decoded strategy (-want +got):\n%s", diff)
	}
	if errs := staged.ValidateStrategy(&s); len(errs) > 0 {
		t.Errorf("ValidateStrategy(documented strategy) = %v", errs)
	}

	var r staged.ClusterStagedUpdateRun
	if err := yaml.UnmarshalStrict([]byte(`
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: example-run
spec:
  placementName: example-placement
  resourceSnapshotIndex: "0"
  stagedRolloutStrategyName: example-strategy
`), &r); err != nil {
		t.Fatal(err)
	}
	if errs := staged.ValidateRun(&r); len(errs) > 0 || r.Spec.ResourceSnapshotIndex != "0" {
		t.Errorf("decoded run %+v: %v", r.Spec, errs)
	}

	var a staged.ClusterApprovalRequest
	if err := yaml.UnmarshalStrict([]byte(`
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterApprovalRequest
metadata:
  name: example-run-canary
  labels:
    kubernetes-fleet.io/targetupdaterun: example-run
    kubernetes-fleet.io/targetUpdatingStage: canary
    kubernetes-fleet.io/isLatestUpdateRunApproval: "true"
spec:
  parentStageRollout: example-run
  targetStage: canary
status:
  conditions:
  - type: Approved
    status: "True"
    reason: lgtm
    message: lgtm
    lastTransitionTime: "2025-03-12T23:22:55Z"
    observedGeneration: 1
`), &a); err != nil {
		t.Fatal(err)
	}
	if !statusTrue(a.Status.Conditions, staged.TypeApproved) || a.Spec.TargetStage != "canary" || a.Labels[staged.LabelTargetUpdatingStage] != "canary" {
		t.Errorf("decoded approval request = %+v", a)
	}

	// The status round-trips through JSON.
	w := scheduled(t, howToStrategy(), howToFleet())
	w.approveAfter = time.Minute
	w.drive(100)
	b, err := yaml.Marshal(w.run)
	if err != nil {
		t.Fatal(err)
	}
	var back staged.ClusterStagedUpdateRun
	if err := yaml.UnmarshalStrict(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w.run, &back); diff != "" {
		t.Errorf("status round trip (-want +got):\n%s", diff)
	}
}
