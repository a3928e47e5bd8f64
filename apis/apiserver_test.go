package apis_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/fleetsim/fleetsim/apis/apitest"
)

var crdDir = apitest.CRDDir()

// loadCRDs decodes every file of config/crd/bases strictly, keyed by kind, and checks the
// file and object names.
func loadCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := apitest.LoadCRDs(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	names := map[string]bool{}
	for _, f := range files {
		names[filepath.Base(f)] = true
	}
	for _, crd := range crds {
		if want := crd.Spec.Names.Plural + "." + crd.Spec.Group; crd.Name != want {
			t.Errorf("CRD %s: metadata.name, want %s", crd.Name, want)
		}
		if want := crd.Spec.Group + "_" + crd.Spec.Names.Plural + ".yaml"; !names[want] {
			t.Errorf("CRD %s is not in %s", crd.Name, want)
		}
	}
	return crds
}

func servers(t *testing.T) map[string]*apitest.Server {
	t.Helper()
	s, err := apitest.Servers(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decodeObject(t *testing.T, text string) map[string]any {
	t.Helper()
	obj, err := apitest.DecodeYAML([]byte(text))
	if err != nil {
		t.Fatalf("decoding %q: %v", text, err)
	}
	return obj
}

// TestCRDsPassAPIServerValidation: kube-apiserver would accept every CRD: the schemas are
// structural, and every CEL rule compiles and fits the per-rule and per-CRD cost budgets.
func TestCRDsPassAPIServerValidation(t *testing.T) {
	for kind, crd := range loadCRDs(t) {
		errs, err := apitest.ValidateCRD(crd)
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) > 0 {
			t.Errorf("kube-apiserver would reject the %s CRD:\n%s", kind, errs.ToAggregate())
		}
	}
}

// TestKubeFleetSamplesAccepted: the documentation's manifests (testdata/kubefleet) pass the CRDs'
// validation unchanged: nothing is pruned as unknown and no rule fails. Samples the documentation shows
// under placement.kubernetes-fleet.io/v1 or v1alpha1 (same fields) are submitted as v1beta1.
func TestKubeFleetSamplesAccepted(t *testing.T) {
	srv := servers(t)
	files, err := filepath.Glob(filepath.Join("testdata", "kubefleet", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			obj := decodeObject(t, string(b))
			kind, _ := obj["kind"].(string)
			s := srv[kind]
			if s == nil {
				t.Fatalf("no CRD for kind %q", kind)
			}
			gv, _ := obj["apiVersion"].(string)
			group, _, _ := strings.Cut(gv, "/")
			obj["apiVersion"] = group + "/v1beta1"
			pruned, errs := s.Admit(obj, nil)
			if len(pruned) > 0 {
				t.Errorf("fields pruned as unknown: %v", pruned)
			}
			if len(errs) > 0 {
				t.Errorf("rejected:\n%s", errs.ToAggregate())
			}
		})
	}
}

// TestSamplesCoverEveryKind keeps the sample set honest: every kind has at least one.
func TestSamplesCoverEveryKind(t *testing.T) {
	kinds := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join("testdata", "kubefleet", "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		kinds[fmt.Sprint(decodeObject(t, string(b))["kind"])] = true
	}
	for kind, crd := range loadCRDs(t) {
		switch {
		case kind == "ClusterResourceOverrideSnapshot", kind == "ResourceOverrideSnapshot":
			continue // the documentation shows none; prod/convert's tests build them from its overrides
		case kind == "ClusterResourcePlacementStatus":
			continue // the documentation predates it; TestServedVersionsRoundTrip has a sample, prod/hub writes it
		case crd.Spec.Group == "fleet.fleetsim.io":
			continue // fleetsim's own kinds are not KubeFleet's; prod/engine and prod/fleetapi test them
		case crd.Spec.Group == "multicluster.x-k8s.io":
			continue // the cluster inventory API, not KubeFleet's: prod/hub's ClusterProfile tests write real ones
		}
		if !kinds[kind] {
			t.Errorf("no sample of %s in testdata/kubefleet", kind)
		}
	}
}
