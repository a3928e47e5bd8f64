package apis_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/fleetsim/fleetsim/apis/apitest"
	"github.com/fleetsim/fleetsim/apis/kinds"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// roundTripSamples are objects of the kinds testdata/kubefleet has no sample of.
var roundTripSamples = map[string]string{
	"ClusterResourceOverrideSnapshot": `
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverrideSnapshot
metadata: {name: cro-1-0, labels: {kubernetes-fleet.io/override-tracking: cro-1}}
spec:
  overrideHash: YWJj
  overrideSpec:
    clusterResourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
    policy:
      overrideRules:
      - clusterSelector: {clusterSelectorTerms: [{labelSelector: {matchLabels: {env: prod}}}]}
        jsonPatchOverrides: [{op: add, path: /metadata/labels/a, value: b}]
`,
	"ResourceOverrideSnapshot": `
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceOverrideSnapshot
metadata: {name: ro-1-0, namespace: application-1}
spec:
  overrideHash: YWJj
  overrideSpec:
    resourceSelectors: [{group: apps, version: v1, kind: Deployment, name: web}]
    policy:
      overrideRules:
      - overrideType: Delete
`,
	"ClusterResourcePlacementStatus": `
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacementStatus
metadata: {name: crp-1, namespace: application-1, labels: {kubernetes-fleet.io/parent-CRP: crp-1}}
sourceStatus:
  observedResourceIndex: "0"
  selectedResources: [{version: v1, kind: Namespace, name: application-1}]
  conditions:
  - {type: ClusterResourcePlacementScheduled, status: "True", reason: SchedulingPolicyFulfilled, message: found all, observedGeneration: 1, lastTransitionTime: "2026-11-26T02:00:00Z"}
  placementStatuses:
  - clusterName: member-1
    conditions:
    - {type: Scheduled, status: "True", reason: Scheduled, message: picked, observedGeneration: 1, lastTransitionTime: "2026-11-26T02:00:00Z"}
lastUpdatedTime: "2026-11-26T02:00:00Z"
`,
}

