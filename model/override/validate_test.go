package override_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
)

// fieldErr is what a case expects of one validation error.
type fieldErr struct {
	Type  field.ErrorType
	Field string
	// Detail, when set, must appear in the error's detail.
	Detail string
}

func summarize(errs field.ErrorList) []fieldErr {
	var out []fieldErr
	for _, e := range errs {
		out = append(out, fieldErr{Type: e.Type, Field: e.Field, Detail: e.Detail})
	}
	return out
}

// cmpErrs compares errors by type and field, and by detail where the case gives one.
func cmpErrs(want []fieldErr, got field.ErrorList) string {
	g := summarize(got)
	if len(g) == len(want) {
		for i := range want {
			if want[i].Detail == "" || strings.Contains(g[i].Detail, want[i].Detail) {
				g[i].Detail = want[i].Detail
			}
		}
	}
	return cmp.Diff(want, g, cmpopts.EquateEmpty())
}

func validCRO() *override.ClusterResourceOverride {
	return &override.ClusterResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Name: "cro"},
		Spec: override.ClusterResourceOverrideSpec{
			ClusterResourceSelectors: []override.ResourceSelector{{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "secret-reader"}},
			Policy: override.OverridePolicy{OverrideRules: []override.OverrideRule{{
				ClusterSelector:    &placement.ClusterSelector{ClusterSelectorTerms: []placement.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}},
				JSONPatchOverrides: []override.JSONPatchOverride{{Operator: override.JSONPatchOpAdd, Path: "/metadata/labels/a", Value: override.RawJSON(`"b"`)}},
			}}},
		},
	}
}

