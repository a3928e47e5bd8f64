package resources

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestParts: a snapshot is split in order into parts of at most maxBytes of manifest JSON;
// a manifest bigger than the bound is a part of its own; nothing makes one empty part.
func TestParts(t *testing.T) {
	cm := func(name string, size int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "app"}, "data": map[string]any{"k": strings.Repeat("x", size)}}}
	}
	names := func(parts [][]*unstructured.Unstructured) [][]string {
		out := [][]string{}
		for _, p := range parts {
			ns := []string{}
			for _, m := range p {
				ns = append(ns, m.GetName())
			}
			out = append(out, ns)
		}
		return out
	}
	cases := []struct {
		name      string
		manifests []*unstructured.Unstructured
		max       int
		want      [][]string
	}{
		{"nothing", nil, 1000, [][]string{{}}},
		{"all fit", []*unstructured.Unstructured{cm("a", 100), cm("b", 100)}, 1000, [][]string{{"a", "b"}}},
		{"spill into a second part", []*unstructured.Unstructured{cm("a", 500), cm("b", 500), cm("c", 10)}, 1000, [][]string{{"a"}, {"b", "c"}}},
		{"an oversized manifest alone", []*unstructured.Unstructured{cm("a", 10), cm("big", 5000), cm("c", 10)}, 1000, [][]string{{"a"}, {"big"}, {"c"}}},
		{"the default bound", []*unstructured.Unstructured{cm("a", 700*1024), cm("b", 700*1024), cm("c", 10)}, 0, [][]string{{"a"}, {"b", "c"}}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, names(Parts(tc.manifests, tc.max))); diff != "" {
			t.Errorf("%s: Parts (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestWorkNames: Works are named as KubeFleet names them, envelope Works after the part
// they were found in, with an id that depends on the envelope alone.
func TestWorkNames(t *testing.T) {
	env := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
		o.SetNamespace(ns)
		o.SetName(name)
		return o
	}
	got := []string{
		WorkName("crp", 0), WorkName("crp", 1), WorkName("crp", 12),
		EnvelopeWorkName("crp-work", env("placement.kubernetes-fleet.io/v1beta1", "ResourceEnvelope", "app", "e")),
		EnvelopeWorkName("crp-1", env("placement.kubernetes-fleet.io/v1beta1", "ClusterResourceEnvelope", "", "e")),
		EnvelopeWorkName("crp-work", env("v1", "ConfigMap", "app", "e")),
	}
	want := []string{"crp-work", "crp-1", "crp-12", "crp-work-envelope-", "crp-1-envelope-", "crp-work-configmap-"}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("name %d = %q, want the prefix %q", i, got[i], want[i])
		}
		if i >= 3 && len(got[i]) != len(want[i])+16 {
			t.Errorf("name %d = %q, want a 16-digit id after %q", i, got[i], want[i])
		}
	}
	if a, b := EnvelopeWorkName("crp-work", env("v1", "ConfigMap", "app", "e")), EnvelopeWorkName("crp-work", env("v1", "ConfigMap", "app", "f")); a == b {
		t.Errorf("two envelopes share the Work name %q", a)
	}
	if a, b := got[5], EnvelopeWorkName("crp-work", env("v1", "ConfigMap", "app", "e")); a != b {
		t.Errorf("the same envelope named %q, then %q", a, b)
	}
}
