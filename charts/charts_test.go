package charts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/fleetsim/fleetsim/prod/testenv"
)

// The release namespace the charts are rendered into: config/'s.
const namespace = "fleet-system"

func load(t *testing.T, name string) *chart.Chart {
	t.Helper()
	c, err := loader.Load(name)
	if err != nil {
		t.Fatalf("load chart %s: %v", name, err)
	}
	return c
}

// decode splits a multi-document YAML stream into objects, skipping empty documents.
func decode(t *testing.T, where string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("%s: %v", where, err)
		}
		if len(m) > 0 {
			out = append(out, normal(t, m))
		}
	}
}

// render renders a chart's templates with values over its defaults, as `helm template
// --namespace fleet-system` does, sorted by kind and name.
func render(t *testing.T, c *chart.Chart, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: "fleet", Namespace: namespace, IsInstall: true}, nil)
	if err != nil {
		t.Fatalf("values of %s: %v", c.Name(), err)
	}
	files, err := engine.Render(c, vals)
	if err != nil {
		t.Fatalf("render %s: %v", c.Name(), err)
	}
	var out []*unstructured.Unstructured
	for name, body := range files {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasSuffix(name, ".tpl") {
			continue
		}
		out = append(out, decode(t, name, []byte(body))...)
	}
	return sorted(out)
}

// kustomize builds a config/ overlay, the Namespace object left out (a chart installs
// into its release's namespace, `helm install --create-namespace`) and the CRDs too
// (a chart's crds/ directory, compared file by file).
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	rm, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join("..", "config", dir))
	if err != nil {
		t.Fatalf("kustomize build config/%s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		u := normal(t, m)
		if u.GetKind() == "Namespace" || u.GetKind() == "CustomResourceDefinition" {
			continue
		}
		out = append(out, u)
	}
	return sorted(out)
}

// normal is an object as the API machinery decodes it (integers int64, whichever YAML
// reader produced m), so the chart's and kustomize's objects compare field for field.
func normal(t *testing.T, m map[string]any) *unstructured.Unstructured {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return u
}

func sorted(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	sort.Slice(objs, func(i, j int) bool {
		a, b := objs[i].GetKind()+"/"+objs[i].GetName(), objs[j].GetKind()+"/"+objs[j].GetName()
		return a < b
	})
	return objs
}

func objects(objs []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out
}

// TestChartsRenderWhatConfigApplies: with default values, each chart renders exactly the
// objects of its config/ overlay (the hub: config/fleet-api; the member: config/member),
// field for field; with the ServiceMonitor on, the hub's is config/prometheus's; and the
// charts' crds/ are config/'s CRD files byte for byte (`make charts` copies them).
func TestChartsRenderWhatConfigApplies(t *testing.T) {
	for _, tc := range []struct {
		chart, overlay, crds string
	}{
		{"fleet-hub", "fleet-api", "crd/bases"},
		{"fleet-member", "member", "member/crd"},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			c := load(t, tc.chart)
			got, want := render(t, c, nil), kustomize(t, tc.overlay)
			if diff := cmp.Diff(objects(want), objects(got)); diff != "" {
				t.Errorf("chart %s with default values against config/%s (-config +chart):\n%s", tc.chart, tc.overlay, diff)
			}
			cfg, err := filepath.Glob(filepath.Join("..", "config", tc.crds, "*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var cfgNames, chartNames []string
			for _, f := range cfg {
				cfgNames = append(cfgNames, filepath.Base(f))
			}
			for _, f := range c.CRDObjects() {
				chartNames = append(chartNames, filepath.Base(f.Filename))
				b, err := os.ReadFile(filepath.Join("..", "config", tc.crds, filepath.Base(f.Filename)))
				if err != nil {
					t.Errorf("chart CRD %s is not in config/%s (run make charts): %v", f.Filename, tc.crds, err)
					continue
				}
				if !bytes.Equal(b, f.File.Data) {
					t.Errorf("chart CRD %s differs from config/%s's (run make charts)", f.Filename, tc.crds)
				}
			}
			slices.Sort(chartNames)
			if diff := cmp.Diff(cfgNames, chartNames); diff != "" {
				t.Errorf("CRD files of config/%s and chart %s (-config +chart; run make charts):\n%s", tc.crds, tc.chart, diff)
			}
		})
	}

	hub := load(t, "fleet-hub")
	var monitors []*unstructured.Unstructured
	for _, o := range render(t, hub, map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}}) {
		if o.GetKind() == "ServiceMonitor" {
			monitors = append(monitors, o)
		}
	}
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join("..", "config", "prometheus"))
	if err != nil {
		t.Fatal(err)
	}
	var want []map[string]any
	for _, r := range rm.Resources() {
		m, _ := r.Map()
		want = append(want, normal(t, m).Object)
	}
	if diff := cmp.Diff(want, objects(monitors)); diff != "" {
		t.Errorf("the hub chart's ServiceMonitor against config/prometheus (-config +chart):\n%s", diff)
	}
}

