package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetsim/fleetsim/model/placement"
)

func TestParseAPIList(t *testing.T) {
	cases := []struct {
		in   string
		want APIList
	}{
		{"", APIList{}},
		{"networking.k8s.io", APIList{Groups: []string{"networking.k8s.io"}}},
		{"apps/v1; batch/v1 ;", APIList{GroupVersions: []schema.GroupVersion{{Group: "apps", Version: "v1"}, {Group: "batch", Version: "v1"}}}},
		{"networking.k8s.io/v1/Ingress,IngressClass", APIList{Kinds: []schema.GroupVersionKind{
			{Group: "networking.k8s.io", Version: "v1", Kind: "ingress"}, {Group: "networking.k8s.io", Version: "v1", Kind: "ingressclass"}}}},
		{"v1/Secret,configMap;rbac.authorization.k8s.io", APIList{Groups: []string{"rbac.authorization.k8s.io"}, Kinds: []schema.GroupVersionKind{
			{Version: "v1", Kind: "secret"}, {Version: "v1", Kind: "configmap"}}}},
	}
	for _, tc := range cases {
		got, err := ParseAPIList(tc.in)
		if err != nil {
			t.Errorf("ParseAPIList(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseAPIList(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseFilterRefuses(t *testing.T) {
	cases := []struct {
		skipped, allowed, namespaces, want string
	}{
		{"v1/Secret", "apps", "", "skipped and allowed propagating APIs are mutually exclusive: give one"},
		{"a/b/c/d", "", "", `skipped propagating APIs: "a/b/c/d": must be <group>, <group>/<version> or <group>/<version>/<kind>,<kind>`},
		{"", "apps//Deployment", "", `allowed propagating APIs: "apps//Deployment": an empty group, version or kind`},
		{"Secret,ConfigMap", "", "", `skipped propagating APIs: "Secret,ConfigMap": kinds need <group>/<version>/ before them (v1/ for the core group)`},
		{"apps/v1,v2", "", "", `skipped propagating APIs: "apps/v1,v2": kinds need <group>/<version>/ before them`},
		{"", "", "team-a, Team_B", `skipped propagating namespace "Team_B"`},
	}
	for _, tc := range cases {
		_, err := ParseFilter(tc.skipped, tc.allowed, tc.namespaces)
		if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("ParseFilter(%q, %q, %q) = %v; want an error starting %q", tc.skipped, tc.allowed, tc.namespaces, err, tc.want)
		}
	}
}

// TestFilterSelect: the filter narrows what Select picks, through namespaces too, and never
// widens what is built in (Pods stay out under an allow list naming them).
func TestFilterSelect(t *testing.T) {
	all := []placement.ResourceSelector{
		{Group: "", Version: "v1", Kind: "Namespace", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"},
	}
	cases := []struct {
		name                           string
		skipped, allowed, skippedSpace string
		want                           []string
	}{
		{"no filter", "", "", "", []string{"//rbac.authorization.k8s.io/ClusterRole/reader", "/other", "/other//ConfigMap/cfg2", "/work", "/work//ConfigMap/cfg", "/work/apps/Deployment/web"}},
		{"skipped kind, in any case", "v1/configmap", "", "", []string{"//rbac.authorization.k8s.io/ClusterRole/reader", "/other", "/work", "/work/apps/Deployment/web"}},
		{"skipped group", "rbac.authorization.k8s.io;apps", "", "", []string{"/other", "/other//ConfigMap/cfg2", "/work", "/work//ConfigMap/cfg"}},
		{"skipped group version: another version is still placed", "apps/v1beta1", "", "", []string{"//rbac.authorization.k8s.io/ClusterRole/reader", "/other", "/other//ConfigMap/cfg2", "/work", "/work//ConfigMap/cfg", "/work/apps/Deployment/web"}},
		{"skipped namespace: neither it nor its contents", "", "", "work", []string{"//rbac.authorization.k8s.io/ClusterRole/reader", "/other", "/other//ConfigMap/cfg2"}},
		{"allow list", "", "v1/Namespace,Pod;apps/v1", "", []string{"/other", "/work", "/work/apps/Deployment/web"}},
		{"allow list without Namespace places no namespace", "", "apps;rbac.authorization.k8s.io", "", []string{"//rbac.authorization.k8s.io/ClusterRole/reader"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFilter(tc.skipped, tc.allowed, tc.skippedSpace)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Select(all, hub(t))
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, o := range got {
				keys = append(keys, Key(o))
			}
			if diff := cmp.Diff(tc.want, keys); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterEmpty(t *testing.T) {
	for _, tc := range []struct {
		skipped, allowed, namespaces string
		want                         bool
	}{{"", "", "", true}, {" ; ", "", " , ", true}, {"v1/Secret", "", "", false}, {"", "", "a", false}} {
		f, err := ParseFilter(tc.skipped, tc.allowed, tc.namespaces)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Empty(); got != tc.want {
			t.Errorf("ParseFilter(%q, %q, %q).Empty() = %v, want %v", tc.skipped, tc.allowed, tc.namespaces, got, tc.want)
		}
	}
}
