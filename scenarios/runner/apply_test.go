package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios"
)

// TestReapplyMemberClusterReplacesLabelsAndTaints: re-applying a MemberCluster works like
// kubectl apply: labels and taints left out of the manifest are removed.
func TestReapplyMemberClusterReplacesLabelsAndTaints(t *testing.T) {
	const src = `name: reapply
duration: 30m
timeline:
  - at: 0s
    apply: |
      apiVersion: cluster.kubernetes-fleet.io/v1beta1
      kind: MemberCluster
      metadata:
        name: a
        labels: {env: prod, team: x}
      spec:
        identity: {kind: User, name: a}
        taints:
          - {key: gone, value: v, effect: NoSchedule}
          - {key: kept, value: v, effect: NoSchedule}
  - at: 10m
    apply: |
      apiVersion: cluster.kubernetes-fleet.io/v1beta1
      kind: MemberCluster
      metadata:
        name: a
        labels: {env: prod}
      spec:
        identity: {kind: User, name: a}
        taints:
          - {key: kept, value: v, effect: NoSchedule}
  - at: 20m
    apply: |
      apiVersion: v1
      kind: Namespace
      metadata:
        name: web
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata:
        name: team-x
      spec:
        resourceSelectors:
          - {group: "", version: v1, kind: Namespace, name: web}
        policy:
          placementType: PickAll
          tolerations: [{operator: Exists}]
          affinity:
            clusterAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                clusterSelectorTerms:
                  - labelSelector: {matchLabels: {team: x}}
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata:
        name: env-prod
      spec:
        resourceSelectors:
          - {group: "", version: v1, kind: Namespace, name: web}
        policy:
          placementType: PickAll
          tolerations: [{operator: Exists}]
          affinity:
            clusterAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                clusterSelectorTerms:
                  - labelSelector: {matchLabels: {env: prod}}
expect:
  - at: 25m
    placement: {name: team-x, clusters: []}
  # The control: the label that stayed still selects the member.
  - at: 25m
    placement: {name: env-prod, clusters: [a]}
`
	sc, err := scenarios.Parse("reapply.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Expectations {
		if !e.Passed {
			t.Errorf("line %d at %s: %s: %s (the removed label still selects the member)", e.Line, e.At, e.Description, e.Detail)
		}
	}
	if len(rep.Members) != 1 {
		t.Fatalf("members = %+v, want a alone", rep.Members)
	}
	want := []member.Taint{{Key: "kept", Value: "v", Effect: member.NoSchedule}}
	if diff := cmp.Diff(want, rep.Members[0].Taints); diff != "" {
		t.Errorf("taints after re-apply (-want +got):\n%s", diff)
	}
}
