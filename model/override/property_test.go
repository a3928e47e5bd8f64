package override_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
)

// The generators draw from small pools so that overrides often select the manifest, rules
// often match, patches often touch the same fields and sometimes fail, and variables are
// sometimes missing.

var (
	genClusterLabels = []string{"env=prod", "env=test", "region=west", "region=east", "environment=staging"}

	propManifests = []string{
		`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: app}
spec:
  replicas: 2
  template: {spec: {containers: [{name: c, image: nginx:1}]}}
`, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: app, labels: {k: v}}
spec:
  replicas: 1
`, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: app, annotations: {a: b}}
data: {x: "1"}
`, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules: [{verbs: [get, watch, list]}]
`, `
apiVersion: v1
kind: Namespace
metadata: {name: app}
`,
	}

	croSelectors = []override.ResourceSelector{
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"},
		{Version: "v1", Kind: "Namespace", Name: "app"},
		{Version: "v1", Kind: "Namespace", Name: "other"},
	}
	roSelectors = []override.ResourceSelector{
		{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"},
		{Version: "v1", Kind: "ConfigMap", Name: "cfg"},
	}

	propSelectors = []*placement.ClusterSelector{
		nil,
		{},
		{ClusterSelectorTerms: []placement.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}},
		{ClusterSelectorTerms: []placement.ClusterSelectorTerm{
			{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "test"}}},
			{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpExists}}}},
		}},
	}

	propPatches = []override.JSONPatchOverride{
		{Operator: override.JSONPatchOpAdd, Path: "/metadata/labels", Value: override.RawJSON(`{"cluster":"${MEMBER-CLUSTER-NAME}"}`)},
		{Operator: override.JSONPatchOpAdd, Path: "/metadata/labels/new", Value: override.RawJSON(`"v"`)},
		{Operator: override.JSONPatchOpRemove, Path: "/metadata/labels/k"},
		{Operator: override.JSONPatchOpReplace, Path: "/spec/replicas", Value: override.RawJSON(`3`)},
		{Operator: override.JSONPatchOpAdd, Path: "/metadata/annotations", Value: override.RawJSON(`{"env":"${MEMBER-CLUSTER-LABEL-KEY-env}"}`)},
		{Operator: override.JSONPatchOpReplace, Path: "/spec/template/spec/containers/0/image", Value: override.RawJSON(`"nginx:${MEMBER-CLUSTER-LABEL-KEY-region}"`)},
		{Operator: override.JSONPatchOpAdd, Path: "/metadata/annotations/z", Value: override.RawJSON(`"${MEMBER-CLUSTER-NAME}"`)},
		{Operator: override.JSONPatchOpRemove, Path: "/rules/0/verbs/0"},
	}
)

func drawCluster(t *rapid.T, label string) *member.Member {
	name := rapid.SampledFrom([]string{"c1", "member-2"}).Draw(t, label+"Name")
	var kv []string
	for _, l := range genClusterLabels {
		if rapid.Bool().Draw(t, label+" "+l) {
			kv = append(kv, l)
		}
	}
	return cluster(name, kv...)
}

func drawPolicy(t *rapid.T, label string) override.OverridePolicy {
	var p override.OverridePolicy
	for i := range rapid.IntRange(1, 3).Draw(t, label+"Rules") {
		r := override.OverrideRule{ClusterSelector: rapid.SampledFrom(propSelectors).Draw(t, fmt.Sprintf("%s rule%d selector", label, i))}
		if rapid.IntRange(0, 5).Draw(t, fmt.Sprintf("%s rule%d delete", label, i)) == 0 {
			r.OverrideType = override.DeleteOverrideType
		} else {
			r.JSONPatchOverrides = rapid.SliceOfN(rapid.SampledFrom(propPatches), 1, 3).Draw(t, fmt.Sprintf("%s rule%d patches", label, i))
		}
		p.OverrideRules = append(p.OverrideRules, r)
	}
	return p
}

func drawSnapshots(t *rapid.T) ([]override.CROSnapshot, []override.ROSnapshot) {
	var cros []override.CROSnapshot
	for i := range rapid.IntRange(0, 3).Draw(t, "cros") {
		name := fmt.Sprintf("cro-%c", 'a'+i)
		cros = append(cros, override.CROSnapshot{Name: name + "-0", Override: name, Spec: override.ClusterResourceOverrideSpec{
			ClusterResourceSelectors: rapid.SliceOfN(rapid.SampledFrom(croSelectors), 1, 2).Draw(t, name+" selectors"),
			Policy:                   drawPolicy(t, name),
		}})
	}
	var ros []override.ROSnapshot
	for i := range rapid.IntRange(0, 3).Draw(t, "ros") {
		name := fmt.Sprintf("ro-%c", 'a'+i)
		ros = append(ros, override.ROSnapshot{
			Name: name + "-0", Override: name, Namespace: rapid.SampledFrom([]string{"app", "other"}).Draw(t, name+" namespace"),
			Spec: override.ResourceOverrideSpec{
				ResourceSelectors: rapid.SliceOfN(rapid.SampledFrom(roSelectors), 1, 2).Draw(t, name+" selectors"),
				Policy:            drawPolicy(t, name),
			},
		})
	}
	return cros, ros
}

// outcome is a Result with the error reduced to what users see, for comparison.
type outcome struct {
	Manifest map[string]any
	Deleted  bool
	CRO      []string
	RO       []placement.NamespacedName
	Err      string
}

func outcomeOf(r override.Result) outcome {
	o := outcome{Deleted: r.Deleted, CRO: r.AppliedCRO, RO: r.AppliedRO}
	if r.Manifest != nil {
		o.Manifest = r.Manifest.Object
	}
	if r.Err != nil {
		o.Err = r.Err.Error()
	}
	return o
}

func TestApplyProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := manifest(t, rapid.SampledFrom(propManifests).Draw(t, "manifest"))
		before := in.DeepCopy()
		cl := drawCluster(t, "cluster")
		cros, ros := drawSnapshots(t)

		got := override.Apply(in, cl, cros, ros)
		desc := fmt.Sprintf("%s %s on %s %v with %d CROs, %d ROs", in.GetKind(), in.GetName(), cl.Name, cl.Labels, len(cros), len(ros))

		// The input manifest is never modified.
		if diff := cmp.Diff(before.Object, in.Object); diff != "" {
			t.Fatalf("Apply(%s) modified its input (-before +after):\n%s", desc, diff)
		}
		// Exactly one outcome: a manifest, a deletion or an error.
		n := 0
		for _, b := range []bool{got.Manifest != nil, got.Deleted, got.Err != nil} {
			if b {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("Apply(%s) = %+v, want exactly one of Manifest, Deleted, Err", desc, outcomeOf(got))
		}
		// The result does not depend on the order of the override lists.
		shuffled := override.Apply(in, cl, rapid.Permutation(cros).Draw(t, "cro order"), rapid.Permutation(ros).Draw(t, "ro order"))
		if diff := cmp.Diff(outcomeOf(got), outcomeOf(shuffled)); diff != "" {
			t.Fatalf("Apply(%s) depends on the order of the overrides (-first +shuffled):\n%s", desc, diff)
		}
		// What applied is exactly what ApplicableFor reports for this one resource.
		wantCRO, wantRO := override.ApplicableFor(cl, []placement.ResourceIdentifier{override.Identify(in)}, cros, ros)
		if diff := cmp.Diff(wantCRO, got.AppliedCRO, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Apply(%s).AppliedCRO differs from ApplicableFor (-ApplicableFor +Apply):\n%s", desc, diff)
		}
		if diff := cmp.Diff(wantRO, got.AppliedRO, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Apply(%s).AppliedRO differs from ApplicableFor (-ApplicableFor +Apply):\n%s", desc, diff)
		}
		// Nothing applicable means an unchanged copy.
		if len(got.AppliedCRO) == 0 && len(got.AppliedRO) == 0 {
			if diff := cmp.Diff(before.Object, got.Manifest.Object); diff != "" || got.Manifest == in {
				t.Fatalf("Apply(%s) with no applicable override = %v, want a fresh copy of the input", desc, got.Manifest.Object)
			}
		}
		// A compiled Set gives the same answers, cluster after cluster (nothing leaks between
		// clusters through precompiled patches), and a returned manifest is the caller's to edit.
		set := override.NewSet(cros, ros)
		other := drawCluster(t, "other")
		for _, c := range []*member.Member{cl, other, cl} {
			viaSet := set.Apply(in, c)
			direct := override.Apply(in, c, cros, ros)
			if diff := cmp.Diff(outcomeOf(direct), outcomeOf(viaSet)); diff != "" {
				t.Fatalf("Set.Apply(%s on %s) differs from Apply (-Apply +Set.Apply):\n%s", desc, c.Name, diff)
			}
			if viaSet.Manifest != nil {
				unstructured.RemoveNestedField(viaSet.Manifest.Object, "metadata")
			}
		}
		if diff := cmp.Diff(before.Object, in.Object); diff != "" {
			t.Fatalf("editing a result of Apply(%s) reached its input (-before +after):\n%s", desc, diff)
		}
	})
}
