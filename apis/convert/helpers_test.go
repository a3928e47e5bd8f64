package convert_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/apis/apitest"
)

// sampleDir holds the documentation's KubeFleet manifests (see each file's header for its source).
var sampleDir = filepath.Join("..", "testdata", "kubefleet")

func readSample(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sampleDir, file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// load decodes a sample strictly (an unknown field fails: the manifest must decode
// unchanged) into an API object. The documentation shows some kinds under placement.kubernetes-fleet.io
// v1 or v1alpha1 with the same fields; they are read as v1beta1.
func load(t *testing.T, file string, into runtime.Object) {
	t.Helper()
	if err := yaml.UnmarshalStrict(readSample(t, file), into); err != nil {
		t.Fatalf("%s does not decode strictly into %T: %v", file, into, err)
	}
	gvk := into.GetObjectKind().GroupVersionKind()
	gvk.Version = "v1beta1"
	into.GetObjectKind().SetGroupVersionKind(gvk)
}

// loadModel decodes a sample into a model type directly: the model's types carry KubeFleet's
// JSON names, so this is the model's own reading of the manifest.
func loadModel(t *testing.T, file string, into any) {
	t.Helper()
	b := readSample(t, file)
	b = bytes.Replace(b, []byte("placement.kubernetes-fleet.io/v1alpha1\n"), []byte("placement.kubernetes-fleet.io/v1beta1\n"), 1)
	b = bytes.Replace(b, []byte("placement.kubernetes-fleet.io/v1\n"), []byte("placement.kubernetes-fleet.io/v1beta1\n"), 1)
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s does not decode into %T: %v", file, into, err)
	}
}

// exact compares API objects field for field: quantities by value and spelling, embedded
// manifests byte for byte.
var exact = cmp.Options{
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 && a.String() == b.String() }),
	cmp.Comparer(func(a, b runtime.RawExtension) bool { return bytes.Equal(a.Raw, b.Raw) }),
}

// sameMeaning compares embedded manifests as JSON values, whatever their key order.
var sameMeaning = cmp.Options{
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
	cmp.Comparer(func(a, b runtime.RawExtension) bool {
		var x, y any
		return json.Unmarshal(a.Raw, &x) == nil && json.Unmarshal(b.Raw, &y) == nil && cmp.Equal(x, y)
	}),
}

func diff(t *testing.T, what string, want, got any, opts ...cmp.Option) {
	t.Helper()
	if d := cmp.Diff(want, got, opts...); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

var (
	serversOnce sync.Once
	serversMap  map[string]*apitest.Server
	serversErr  error
)

// admit checks that the API server, with the committed CRDs, accepts obj (an update of old
// when old is not nil) unchanged: nothing pruned, no validation error.
func admit(t *testing.T, obj, old runtime.Object) {
	t.Helper()
	serversOnce.Do(func() { serversMap, serversErr = apitest.Servers(apitest.CRDDir()) })
	if serversErr != nil {
		t.Fatal(serversErr)
	}
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	s := serversMap[kind]
	if s == nil {
		t.Fatalf("no CRD for kind %q", kind)
	}
	pruned, errs, err := s.AdmitObject(obj, old)
	if err != nil {
		t.Fatal(err)
	}
	if len(pruned) > 0 {
		t.Errorf("the API server prunes %v from the %s", pruned, kind)
	}
	if len(errs) > 0 {
		t.Errorf("the API server rejects the %s:\n%s", kind, strings.ReplaceAll(errs.ToAggregate().Error(), ", ", ",\n"))
	}
}
