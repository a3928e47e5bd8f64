package sim

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/resources"
)

// envelope builds an envelope of kind with n wrapped ConfigMaps (ClusterRoles for a
// ClusterResourceEnvelope).
func envelope(kind, ns, name string, n int) *unstructured.Unstructured {
	data := map[string]any{}
	for i := range n {
		inner := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("c%d", i)}}
		if kind == resources.KindClusterResourceEnvelope {
			inner = map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": fmt.Sprintf("r%d", i)}}
		}
		data[fmt.Sprintf("e%05d.yaml", i)] = inner
	}
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": kind, "data": data}}
	o.SetName(name)
	o.SetNamespace(ns)
	return o
}

// TestApplyResourceRefusesOversizedEnvelope: the simulated hub refuses an envelope its CRD
// refuses, as the API server does (ENV-MAX-ENTRIES): 20,000 entries where the CRDs' data
// allows resources.MaxEnvelopeEntries (50). The refused envelope is not stored, so no
// placement can select it; one of 50 entries is accepted.
func TestApplyResourceRefusesOversizedEnvelope(t *testing.T) {
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"ResourceEnvelope of 20,000 entries", envelope(resources.KindResourceEnvelope, "app", "huge", 20000),
			"ResourceEnvelope app/huge: data: Too many: 20000: must have at most 50 items"},
		{"ClusterResourceEnvelope of 51 entries", envelope(resources.KindClusterResourceEnvelope, "", "big", resources.MaxEnvelopeEntries+1),
			"ClusterResourceEnvelope big: data: Too many: 51: must have at most 50 items"},
		{"ClusterResourceEnvelope of 50 entries", envelope(resources.KindClusterResourceEnvelope, "", "full", resources.MaxEnvelopeEntries), ""},
	}
	s := newSim(t, Config{Seed: 1})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := s.ApplyResource(tc.obj); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ApplyResource() error (-want +got):\n%s", diff)
			}
		})
	}
	var stored []string
	for _, o := range s.store.HubObjects() {
		stored = append(stored, resources.ObjectName(o))
	}
	if diff := cmp.Diff([]string{"ClusterResourceEnvelope full"}, stored); diff != "" {
		t.Errorf("hub objects after the applies (-want +got):\n%s", diff)
	}
}
