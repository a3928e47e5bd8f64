package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetsim/fleetsim/apis/apitest"
)

// TestClusterProfileCRD: the generated CRD serves ClusterProfile namespaced at
// multicluster.x-k8s.io/v1alpha1 with a status subresource, and refuses a change of
// spec.clusterManager.
func TestClusterProfileCRD(t *testing.T) {
	crds, err := apitest.LoadCRDs("../../../config/crd/bases")
	if err != nil {
		t.Fatal(err)
	}
	crd := crds["ClusterProfile"]
	if crd == nil {
		t.Fatal("no CRD for ClusterProfile in config/crd/bases: run hack/generate.sh")
	}
	type shape struct {
		Group, Plural string
		Scope         apiextensionsv1.ResourceScope
		Versions      []string
		Status        bool
		Immutable     string
	}
	got := shape{Group: crd.Spec.Group, Plural: crd.Spec.Names.Plural, Scope: crd.Spec.Scope}
	for _, v := range crd.Spec.Versions {
		got.Versions = append(got.Versions, v.Name)
		got.Status = v.Subresources != nil && v.Subresources.Status != nil
		if v.Schema != nil {
			cm := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["clusterManager"]
			for _, r := range cm.XValidations {
				got.Immutable = r.Rule
			}
		}
	}
	want := shape{Group: GroupVersion.Group, Plural: "clusterprofiles", Scope: apiextensionsv1.NamespaceScoped,
		Versions: []string{GroupVersion.Version}, Status: true, Immutable: "self == oldSelf"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterProfile CRD (-want +got):\n%s", diff)
	}
}

func TestSchemeRegistersClusterProfile(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ClusterProfile", "ClusterProfileList"} {
		if !s.Recognizes(GroupVersion.WithKind(k)) {
			t.Errorf("the scheme does not know %s", GroupVersion.WithKind(k))
		}
	}
}
