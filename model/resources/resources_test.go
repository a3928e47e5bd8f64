package resources

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/placement"
)

func objects(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &o.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

func hub(t *testing.T) []*unstructured.Unstructured {
	return objects(t,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: work, labels: {app: web}}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: work}\ndata: {a: b}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: work}\nspec: {replicas: 2}\nstatus: {readyReplicas: 2}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: work}",
		"apiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: e, namespace: work}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: other, labels: {app: web}}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg2, namespace: other, labels: {app: web}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system, labels: {app: web}}",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader, labels: {tier: x}}\nrules: []",
	)
}

func keys(os []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range os {
		out = append(out, Key(o))
	}
	return out
}

func TestSelect(t *testing.T) {
	ns := func(name string) placement.ResourceSelector {
		return placement.ResourceSelector{Group: "", Version: "v1", Kind: "Namespace", Name: name}
	}
	cases := []struct {
		name      string
		selectors []placement.ResourceSelector
		want      []string
		err       string
	}{
		{"a namespace brings its objects, not pods or events (CRP-SEL-NAMESPACE, ARCH-PROPAGATION-FILTER)", []placement.ResourceSelector{ns("work")},
			[]string{"/work", "/work//ConfigMap/cfg", "/work/apps/Deployment/web"}, ""},
		{"selectionScope NamespaceOnly brings the namespace alone", []placement.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "work", SelectionScope: placement.NamespaceOnly}},
			[]string{"/work"}, ""},
		{"NamespaceOnly and NamespaceWithResources selectors are ORed", []placement.ResourceSelector{
			{Version: "v1", Kind: "Namespace", Name: "work", SelectionScope: placement.NamespaceOnly},
			{Version: "v1", Kind: "Namespace", Name: "other", SelectionScope: placement.NamespaceWithResources}},
			[]string{"/other", "/other//ConfigMap/cfg2", "/work"}, ""},
		{"a namespace that does not exist yet selects nothing", []placement.ResourceSelector{ns("later")}, []string{}, ""},
		{"NamespaceWithResourceSelectors: the namespace and only the objects the other selectors pick in it", []placement.ResourceSelector{
			{Version: "v1", Kind: "Namespace", Name: "work", SelectionScope: placement.NamespaceWithResourceSelectors},
			{Version: "v1", Kind: "ConfigMap", Name: "cfg"}},
			[]string{"/work", "/work//ConfigMap/cfg"}, ""},
		{"NamespaceWithResourceSelectors alone brings the namespace alone", []placement.ResourceSelector{
			{Version: "v1", Kind: "Namespace", Name: "work", SelectionScope: placement.NamespaceWithResourceSelectors}},
			[]string{"/work"}, ""},
		{"NamespaceWithResourceSelectors: a namespaced selector picks only in the scoped namespaces", []placement.ResourceSelector{
			{Version: "v1", Kind: "Namespace", Name: "other", SelectionScope: placement.NamespaceWithResourceSelectors},
			{Version: "v1", Kind: "ConfigMap"}},
			[]string{"/other", "/other//ConfigMap/cfg2"}, ""},
		{"NamespaceWithResourceSelectors by label, a namespaced selector by label, and a cluster-scoped selector", []placement.ResourceSelector{
			{Version: "v1", Kind: "Namespace", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, SelectionScope: placement.NamespaceWithResourceSelectors},
			{Version: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"}},
			[]string{"//rbac.authorization.k8s.io/ClusterRole/reader", "/other", "/other//ConfigMap/cfg2", "/work"}, ""},
		{"NamespaceWithResourceSelectors does not make pods placeable", []placement.ResourceSelector{
			{Version: "v1", Kind: "Namespace", Name: "work", SelectionScope: placement.NamespaceWithResourceSelectors},
			{Version: "v1", Kind: "Pod"}},
			nil, "resourceSelectors[1]: Pod cannot be placed"},
		{"a namespaced kind without NamespaceWithResourceSelectors is refused", []placement.ResourceSelector{ns("work"), {Version: "v1", Kind: "ConfigMap", Name: "cfg"}},
			nil, "not a cluster scoped resource"},
		{"a label selector picks cluster-scoped objects only, never reserved namespaces", []placement.ResourceSelector{{Version: "v1", Kind: "Namespace", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
			[]string{"/other", "/other//ConfigMap/cfg2", "/work", "/work//ConfigMap/cfg", "/work/apps/Deployment/web"}, ""},
		{"GVK only selects every object of the kind", []placement.ResourceSelector{{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}},
			[]string{"//rbac.authorization.k8s.io/ClusterRole/reader"}, ""},
		{"selectors are ORed", []placement.ResourceSelector{ns("other"), {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"}},
			[]string{"//rbac.authorization.k8s.io/ClusterRole/reader", "/other", "/other//ConfigMap/cfg2"}, ""},
		{"a reserved namespace by name is an error (TSG-SCHED-RESERVED-NS)", []placement.ResourceSelector{ns("kube-system")}, nil, `resourceSelectors[0]: namespace "kube-system" is reserved`},
		{"fleet's own kinds cannot be placed", []placement.ResourceSelector{{Group: "placement.kubernetes-fleet.io", Version: "v1beta1", Kind: "ClusterResourcePlacement"}}, nil, "cannot be placed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Select(tc.selectors, hub(t))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Select() error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, append([]string{}, keys(got)...)); diff != "" {
				t.Errorf("Select() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideSnapshot(t *testing.T) {
	sel := []placement.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "work"}}
	objs := hub(t)
	picked, _ := Select(sel, objs)
	first := DecideSnapshot("crp", picked, nil)
	if first == nil || first.Name != "crp-0-snapshot" || first.Index != 0 || len(first.Hash) != 64 {
		t.Fatalf("first snapshot = %+v", first)
	}
	if _, ok := first.Manifests[2].Object["status"]; ok {
		t.Errorf("snapshot kept status: %v", first.Manifests[2].Object)
	}
	if again := DecideSnapshot("crp", picked, first); again != nil {
		t.Errorf("unchanged content made snapshot %s", again.Name)
	}
	// A status change on the hub is not content.
	unstructured.SetNestedField(objs[2].Object, int64(1), "status", "readyReplicas")
	if again := DecideSnapshot("crp", picked, first); again != nil {
		t.Errorf("a status change made snapshot %s", again.Name)
	}
	unstructured.SetNestedField(objs[2].Object, int64(3), "spec", "replicas")
	next := DecideSnapshot("crp", picked, first)
	if next == nil || next.Name != "crp-1-snapshot" || next.Index != 1 {
		t.Errorf("changed content: %+v, want crp-1-snapshot", next)
	}
}