// sampleOf returns an object of kind: the first seed sample of testdata/kubefleet of that
// kind, or roundTripSamples.
func sampleOf(t *testing.T, kind string) *unstructured.Unstructured {
	t.Helper()
	if text, ok := roundTripSamples[kind]; ok {
		obj, err := apitest.DecodeYAML([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: obj}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "kubefleet", "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := apitest.DecodeYAML(b)
		if err != nil {
			t.Fatal(err)
		}
		if obj["kind"] == kind {
			u := &unstructured.Unstructured{Object: obj}
			u.SetResourceVersion("")
			u.SetUID("")
			u.SetCreationTimestamp(metav1.Time{})
			u.SetGeneration(0)
			u.SetFinalizers(nil)
			u.SetManagedFields(nil)
			unstructured.RemoveNestedField(u.Object, "status")
			return u
		}
	}
	t.Fatalf("no sample of %s in testdata/kubefleet or roundTripSamples", kind)
	return nil
}

// TestServedVersionsRoundTrip creates an object of every KubeFleet kind at every version
// model/fleetapi serves it at, on a real kube-apiserver with config/crd/bases, and reads it
// back at every served version: the spec is the same at each, and the object is stored once,
// as v1beta1 (the versions share a schema, so the CRDs convert by relabelling).
func TestServedVersionsRoundTrip(t *testing.T) {
	cfg := testenv.Start(t)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	for _, ns := range []string{"fleet-member-aks-member-3", "fleet-member-kind-cluster-1", "application-1", "app"} {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	for _, k := range kinds.Kinds() {
		for _, version := range k.Versions {
			t.Run(k.Kind+"/"+version, func(t *testing.T) {
				m, err := mapper.RESTMapping(schema.GroupKind{Group: k.Group, Kind: k.Kind}, version)
				if err != nil {
					t.Fatalf("the API server does not serve %s at %s: %v", k.Kind, version, err)
				}
				obj := sampleOf(t, k.Kind)
				obj.SetAPIVersion(k.Group + "/" + version)
				obj.SetName(obj.GetName() + "-" + version)
				resourceAt := func(v string) dynamic.ResourceInterface {
					r := dyn.Resource(schema.GroupVersionResource{Group: k.Group, Version: v, Resource: m.Resource.Resource})
					if m.Scope.Name() == "namespace" {
						return r.Namespace(obj.GetNamespace())
					}
					obj.SetNamespace("")
					return r
				}
				created, err := resourceAt(version).Create(ctx, obj, metav1.CreateOptions{FieldValidation: "Strict"})
				if err != nil {
					t.Fatalf("create at %s: %v", version, err)
				}
				if got := created.GetAPIVersion(); got != k.Group+"/"+version {
					t.Errorf("created object says apiVersion %s", got)
				}
				for _, read := range k.Versions {
					got, err := resourceAt(read).Get(ctx, obj.GetName(), metav1.GetOptions{})
					if err != nil {
						t.Fatalf("get at %s: %v", read, err)
					}
					if got.GetAPIVersion() != k.Group+"/"+read {
						t.Errorf("read at %s says apiVersion %s", read, got.GetAPIVersion())
					}
					if diff := cmp.Diff([]any{created.Object["spec"], created.Object["data"]}, []any{got.Object["spec"], got.Object["data"]}); diff != "" {
						t.Errorf("spec read at %s differs from the one created at %s (-created +read):\n%s", read, version, diff)
					}
					if diff := cmp.Diff(created.GetLabels(), got.GetLabels()); diff != "" {
						t.Errorf("labels read at %s (-created +read):\n%s", read, diff)
					}
				}
				// An update at another version keeps what the first version wrote.
				other := k.Versions[0]
				if other == version {
					other = k.Versions[len(k.Versions)-1]
				}
				got, err := resourceAt(other).Get(ctx, obj.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				labels := got.GetLabels()
				if labels == nil {
					labels = map[string]string{}
				}
				labels["fleetsim.io/round-trip"] = other
				got.SetLabels(labels)
				if _, err := resourceAt(other).Update(ctx, got, metav1.UpdateOptions{FieldValidation: "Strict"}); err != nil {
					t.Fatalf("update at %s: %v", other, err)
				}
				back, err := resourceAt(version).Get(ctx, obj.GetName(), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(created.Object["spec"], back.Object["spec"]); diff != "" || back.GetLabels()["fleetsim.io/round-trip"] != other {
					t.Errorf("after an update at %s, read at %s: labels %v, spec (-created +read):\n%s", other, version, back.GetLabels(), diff)
				}
			})
		}
	}

	// `kubectl get crp.v1.placement.kubernetes-fleet.io` (and the docs' fully qualified
	// forms): kubectl expands short names from discovery, then maps the resource.
	expander := restmapper.NewShortcutExpander(mapper, dc, func(string) {})
	for arg, want := range map[string]schema.GroupVersionResource{
		"crp.v1.placement.kubernetes-fleet.io":                            {Group: kinds.PlacementGroup, Version: "v1", Resource: "clusterresourceplacements"},
		"clusterresourceplacement.v1beta1.placement.kubernetes-fleet.io":  {Group: kinds.PlacementGroup, Version: "v1beta1", Resource: "clusterresourceplacements"},
		"clusterresourceoverrides.v1alpha1.placement.kubernetes-fleet.io": {Group: kinds.PlacementGroup, Version: "v1alpha1", Resource: "clusterresourceoverrides"},
		"membercluster.v1.cluster.kubernetes-fleet.io":                    {Group: kinds.ClusterGroup, Version: "v1", Resource: "memberclusters"},
		"crp":  {Group: kinds.PlacementGroup, Version: "v1", Resource: "clusterresourceplacements"},
		"csur": {Group: kinds.PlacementGroup, Version: "v1", Resource: "clusterstagedupdateruns"},
	} {
		// as kubectl's resource builder maps an argument: the kind of the fully specified
		// resource if it names one, else of the group resource; then the mapping of that
		// kind at its version
		gvr, gr := schema.ParseResourceArg(arg)
		var gvk schema.GroupVersionKind
		if gvr != nil {
			gvk, _ = expander.KindFor(*gvr)
		}
		if gvk.Empty() {
			gvk, err = expander.KindFor(gr.WithVersion(""))
			if err != nil {
				t.Errorf("kubectl get %s: %v", arg, err)
				continue
			}
		}
		m, err := expander.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("kubectl get %s: %v", arg, err)
			continue
		}
		got := m.Resource
		if got != want {
			t.Errorf("kubectl get %s maps to %v, want %v", arg, got, want)
		}
		list, err := dyn.Resource(got).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("kubectl get %s: list: %v", arg, err)
			continue
		}
		for _, item := range list.Items {
			if !strings.HasSuffix(item.GetAPIVersion(), "/"+want.Version) {
				t.Errorf("kubectl get %s lists %s at %s", arg, item.GetName(), item.GetAPIVersion())
			}
		}
		if len(list.Items) == 0 {
			t.Errorf("kubectl get %s lists nothing, want the round-trip objects", arg)
		}
	}
	if cols := tableColumns(t, cfg, "/apis/placement.kubernetes-fleet.io/v1/clusterresourceplacements"); !equalStrings(cols, []string{"Name", "Gen", "Scheduled", "Scheduled-Gen", "Available", "Available-Gen", "Age"}) {
		t.Errorf("kubectl get crp.v1 columns %v", cols)
	}
}
