package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestWorksPerPartAndEnvelope: a binding gets one Work per part of its resource snapshot
// and one per envelope, named as KubeFleet names them; every Work is applied and the
// placement becomes available only when all of them are.
func TestWorksPerPartAndEnvelope(t *testing.T) {
	s := newSim(t, Config{Seed: 1})
	addMembers(t, s, "m1")
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app"}}}
	big := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "app"}, "data": map[string]any{"blob": strings.Repeat("x", 600*1024)}}}
	}
	env := envelope(resources.KindResourceEnvelope, "app", "bundle", 2)
	for _, o := range []*unstructured.Unstructured{ns, big("a"), big("b"), env} {
		if err := s.ApplyResource(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ApplyPlacement(pickN("app", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(10 * time.Minute); err != nil {
		t.Fatal(err)
	}
	bs := s.store.Bindings("app")
	if len(bs) != 1 {
		t.Fatalf("bindings %d, want 1", len(bs))
	}
	var got []string
	for _, w := range s.store.Works(bs[0].Name) {
		var ms []string
		for _, m := range w.Manifests {
			ms = append(ms, m.GetKind()+"/"+m.GetName())
		}
		got = append(got, w.Name+": "+strings.Join(ms, ","))
	}
	// Selected in order: the Namespace, ConfigMaps a and b (600 KiB each), the envelope;
	// the Namespace with a, then b with the envelope, make two parts.
	envWork := resources.EnvelopeWorkName("app-1", env)
	want := []string{"app-1: ConfigMap/b", envWork + ": ConfigMap/c0,ConfigMap/c1", "app-work: Namespace/app,ConfigMap/a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Works of the binding (-want +got):\n%s", diff)
	}
	p, _ := s.Placement("app")
	var conds []string
	for _, c := range p.Status.PlacementStatuses[0].Conditions {
		conds = append(conds, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	for _, wantC := range []string{"Applied=True/AllWorkHaveBeenApplied", "Available=True/AllWorkAreAvailable"} {
		if !slices.Contains(conds, wantC) {
			t.Errorf("cluster conditions %v, want %s", conds, wantC)
		}
	}
	for _, name := range []string{"a", "b", "c0", "c1"} {
		if s.MemberObject("m1", "", "ConfigMap", "app", name) == nil {
			t.Errorf("ConfigMap app/%s not on the member", name)
		}
	}
}
