package convert_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/fleetsim/fleetsim/apis/apitest"
	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
)

// TestApplyTypesAreTheAPIs: the conversion keeps an apply strategy type's spelling, so the
// model's types must be the API's. Every applyStrategy (and appliedStrategy) type field of
// the committed CRDs, which are generated from the API's enum marker, lists exactly
// placement.ApplyTypes, in order, and defaults to placement.DefaultApplyType; each type
// survives the conversion both ways.
func TestApplyTypesAreTheAPIs(t *testing.T) {
	crds, err := apitest.LoadCRDs(apitest.CRDDir())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, typ := range placement.ApplyTypes() {
		want = append(want, string(typ))
	}
	found := map[string]int{}
	for kind, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			walkSchema(*v.Schema.OpenAPIV3Schema, "", func(path string, s apiextensionsv1.JSONSchemaProps) {
				if name := path[strings.LastIndex(path, ".")+1:]; name != "applyStrategy" && name != "appliedStrategy" {
					return
				}
				typ, ok := s.Properties["type"]
				if !ok {
					return
				}
				found[kind]++
				var got []string
				for _, e := range typ.Enum {
					var s string
					if err := json.Unmarshal(e.Raw, &s); err != nil {
						t.Fatalf("%s %s%s.type: enum value %s: %v", kind, v.Name, path, e.Raw, err)
					}
					got = append(got, s)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %s%s.type: the API's enum is %v, placement.ApplyTypes() is %v", kind, v.Name, path, got, want)
				}
				var def string
				if typ.Default != nil {
					_ = json.Unmarshal(typ.Default.Raw, &def)
				}
				if def != string(placement.DefaultApplyType) {
					t.Errorf("%s %s%s.type: the API's default is %q, placement.DefaultApplyType is %q", kind, v.Name, path, def, placement.DefaultApplyType)
				}
			})
		}
	}
	for _, kind := range []string{"ClusterResourcePlacement", "ClusterResourceBinding", "Work", "ClusterStagedUpdateRun"} {
		if found[kind] == 0 {
			t.Errorf("no apply strategy type found in the CRD of %s", kind)
		}
	}
	for _, typ := range append(placement.ApplyTypes(), "") {
		m := convert.ApplyStrategyToModel(&v1beta1.ApplyStrategy{Type: v1beta1.ApplyStrategyType(typ)})
		if m.Type != typ {
			t.Errorf("ApplyStrategyToModel(type %q) has type %q", typ, m.Type)
		}
		if back := convert.ApplyStrategyFromModel(m); string(back.Type) != string(typ) {
			t.Errorf("ApplyStrategyFromModel(type %q) has type %q", typ, back.Type)
		}
	}
}

// walkSchema calls f on s and every schema under it, with its path of property names.
func walkSchema(s apiextensionsv1.JSONSchemaProps, path string, f func(string, apiextensionsv1.JSONSchemaProps)) {
	f(path, s)
	for name, p := range s.Properties {
		walkSchema(p, path+"."+name, f)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkSchema(*s.Items.Schema, path+"[]", f)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(*s.AdditionalProperties.Schema, path+"{}", f)
	}
}
