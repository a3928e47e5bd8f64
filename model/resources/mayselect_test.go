package resources

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/placement"
)

// TestMaySelectCoversSelect: every object Select picks is one MaySelect says may be picked,
// so the production hub, which wakes only the placements MaySelect names, never misses a
// change to what a placement selects.
func TestMaySelectCoversSelect(t *testing.T) {
	kinds := []schema.GroupVersionKind{
		{Version: "v1", Kind: "Namespace"}, {Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
	}
	names := []string{"a", "b", "kube-system", "fleet-member-x"}
	labelSets := []map[string]string{nil, {"env": "prod"}, {"env": "dev"}, {"env": "prod", "tier": "web"}}
	rapid.Check(t, func(rt *rapid.T) {
		var objs []*unstructured.Unstructured
		nsLabels := map[string]map[string]string{}
		for i := range rapid.IntRange(0, 8).Draw(rt, "objects") {
			gvk := rapid.SampledFrom(kinds).Draw(rt, "kind")
			o := &unstructured.Unstructured{}
			o.SetGroupVersionKind(gvk)
			o.SetName(rapid.SampledFrom(names).Draw(rt, "name") + string(rune('0'+i%2)))
			o.SetLabels(rapid.SampledFrom(labelSets).Draw(rt, "labels"))
			if gvk.Kind == "Namespace" {
				o.SetName(rapid.SampledFrom(names).Draw(rt, "ns"))
				if _, dup := nsLabels[o.GetName()]; dup {
					continue // one namespace per name, as on a real server
				}
				nsLabels[o.GetName()] = o.GetLabels()
			} else if gvk.Kind != "ClusterRole" {
				o.SetNamespace(rapid.SampledFrom(names).Draw(rt, "namespace"))
			}
			objs = append(objs, o)
		}
		var sels []placement.ResourceSelector
		for range rapid.IntRange(1, 3).Draw(rt, "selectors") {
			gvk := rapid.SampledFrom(kinds).Draw(rt, "selector kind")
			sel := placement.ResourceSelector{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
			if rapid.Bool().Draw(rt, "by name") {
				sel.Name = rapid.SampledFrom(names).Draw(rt, "selector name")
			} else if l := rapid.SampledFrom(labelSets).Draw(rt, "selector labels"); l != nil {
				sel.LabelSelector = &metav1.LabelSelector{MatchLabels: l}
			}
			sels = append(sels, sel)
		}
		picked, err := Select(sels, objs)
		if err != nil {
			return // refused selectors select nothing
		}
		for _, o := range picked {
			ref := RefOf(o)
			ref.NamespaceLabels, ref.NamespaceKnown = nsLabels[o.GetNamespace()], true
			if !MaySelect(sels, ref) {
				rt.Fatalf("Select picked %s but MaySelect says it cannot be picked (selectors %+v)", Key(o), sels)
			}
		}
	})
}

func TestMaySelect(t *testing.T) {
	cm := ObjectRef{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: "app", Name: "x",
		NamespaceLabels: map[string]string{"env": "prod"}, NamespaceKnown: true}
	ns := func(name string) placement.ResourceSelector {
		return placement.ResourceSelector{Version: "v1", Kind: "Namespace", Name: name}
	}
	byLabel := placement.ResourceSelector{Version: "v1", Kind: "Namespace", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}
	for _, tc := range []struct {
		name string
		sels []placement.ResourceSelector
		o    ObjectRef
		want bool
	}{
		{"its namespace by name", []placement.ResourceSelector{ns("app")}, cm, true},
		{"another namespace", []placement.ResourceSelector{ns("web")}, cm, false},
		{"namespace labels do not match", []placement.ResourceSelector{byLabel}, cm, false},
		{"namespace unknown", []placement.ResourceSelector{byLabel}, ObjectRef{GVK: cm.GVK, Namespace: "app", Name: "x"}, true},
		{"reserved namespace", []placement.ResourceSelector{ns("kube-system")}, ObjectRef{GVK: cm.GVK, Namespace: "kube-system", Name: "x", NamespaceKnown: true}, false},
		{"cluster-scoped by kind", []placement.ResourceSelector{{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}},
			ObjectRef{GVK: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, Name: "r"}, true},
		{"a namespace itself", []placement.ResourceSelector{ns("app")}, ObjectRef{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, Name: "app"}, true},
	} {
		if got := MaySelect(tc.sels, tc.o); got != tc.want {
			t.Errorf("%s: MaySelect = %v, want %v", tc.name, got, tc.want)
		}
	}
}
