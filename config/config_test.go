package config

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/fleetsim/fleetsim/prod/testenv"
)

func render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	rm, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

// TestDashboardQueriesNameExportedMetrics: every fleetsim metric the Grafana dashboard
// queries is one the hub's code registers (histograms by their _bucket and _count series).
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("grafana/fleet-hub-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var src strings.Builder
	for _, glob := range []string{"../prod/hub/*.go", "../prod/engine/*.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
	}
	metric := regexp.MustCompile(`fleetsim_[a-z_]+`)
	queried := 0
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range metric.FindAllString(tg.Expr, -1) {
				queried++
				name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
				if !strings.Contains(src.String(), `"`+name+`"`) {
					t.Errorf("panel %q queries %s, which prod/hub and prod/engine do not register", p.Title, m)
				}
			}
		}
	}
	if queried < 5 {
		t.Errorf("the dashboard queries %d fleetsim series, want the hub's metrics", queried)
	}
}

// TestOverlaysApplyServerSide: config/fleet-api (config/default with the fleet API v1's
// Service and flags, the hub's PodDisruptionBudget and metrics Service) applies server-side
// to a real API server; the Services select the hub's pods by ports the Deployment names,
// and config/prometheus's ServiceMonitor selects the metrics Service by its port name.
func TestOverlaysApplyServerSide(t *testing.T) {
	objs := render(t, "fleet-api")
	env := testenv.StartEnv(t)
	c := testenv.Client(t, env.Config)
	ctx := context.Background()
	var kinds []string
	var deploy appsv1.Deployment
	ports := map[string][]string{} // Service -> target ports
	for _, o := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("config-test"), client.ForceOwnership); err != nil {
			t.Fatalf("server-side apply %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if o.GetKind() != "CustomResourceDefinition" {
			kinds = append(kinds, o.GetKind()+"/"+o.GetName())
		}
		switch o.GetKind() {
		case "Deployment":
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &deploy); err != nil {
				t.Fatal(err)
			}
		case "Service":
			sp, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
			for _, p := range sp {
				ports[o.GetName()] = append(ports[o.GetName()], p.(map[string]any)["targetPort"].(string))
			}
		}
	}
	slices.Sort(kinds)
	want := []string{"ClusterRole/fleet-hub", "ClusterRole/fleet-metrics-reader", "ClusterRoleBinding/fleet-hub", "Deployment/fleet-hub",
		"Namespace/fleet-system", "PodDisruptionBudget/fleet-hub", "Role/fleet-hub-leader-election", "RoleBinding/fleet-hub-leader-election",
		"Service/fleet-api", "Service/fleet-hub-metrics", "ServiceAccount/fleet-hub"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("config/fleet-api objects (-want +got):\n%s", diff)
	}
	named := map[string]bool{}
	for _, p := range deploy.Spec.Template.Spec.Containers[0].Ports {
		named[p.Name] = true
	}
	for svc, tps := range ports {
		for _, tp := range tps {
			if !named[tp] {
				t.Errorf("Service %s targets port %q, which the hub's container does not name (%v)", svc, tp, named)
			}
		}
	}
	args := strings.Join(deploy.Spec.Template.Spec.Containers[0].Args, " ")
	for _, f := range []string{"--fleet-api-bind-address=:8443", "--fleet-api-tls-cert-file=/etc/fleet/api/tls.crt", "--fleet-api-client-ca-file=/etc/fleet/api/ca.crt"} {
		if !strings.Contains(args, f) {
			t.Errorf("the hub's args lack %s: %s", f, args)
		}
	}
	if n := len(deploy.Spec.Template.Spec.TopologySpreadConstraints); n != 2 {
		t.Errorf("%d topology spread constraints, want 2 (node and zone)", n)
	}

	sm := render(t, "prometheus")
	if len(sm) != 1 || sm[0].GetKind() != "ServiceMonitor" {
		t.Fatalf("config/prometheus renders %d objects, want one ServiceMonitor", len(sm))
	}
	sel, _, _ := unstructured.NestedStringMap(sm[0].Object, "spec", "selector", "matchLabels")
	eps, _, _ := unstructured.NestedSlice(sm[0].Object, "spec", "endpoints")
	for _, o := range objs {
		if o.GetKind() == "Service" && o.GetName() == "fleet-hub-metrics" {
			for k, v := range sel {
				if o.GetLabels()[k] != v {
					t.Errorf("the ServiceMonitor selects %s=%s, the metrics Service's labels are %v", k, v, o.GetLabels())
				}
			}
			sp, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
			if eps[0].(map[string]any)["scheme"] != "https" {
				t.Errorf("the ServiceMonitor scrapes with scheme %v; the hub serves metrics over HTTPS", eps[0].(map[string]any)["scheme"])
			}
			if eps[0].(map[string]any)["port"] != sp[0].(map[string]any)["name"] {
				t.Errorf("the ServiceMonitor scrapes port %v, the metrics Service names %v", eps[0].(map[string]any)["port"], sp[0].(map[string]any)["name"])
			}
		}
	}
}