// TestChartValuesReachTheObjects: what the values parameterise reaches the rendered
// objects, and what they switch off is not rendered.
func TestChartValuesReachTheObjects(t *testing.T) {
	find := func(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == kind && o.GetName() == name {
				return o
			}
		}
		return nil
	}
	hub := load(t, "fleet-hub")
	objs := render(t, hub, map[string]any{
		"image":               map[string]any{"repository": "registry.example/fleet", "tag": "v1.2.3"},
		"replicas":            3,
		"podDisruptionBudget": map[string]any{"enabled": false},
		"metrics":             map[string]any{"secure": false, "port": 9090},
		"fleetAPI": map[string]any{"tlsSecret": "api-certs", "certManager": map[string]any{"enabled": true,
			"issuerRef": map[string]any{"name": "corp-ca", "kind": "ClusterIssuer"}}},
		"extraArgs": []any{"--check-invariants"},
	})
	d := find(objs, "Deployment", "fleet-hub")
	if d == nil {
		t.Fatal("no Deployment fleet-hub")
	}
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	ctr := containers[0].(map[string]any)
	var args []string
	for _, a := range ctr["args"].([]any) {
		args = append(args, a.(string))
	}
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	secret, _, _ := unstructured.NestedString(vols[0].(map[string]any), "secret", "secretName")
	cert := find(objs, "Certificate", "fleet-api")
	var certSecret, issuer string
	if cert != nil {
		certSecret, _, _ = unstructured.NestedString(cert.Object, "spec", "secretName")
		issuer, _, _ = unstructured.NestedString(cert.Object, "spec", "issuerRef", "kind")
	}
	type summary struct {
		Image, Secret, CertSecret, Issuer string
		Replicas                          int64
		PDB                               bool
		Args                              []string
	}
	got := summary{Image: ctr["image"].(string), Secret: secret, CertSecret: certSecret, Issuer: issuer, Replicas: replicas,
		PDB: find(objs, "PodDisruptionBudget", "fleet-hub") != nil, Args: args}
	want := summary{Image: "registry.example/fleet:v1.2.3", Secret: "api-certs", CertSecret: "api-certs", Issuer: "ClusterIssuer", Replicas: 3,
		Args: []string{"hub", "--leader-election-namespace=fleet-system", "--metrics-bind-address=:9090", "--health-probe-bind-address=:8081",
			"--metrics-secure=false", "--fleet-api-bind-address=:8443", "--fleet-api-tls-cert-file=/etc/fleet/api/tls.crt",
			"--fleet-api-tls-key-file=/etc/fleet/api/tls.key", "--fleet-api-client-ca-file=/etc/fleet/api/ca.crt", "--check-invariants"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hub chart with values (-want +got):\n%s", diff)
	}

	member := load(t, "fleet-member")
	var kinds []string
	for _, o := range render(t, member, map[string]any{"rbac": map[string]any{"mode": "restricted"}}) {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	wantKinds := []string{"ClusterRole/fleet-member-restricted", "ClusterRole/fleet-metrics-reader", "ClusterRoleBinding/fleet-member-restricted",
		"Deployment/fleet-member", "Role/fleet-member-leader-election", "RoleBinding/fleet-member-leader-election",
		"Service/fleet-member-metrics", "ServiceAccount/fleet-member"}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("member chart with restricted RBAC (-want +got):\n%s", diff)
	}
	vals, err := chartutil.ToRenderValues(member, map[string]any{"rbac": map[string]any{"mode": "root"}},
		chartutil.ReleaseOptions{Name: "fleet", Namespace: namespace, IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Render(member, vals); err == nil || !strings.Contains(err.Error(), `rbac.mode "root": must be cluster-admin or restricted`) {
		t.Errorf("rbac.mode root: %v, want the chart to refuse it naming the value", err)
	}
}

// TestChartsApplyServerSide: the charts' CRDs and RBAC apply server-side to a real API
// server for real (the hub's CRDs first, then the member's), and their workloads and
// Services with dry-run=server, so the API server validates every object as installed.
func TestChartsApplyServerSide(t *testing.T) {
	env := testenv.StartEnv(t)
	c := testenv.Client(t, env.Config)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fleet-hub", "fleet-member"} {
		ch := load(t, name)
		var crds []*unstructured.Unstructured
		for _, f := range ch.CRDObjects() {
			crds = append(crds, decode(t, f.Filename, f.File.Data)...)
		}
		for _, o := range crds {
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("helm-test"), client.ForceOwnership); err != nil {
				t.Fatalf("%s: apply CRD %s: %v", name, o.GetName(), err)
			}
		}
		applied := map[string]int{}
		for _, o := range render(t, ch, nil) {
			opts := []client.ApplyOption{client.FieldOwner("helm-test"), client.ForceOwnership}
			real := strings.HasPrefix(o.GetAPIVersion(), "rbac.authorization.k8s.io/") || o.GetKind() == "ServiceAccount"
			if !real {
				opts = append(opts, client.DryRunAll)
			}
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), opts...); err != nil {
				t.Errorf("%s: server-side apply %s %s (dry run %v): %v", name, o.GetKind(), o.GetName(), !real, err)
				continue
			}
			if real {
				applied["real"]++
			} else {
				applied["dry-run"]++
			}
		}
		if applied["real"] == 0 || applied["dry-run"] == 0 {
			t.Errorf("%s: applied %v; want RBAC for real and workloads in dry run", name, applied)
		}
	}
	// The RBAC is really there: the hub's ClusterRole grants what the hub needs.
	var roles unstructured.UnstructuredList
	roles.SetAPIVersion("rbac.authorization.k8s.io/v1")
	roles.SetKind("ClusterRoleList")
	if err := c.List(ctx, &roles); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range roles.Items {
		if strings.HasPrefix(r.GetName(), "fleet-") {
			names = append(names, r.GetName())
		}
	}
	if diff := cmp.Diff([]string{"fleet-hub", "fleet-metrics-reader"}, names); diff != "" {
		t.Errorf("fleet ClusterRoles on the API server (-want +got):\n%s", diff)
	}
}