func validRO() *override.ResourceOverride {
	c := validCRO()
	return &override.ResourceOverride{
		ObjectMeta: metav1.ObjectMeta{Name: "ro", Namespace: "app"},
		Spec: override.ResourceOverrideSpec{
			ResourceSelectors: []override.ResourceSelector{{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"}},
			Policy:            c.Spec.Policy,
		},
	}
}

func selectors(n int) []override.ResourceSelector {
	var s []override.ResourceSelector
	for i := range n {
		s = append(s, override.ResourceSelector{Group: "g", Version: "v1", Kind: "K", Name: fmt.Sprintf("n%d", i)})
	}
	return s
}

func rules(n int) []override.OverrideRule {
	var r []override.OverrideRule
	for range n {
		r = append(r, override.OverrideRule{ClusterSelector: &placement.ClusterSelector{}, OverrideType: override.DeleteOverrideType})
	}
	return r
}

func patches(n int) []override.JSONPatchOverride {
	var p []override.JSONPatchOverride
	for i := range n {
		p = append(p, override.JSONPatchOverride{Operator: override.JSONPatchOpRemove, Path: fmt.Sprintf("/spec/x%d", i)})
	}
	return p
}

func rule0(o *override.ClusterResourceOverride) *override.OverrideRule {
	return &o.Spec.Policy.OverrideRules[0]
}

func patch0(o *override.ClusterResourceOverride) *override.JSONPatchOverride {
	return &rule0(o).JSONPatchOverrides[0]
}

func term0(o *override.ClusterResourceOverride) *placement.ClusterSelectorTerm {
	return &rule0(o).ClusterSelector.ClusterSelectorTerms[0]
}

const (
	rulesPath   = "spec.policy.overrideRules"
	rule0Path   = rulesPath + "[0]"
	patchesPath = rule0Path + ".jsonPatchOverrides"
	patch0Path  = patchesPath + "[0]"
	term0Path   = rule0Path + ".clusterSelector.clusterSelectorTerms[0]"
)

func TestValidateClusterResourceOverride(t *testing.T) {
	cases := []struct {
		name   string
		change func(o *override.ClusterResourceOverride)
		want   []fieldErr
	}{
		{name: "valid", change: func(*override.ClusterResourceOverride) {}},
		{name: "name required", change: func(o *override.ClusterResourceOverride) { o.Name = "" },
			want: []fieldErr{{field.ErrorTypeRequired, "metadata.name", ""}}},
		{name: "placement reference needs a name", change: func(o *override.ClusterResourceOverride) { o.Spec.Placement = &override.PlacementRef{} },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.placement.name", ""}}},
		{name: "a named placement reference is fine", change: func(o *override.ClusterResourceOverride) { o.Spec.Placement = &override.PlacementRef{Name: "crp"} }},
		{name: "no selectors", change: func(o *override.ClusterResourceOverride) { o.Spec.ClusterResourceSelectors = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.clusterResourceSelectors", "between 1 and 20"}}},
		{name: "20 selectors", change: func(o *override.ClusterResourceOverride) { o.Spec.ClusterResourceSelectors = selectors(20) }},
		{name: "21 selectors", change: func(o *override.ClusterResourceOverride) { o.Spec.ClusterResourceSelectors = selectors(21) },
			want: []fieldErr{{field.ErrorTypeTooMany, "spec.clusterResourceSelectors", ""}}},
		{name: "selector needs version, kind and name", change: func(o *override.ClusterResourceOverride) {
			o.Spec.ClusterResourceSelectors = []override.ResourceSelector{{Group: "g"}}
		}, want: []fieldErr{
			{field.ErrorTypeRequired, "spec.clusterResourceSelectors[0].version", ""},
			{field.ErrorTypeRequired, "spec.clusterResourceSelectors[0].kind", ""},
			{field.ErrorTypeRequired, "spec.clusterResourceSelectors[0].name", "only be selected by name"},
		}},
		{name: "duplicate selector", change: func(o *override.ClusterResourceOverride) {
			o.Spec.ClusterResourceSelectors = append(o.Spec.ClusterResourceSelectors, o.Spec.ClusterResourceSelectors[0])
		}, want: []fieldErr{{field.ErrorTypeDuplicate, "spec.clusterResourceSelectors[1]", ""}}},
		{name: "a CRO may select a Namespace", change: func(o *override.ClusterResourceOverride) {
			o.Spec.ClusterResourceSelectors = []override.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "app"}}
		}},
		{name: "no rules", change: func(o *override.ClusterResourceOverride) { o.Spec.Policy.OverrideRules = nil },
			want: []fieldErr{{field.ErrorTypeRequired, rulesPath, "between 1 and 20"}}},
		{name: "20 rules", change: func(o *override.ClusterResourceOverride) { o.Spec.Policy.OverrideRules = rules(20) }},
		{name: "21 rules", change: func(o *override.ClusterResourceOverride) { o.Spec.Policy.OverrideRules = rules(21) },
			want: []fieldErr{{field.ErrorTypeTooMany, rulesPath, ""}}},
		{name: "unknown override type", change: func(o *override.ClusterResourceOverride) { rule0(o).OverrideType = "Merge" },
			want: []fieldErr{{field.ErrorTypeNotSupported, rule0Path + ".overrideType", ""}}},
		{name: "explicit JSONPatch type", change: func(o *override.ClusterResourceOverride) { rule0(o).OverrideType = override.JSONPatchOverrideType }},
		{name: "JSONPatch without patches", change: func(o *override.ClusterResourceOverride) { rule0(o).JSONPatchOverrides = nil },
			want: []fieldErr{{field.ErrorTypeRequired, patchesPath, "with overrideType JSONPatch"}}},
		{name: "20 patches", change: func(o *override.ClusterResourceOverride) { rule0(o).JSONPatchOverrides = patches(20) }},
		{name: "21 patches", change: func(o *override.ClusterResourceOverride) { rule0(o).JSONPatchOverrides = patches(21) },
			want: []fieldErr{{field.ErrorTypeTooMany, patchesPath, ""}}},
		{name: "Delete with patches", change: func(o *override.ClusterResourceOverride) { rule0(o).OverrideType = override.DeleteOverrideType },
			want: []fieldErr{{field.ErrorTypeForbidden, patchesPath, "only allowed with overrideType JSONPatch"}}},
		{name: "Delete without patches", change: func(o *override.ClusterResourceOverride) {
			rule0(o).OverrideType, rule0(o).JSONPatchOverrides = override.DeleteOverrideType, nil
		}},
		{name: "unsupported op", change: func(o *override.ClusterResourceOverride) { patch0(o).Operator = "move" },
			want: []fieldErr{{field.ErrorTypeNotSupported, patch0Path + ".op", ""}}},
		{name: "remove with a value", change: func(o *override.ClusterResourceOverride) { patch0(o).Operator = override.JSONPatchOpRemove },
			want: []fieldErr{{field.ErrorTypeInvalid, patch0Path + ".value", "must be empty when op is remove"}}},
		{name: "remove without a value", change: func(o *override.ClusterResourceOverride) {
			patch0(o).Operator, patch0(o).Value = override.JSONPatchOpRemove, override.JSON{}
		}},
		{name: "add without a value", change: func(o *override.ClusterResourceOverride) { patch0(o).Value = override.JSON{} },
			want: []fieldErr{{field.ErrorTypeRequired, patch0Path + ".value", "op add needs a value"}}},
		{name: "replace without a value", change: func(o *override.ClusterResourceOverride) {
			patch0(o).Operator, patch0(o).Value = override.JSONPatchOpReplace, override.JSON{}
		}, want: []fieldErr{{field.ErrorTypeRequired, patch0Path + ".value", "op replace needs a value"}}},
		{name: "value that is not JSON", change: func(o *override.ClusterResourceOverride) { patch0(o).Value = override.RawJSON(`{oops`) },
			want: []fieldErr{{field.ErrorTypeInvalid, patch0Path + ".value", "must be a JSON value"}}},
		{name: "propertySelector is not supported", change: func(o *override.ClusterResourceOverride) {
			term0(o).PropertySelector = &placement.PropertySelector{}
		}, want: []fieldErr{{field.ErrorTypeForbidden, term0Path + ".propertySelector", "only labelSelector"}}},
		{name: "propertySorter is not supported", change: func(o *override.ClusterResourceOverride) {
			term0(o).PropertySorter = &placement.PropertySorter{Name: "p", SortOrder: placement.Ascending}
		}, want: []fieldErr{{field.ErrorTypeForbidden, term0Path + ".propertySorter", "only labelSelector"}}},
		{name: "invalid labelSelector", change: func(o *override.ClusterResourceOverride) {
			term0(o).LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}
		}, want: []fieldErr{{field.ErrorTypeInvalid, term0Path + ".labelSelector", ""}}},
		{name: "11 terms", change: func(o *override.ClusterResourceOverride) {
			rule0(o).ClusterSelector.ClusterSelectorTerms = make([]placement.ClusterSelectorTerm, 11)
		}, want: []fieldErr{{field.ErrorTypeTooMany, rule0Path + ".clusterSelector.clusterSelectorTerms", ""}}},
		{name: "nil and empty cluster selectors are both valid", change: func(o *override.ClusterResourceOverride) {
			o.Spec.Policy.OverrideRules = append(o.Spec.Policy.OverrideRules, override.OverrideRule{OverrideType: override.DeleteOverrideType},
				override.OverrideRule{ClusterSelector: &placement.ClusterSelector{ClusterSelectorTerms: []placement.ClusterSelectorTerm{}}, OverrideType: override.DeleteOverrideType})
		}},
	}
	for _, c := range cases {
		o := validCRO()
		c.change(o)
		if diff := cmpErrs(c.want, override.ValidateClusterResourceOverride(o)); diff != "" {
			t.Errorf("ValidateClusterResourceOverride(%s) mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestValidatePath covers every path rule of OVR-JSONPATCH [Using the ClusterResourceOverride API › JSON Patch Override] with the doc's
// examples of valid paths.
func TestValidatePath(t *testing.T) {
	cases := []struct {
		path   string
		detail string // "" = valid
	}{
		{"/metadata/labels/new-label", ""},
		{"/metadata/annotations/new-annotation", ""},
		{"/spec/template/spec/containers/0/resources/limits/cpu", ""},
		{"/spec/template/spec/containers/0/resources/requests/memory", ""},
		{"/metadata/labels", ""},
		{"/metadata/annotations", ""},
		{"/metadata/labels/fleet.azure.com~1location", ""},
		{"/rules/0/verbs/2", ""},
		{"/spec/statusful", ""},
		{"", "must not be empty"},
		{"metadata/labels", "must start with /"},
		{"/", "must not contain empty segments"},
		{"///", "must not contain empty segments"},
		{"/spec//replicas", "must not contain empty segments"},
		{"/spec/", "must not contain empty segments"},
		{"/kind", "TypeMeta"},
		{"/apiVersion", "TypeMeta"},
		{"/metadata", "other than labels and annotations"},
		{"/metadata/name", "other than labels and annotations"},
		{"/metadata/namespace", "other than labels and annotations"},
		{"/metadata/finalizers/0", "other than labels and annotations"},
		{"/metadata/labelsx", "other than labels and annotations"},
		{"/status", "under status"},
		{"/status/conditions/0", "under status"},
	}
	for _, c := range cases {
		o := validCRO()
		patch0(o).Path = c.path
		var want []fieldErr
		if c.detail != "" {
			want = []fieldErr{{field.ErrorTypeInvalid, patch0Path + ".path", c.detail}}
		}
		if diff := cmpErrs(want, override.ValidateClusterResourceOverride(o)); diff != "" {
			t.Errorf("ValidateClusterResourceOverride(path %q) mismatch (-want +got):\n%s", c.path, diff)
		}
	}
}

func TestValidateResourceOverride(t *testing.T) {
	cases := []struct {
		name   string
		change func(o *override.ResourceOverride)
		want   []fieldErr
	}{
		{name: "valid", change: func(*override.ResourceOverride) {}},
		{name: "namespace required", change: func(o *override.ResourceOverride) { o.Namespace = "" },
			want: []fieldErr{{field.ErrorTypeRequired, "metadata.namespace", ""}}},
		{name: "name required", change: func(o *override.ResourceOverride) { o.Name = "" },
			want: []fieldErr{{field.ErrorTypeRequired, "metadata.name", ""}}},
		{name: "no selectors", change: func(o *override.ResourceOverride) { o.Spec.ResourceSelectors = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.resourceSelectors", ""}}},
		{name: "21 selectors", change: func(o *override.ResourceOverride) { o.Spec.ResourceSelectors = selectors(21) },
			want: []fieldErr{{field.ErrorTypeTooMany, "spec.resourceSelectors", ""}}},
		{name: "an RO cannot select a Namespace", change: func(o *override.ResourceOverride) {
			o.Spec.ResourceSelectors = []override.ResourceSelector{{Version: "v1", Kind: "Namespace", Name: "app"}}
		}, want: []fieldErr{{field.ErrorTypeForbidden, "spec.resourceSelectors[0].kind", "ClusterResourceOverride"}}},
		{name: "policy errors are reported under spec.policy", change: func(o *override.ResourceOverride) { o.Spec.Policy.OverrideRules = nil },
			want: []fieldErr{{field.ErrorTypeRequired, rulesPath, ""}}},
		{name: "placement reference needs a name", change: func(o *override.ResourceOverride) { o.Spec.Placement = &override.PlacementRef{} },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.placement.name", ""}}},
	}
	for _, c := range cases {
		o := validRO()
		c.change(o)
		if diff := cmpErrs(c.want, override.ValidateResourceOverride(o)); diff != "" {
			t.Errorf("ValidateResourceOverride(%s) mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestSeedExamplesValidate checks that every override manifest of the documentation decodes and is
// valid, and that the documentation's v1alpha1 apiVersion is read as v1beta1.
func TestSeedExamplesValidate(t *testing.T) {
	for _, y := range []string{croOverrideLabels, croRemoveVerb, croDelete, croMultiplePatches, cro1Namespace, tsgCRO, tsgCROFixed} {
		o := parseCRO(t, y)
		if o.APIVersion != override.GroupVersion {
			t.Errorf("ParseClusterResourceOverride(%s).APIVersion = %q, want %q", o.Name, o.APIVersion, override.GroupVersion)
		}
		if errs := override.ValidateClusterResourceOverride(o); len(errs) > 0 {
			t.Errorf("ValidateClusterResourceOverride(%s) = %v, want none", o.Name, errs)
		}
	}
	for _, y := range []string{roOverrideLabels, roOverrideImage, roDelete, roMultipleRules, ro1ConfigMap, migrationRO, guestbookRO} {
		o := parseRO(t, y)
		if errs := override.ValidateResourceOverride(o); len(errs) > 0 {
			t.Errorf("ValidateResourceOverride(%s/%s) = %v, want none", o.Namespace, o.Name, errs)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, c := range []struct{ name, y, want string }{
		{"wrong group", "apiVersion: placement.kubernetes-fleet.io/v2\nkind: ClusterResourceOverride\n", "apiVersion"},
		{"wrong kind", "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceOverride\n", "kind"},
		{"not YAML", "{", "yaml"},
	} {
		_, err := override.ParseClusterResourceOverride([]byte(c.y))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseClusterResourceOverride(%s) = %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
}

func namedCRO(name string, sels ...override.ResourceSelector) *override.ClusterResourceOverride {
	o := validCRO()
	o.Name = name
	o.Spec.ClusterResourceSelectors = sels
	return o
}

func namedRO(ns, name string, sels ...override.ResourceSelector) *override.ResourceOverride {
	o := validRO()
	o.Namespace, o.Name = ns, name
	o.Spec.ResourceSelectors = sels
	return o
}

func TestValidateSet(t *testing.T) {
	role := override.ResourceSelector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "secret-reader"}
	roleBeta := role
	roleBeta.Version = "v1beta1"
	ns := override.ResourceSelector{Version: "v1", Kind: "Namespace", Name: "app"}
	deploy := override.ResourceSelector{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web"}
	cm := override.ResourceSelector{Version: "v1", Kind: "ConfigMap", Name: "cfg"}

	manyCROs := func(n int) []*override.ClusterResourceOverride {
		var out []*override.ClusterResourceOverride
		for i := range n {
			out = append(out, namedCRO(fmt.Sprintf("cro-%03d", i), override.ResourceSelector{Version: "v1", Kind: "K", Name: fmt.Sprintf("r%d", i)}))
		}
		return out
	}
	manyROs := func(n int) []*override.ResourceOverride {
		var out []*override.ResourceOverride
		for i := range n {
			out = append(out, namedRO("app", fmt.Sprintf("ro-%03d", i), override.ResourceSelector{Version: "v1", Kind: "K", Name: fmt.Sprintf("r%d", i)}))
		}
		return out
	}

	cases := []struct {
		name string
		cros []*override.ClusterResourceOverride
		ros  []*override.ResourceOverride
		want []fieldErr
	}{
		{name: "empty fleet"},
		{name: "100 CROs and 100 ROs", cros: manyCROs(100), ros: manyROs(100)},
		{name: "101 CROs", cros: manyCROs(101),
			want: []fieldErr{{field.ErrorTypeTooMany, "clusterResourceOverrides", ""}}},
		{name: "101 ROs", ros: manyROs(101),
			want: []fieldErr{{field.ErrorTypeTooMany, "resourceOverrides", ""}}},
		{name: "two CROs selecting one ClusterRole: the later one is refused, naming both",
			cros: []*override.ClusterResourceOverride{namedCRO("cro-a", role), namedCRO("cro-b", ns, role)},
			want: []fieldErr{{field.ErrorTypeInvalid, "clusterResourceOverrides[cro-b].spec.clusterResourceSelectors[1]",
				`ClusterResourceOverride "cro-b" cannot select this resource: it is already selected by ClusterResourceOverride "cro-a"`}}},
		{name: "order is precedence: the override given last is refused",
			cros: []*override.ClusterResourceOverride{namedCRO("cro-b", role), namedCRO("cro-a", role)},
			want: []fieldErr{{field.ErrorTypeInvalid, "clusterResourceOverrides[cro-a].spec.clusterResourceSelectors[0]",
				`ClusterResourceOverride "cro-a" cannot select this resource: it is already selected by ClusterResourceOverride "cro-b"`}}},
		{name: "the same resource through another version conflicts",
			cros: []*override.ClusterResourceOverride{namedCRO("cro-a", role), namedCRO("cro-b", roleBeta)},
			want: []fieldErr{{field.ErrorTypeInvalid, "clusterResourceOverrides[cro-b].spec.clusterResourceSelectors[0]", `"cro-a"`}}},
		{name: "two ROs in one namespace selecting one Deployment",
			ros: []*override.ResourceOverride{namedRO("app", "ro-a", deploy), namedRO("app", "ro-b", deploy)},
			want: []fieldErr{{field.ErrorTypeInvalid, "resourceOverrides[app/ro-b].spec.resourceSelectors[0]",
				"ResourceOverride app/ro-b cannot select this resource: it is already selected by ResourceOverride app/ro-a"}}},
		{name: "ROs in different namespaces select different resources",
			ros: []*override.ResourceOverride{namedRO("app", "ro-a", deploy), namedRO("web", "ro-b", deploy)}},
		{name: "one CRO (through the namespace) and one RO on the same ConfigMap are allowed",
			cros: []*override.ClusterResourceOverride{namedCRO("cro-a", ns)},
			ros:  []*override.ResourceOverride{namedRO("app", "ro-a", cm)}},
	}
	for _, c := range cases {
		if diff := cmpErrs(c.want, override.ValidateSet(c.cros, c.ros)); diff != "" {
			t.Errorf("ValidateSet(%s) mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestRefuseOverride: only what the newcomer breaks is reported, never what the existing
// overrides break among themselves.
func TestRefuseOverride(t *testing.T) {
	role := override.ResourceSelector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "reader"}
	other := override.ResourceSelector{Version: "v1", Kind: "Namespace", Name: "app"}
	var hundred []*override.ClusterResourceOverride
	for i := range 100 {
		hundred = append(hundred, namedCRO(fmt.Sprintf("cro-%03d", i), override.ResourceSelector{Version: "v1", Kind: "K", Name: fmt.Sprintf("r%d", i)}))
	}
	cases := []struct {
		name   string
		o      *override.ClusterResourceOverride
		others []*override.ClusterResourceOverride
		want   string
	}{
		{"alone", namedCRO("a", role), nil, ""},
		{"selects what an earlier one selects", namedCRO("b", role), []*override.ClusterResourceOverride{namedCRO("a", role)},
			`clusterResourceOverrides[b].spec.clusterResourceSelectors[0]: Invalid value: "rbac.authorization.k8s.io/v1, Kind=ClusterRole reader": ClusterResourceOverride "b" cannot select this resource: it is already selected by ClusterResourceOverride "a", and a resource can be selected by at most one ClusterResourceOverride`},
		{"the earlier ones conflict among themselves, not with it", namedCRO("c", other), []*override.ClusterResourceOverride{namedCRO("a", role), namedCRO("b", role)}, ""},
		{"a 101st", namedCRO("z", other), hundred, "clusterResourceOverrides: Too many: 101: must have at most 100 items"},
	}
	for _, tc := range cases {
		got := ""
		if errs := override.RefuseClusterResourceOverride(tc.o, tc.others); len(errs) > 0 {
			got = errs.ToAggregate().Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if errs := override.RefuseResourceOverride(namedRO("app", "b", role), []*override.ResourceOverride{namedRO("app", "a", role), namedRO("other", "c", role)}); len(errs) != 1 ||
		errs[0].Field != "resourceOverrides[app/b].spec.resourceSelectors[0]" {
		t.Errorf("RefuseResourceOverride = %v; want one error on resourceOverrides[app/b].spec.resourceSelectors[0]", errs)
	}
}
