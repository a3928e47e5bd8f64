package override_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
)

// fataler is what helpers need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// cluster builds a member cluster from "key=value" labels.
func cluster(name string, kv ...string) *member.Member {
	m := &member.Member{Name: name, Kind: member.KindCluster, Labels: map[string]string{}}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m.Labels[k] = v
	}
	return m
}

// manifest decodes a YAML manifest the way resource snapshots hold them (whole numbers as
// int64).
func manifest(t fataler, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("manifest YAML: %v", err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(j, &obj); err != nil {
		t.Fatalf("manifest JSON: %v", err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func parseCRO(t testing.TB, y string) *override.ClusterResourceOverride {
	t.Helper()
	o, err := override.ParseClusterResourceOverride([]byte(y))
	if err != nil {
		t.Fatalf("ParseClusterResourceOverride: %v\n%s", err, y)
	}
	return o
}

func parseRO(t testing.TB, y string) *override.ResourceOverride {
	t.Helper()
	o, err := override.ParseResourceOverride([]byte(y))
	if err != nil {
		t.Fatalf("ParseResourceOverride: %v\n%s", err, y)
	}
	return o
}

// croSnapshots parses ClusterResourceOverrides, checks they are valid and takes their first
// snapshots ({name}-0).
func croSnapshots(t testing.TB, ys ...string) []override.CROSnapshot {
	t.Helper()
	var out []override.CROSnapshot
	for _, y := range ys {
		o := parseCRO(t, y)
		if errs := override.ValidateClusterResourceOverride(o); len(errs) > 0 {
			t.Fatalf("ValidateClusterResourceOverride(%s) = %v, want no errors", o.Name, errs)
		}
		out = append(out, *override.DecideSnapshot(o, nil))
	}
	return out
}

func roSnapshots(t testing.TB, ys ...string) []override.ROSnapshot {
	t.Helper()
	var out []override.ROSnapshot
	for _, y := range ys {
		o := parseRO(t, y)
		if errs := override.ValidateResourceOverride(o); len(errs) > 0 {
			t.Fatalf("ValidateResourceOverride(%s/%s) = %v, want no errors", o.Namespace, o.Name, errs)
		}
		out = append(out, *override.DecideSnapshot(o, nil))
	}
	return out
}

// edit returns the YAML manifest y changed by f.
func edit(y string, f func(obj map[string]any)) string {
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		panic(err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(j, &obj); err != nil {
		panic(err)
	}
	f(obj)
	out, err := yaml.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func set(obj map[string]any, value any, path ...string) {
	if err := unstructured.SetNestedField(obj, value, path...); err != nil {
		panic(err)
	}
}

// kvMap turns "key: value" lines into a map (values are YAML scalars).
func kvMap(kv ...string) map[string]any {
	m := map[string]any{}
	for _, s := range kv {
		var one map[string]any
		if err := yaml.Unmarshal([]byte(s), &one); err != nil {
			panic(err)
		}
		for k, v := range one {
			m[k] = v
		}
	}
	return m
}

func addLabels(y string, kv ...string) string {
	return edit(y, func(o map[string]any) { set(o, kvMap(kv...), "metadata", "labels") })
}

func addAnnotations(y string, kv ...string) string {
	return edit(y, func(o map[string]any) { set(o, kvMap(kv...), "metadata", "annotations") })
}

func replaceNamespace(y, ns string) string {
	return edit(y, func(o map[string]any) { set(o, ns, "metadata", "namespace") })
}

func replaceAPIVersion(y, v string) string {
	return edit(y, func(o map[string]any) { set(o, v, "apiVersion") })
}

func replaceReplicas(y, n string) string {
	return edit(y, func(o map[string]any) {
		var v int64
		if err := yaml.Unmarshal([]byte(n), &v); err != nil {
			panic(err)
		}
		set(o, v, "spec", "replicas")
	})
}

func myDeploymentLabelled(clusterName string) string {
	return addLabels(myDeployment, "cluster-name: "+clusterName)
}

func myDeploymentImage(image string) string {
	return edit(myDeployment, func(o map[string]any) {
		cs, _, _ := unstructured.NestedSlice(o, "spec", "template", "spec", "containers")
		cs[0].(map[string]any)["image"] = image
		set(o, cs, "spec", "template", "spec", "containers")
	})
}

func appConfig1Annotated(k, v string) string {
	return addAnnotations(appConfig1, k+": "+v)
}

func guestbookPath(env string) string {
	return edit(guestbookApp, func(o map[string]any) {
		set(o, "content/en/docs/tutorials/ArgoCD/manifests/guestbook/"+env, "spec", "source", "path")
	})
}
