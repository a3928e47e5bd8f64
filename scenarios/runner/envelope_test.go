package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
)

// TestEnvelopeIntoReservedNamespaceIsNotPlaced: selecting kube-system is refused, and so is
// carrying an object into it in an envelope (ENV-RESERVED-NS): a ResourceEnvelope in app
// wrapping a ConfigMap in kube-system, and a ClusterResourceEnvelope wrapping the Namespace
// kube-public, are unwrapped by the shared work generator, which refuses them. No Work is
// written (nothing of the envelope is placed, not even its allowed entries), and each
// member's WorkSynchronized condition says why, naming the envelope, the entry, the object
// and the rule (TSG-WORKSYNC-BAD-ENVELOPE). The placement of the same namespace without the
// envelope is the control. prod/hub TestEnvelopeIntoReservedNamespace pins the same message
// on the real API server.
func TestEnvelopeIntoReservedNamespaceIsNotPlaced(t *testing.T) {
	const src = `name: envelope-reserved
duration: 10m
members:
  - name: m{1..2}
timeline:
  - at: 0s
    apply: |
      apiVersion: v1
      kind: Namespace
      metadata: {name: app}
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ResourceEnvelope
      metadata: {name: sneaky, namespace: app}
      data:
        "ok.yaml": {apiVersion: v1, kind: ConfigMap, metadata: {name: fine}}
        "sys.yaml": {apiVersion: v1, kind: ConfigMap, metadata: {name: config, namespace: kube-system}, data: {k: v}}
      ---
      apiVersion: v1
      kind: Namespace
      metadata: {name: plain}
      ---
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: settings, namespace: plain}
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourceEnvelope
      metadata: {name: ns-envelope}
      data:
        "ns.yaml": {apiVersion: v1, kind: Namespace, metadata: {name: kube-public, labels: {taken: "yes"}}}
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata: {name: app}
      spec:
        resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
        policy: {placementType: PickAll}
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata: {name: ns}
      spec:
        resourceSelectors: [{group: placement.kubernetes-fleet.io, version: v1beta1, kind: ClusterResourceEnvelope, name: ns-envelope}]
        policy: {placementType: PickFixed, clusterNames: [m1]}
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata: {name: plain}
      spec:
        resourceSelectors: [{group: "", version: v1, kind: Namespace, name: plain}]
        policy: {placementType: PickAll}
expect:
  - at: 5m
    placement:
      name: app
      clusters: [m1, m2]
      condition: {type: ClusterResourcePlacementWorkSynchronized, status: "False"}
  - at: 5m
    placement:
      name: app
      condition: {cluster: m1, type: WorkSynchronized, status: "False", reason: SyncWorkFailed}
  - at: 5m
    placement:
      name: ns
      condition: {cluster: m1, type: WorkSynchronized, status: "False", reason: SyncWorkFailed}
  - at: 5m
    placement:
      name: plain
      clusters: [m1, m2]
      condition: {type: ClusterResourcePlacementAvailable, status: "True"}
`
	sc, err := scenarios.Parse("envelope-reserved.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Expectations {
		if !e.Passed {
			t.Errorf("line %d at %s: %s: %s", e.Line, e.At, e.Description, e.Detail)
		}
	}
	const prefix = "Failed to synchronize the work to the latest: "
	want := map[string]Condition{
		"app/m1": {Type: "WorkSynchronized", Status: "False", Reason: "SyncWorkFailed",
			Message: prefix + `envelope ResourceEnvelope app/sneaky: data["sys.yaml"]: ConfigMap kube-system/config: namespace "kube-system" is reserved and cannot be placed`},
		"app/m2": {Type: "WorkSynchronized", Status: "False", Reason: "SyncWorkFailed",
			Message: prefix + `envelope ResourceEnvelope app/sneaky: data["sys.yaml"]: ConfigMap kube-system/config: namespace "kube-system" is reserved and cannot be placed`},
		"ns/m1": {Type: "WorkSynchronized", Status: "False", Reason: "SyncWorkFailed",
			Message: prefix + `envelope ClusterResourceEnvelope ns-envelope: data["ns.yaml"]: Namespace kube-public: namespace "kube-public" is reserved and cannot be placed`},
	}
	got := map[string]Condition{}
	for _, p := range rep.Placements {
		for _, ps := range p.PlacementStatuses {
			for _, c := range ps.Conditions {
				if c.Type == "WorkSynchronized" && (p.Name == "app" || p.Name == "ns") {
					got[p.Name+"/"+ps.ClusterName] = c
				}
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WorkSynchronized of the placements carrying envelopes into reserved namespaces (-want +got):\n%s", diff)
	}
}
