package apis_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis/apitest"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestKubeAPIServer installs the CRDs in a real kube-apiserver (envtest; skipped without
// KUBEBUILDER_ASSETS, see hack/test-assets.sh) and checks what the in-process tests check,
// end to end: the documentation's manifests are created, bad objects and updates are refused with
// the CEL rules' messages, and `kubectl get` prints the columns of the spec.
func TestKubeAPIServer(t *testing.T) {
	cfg := testenv.Start(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	create := func(obj map[string]any) error {
		return c.Create(ctx, &unstructured.Unstructured{Object: obj})
	}
	for _, ns := range []string{"fleet-member-aks-member-3", "fleet-member-kind-cluster-1", "application-1", "app"} {
		if err := create(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
	}

	// The documentation's manifests, as a user (or the hub) would create them.
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
		u := &unstructured.Unstructured{Object: obj}
		group, _, _ := strings.Cut(u.GetAPIVersion(), "/")
		u.SetAPIVersion(group + "/v1beta1")
		u.SetResourceVersion("")
		u.SetUID("")
		u.SetCreationTimestamp(metav1.Time{})
		u.SetGeneration(0)
		err = c.Create(ctx, u)
		if apierrors.IsAlreadyExists(err) {
			// Several samples are variants of one object (cro-1.yaml, cro-remove.yaml, ...):
			// replace the earlier one, so that every sample is really created.
			if err := c.Delete(ctx, u.DeepCopy()); err != nil {
				t.Fatalf("%s: delete the earlier sample of the same name: %v", filepath.Base(f), err)
			}
			err = c.Create(ctx, u)
		}
		if err != nil {
			t.Errorf("%s: create: %v", filepath.Base(f), err)
		}
	}

	// Refusals, with the messages users will see.
	for _, r := range []struct{ name, obj, want string }{
		{"PickN without numberOfClusters", crp("placementType: PickN", ""), "numberOfClusters is required when placementType is PickN"},
		{"clusterNames with PickAll", crp("clusterNames: [a]", ""), "clusterNames is only allowed when placementType is PickFixed"},
		{"PDB with both bounds", "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacementDisruptionBudget\nmetadata: {name: bad}\nspec: {minAvailable: 1, maxUnavailable: 1}\n",
			"exactly one of maxUnavailable and minAvailable must be set"},
	} {
		obj, err := apitest.DecodeYAML([]byte(r.obj))
		if err != nil {
			t.Fatal(err)
		}
		if err := create(obj); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: create error %v, want %q", r.name, err, r.want)
		}
	}
	update := func(kind, name string, change func(u *unstructured.Unstructured)) error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("placement.kubernetes-fleet.io/v1beta1")
		u.SetKind(kind)
		if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			t.Fatal(err)
		}
		change(u)
		return c.Update(ctx, u)
	}
	if err := update("ClusterResourcePlacementEviction", "test-eviction", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "kind-cluster-2", "spec", "clusterName")
	}); err == nil || !strings.Contains(err.Error(), "the spec of an eviction is immutable") {
		t.Errorf("retargeting an eviction: error %v", err)
	}
	if err := update("ClusterResourcePlacement", "example-placement", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedSlice(u.Object, []any{}, "spec", "policy", "tolerations")
	}); err == nil || !strings.Contains(err.Error(), "tolerations can only be added") {
		t.Errorf("removing a toleration: error %v", err)
	}
	if err := update("ClusterResourcePlacement", "example-placement", func(u *unstructured.Unstructured) {
		ts, _, _ := unstructured.NestedSlice(u.Object, "spec", "policy", "tolerations")
		_ = unstructured.SetNestedSlice(u.Object, append(ts, map[string]any{"key": "spot", "operator": "Exists"}), "spec", "policy", "tolerations")
	}); err != nil {
		t.Errorf("appending a toleration: %v", err)
	}

	// kubectl get columns (CRP-API, MC-API, BIND-API, EVICT-API, STAGED-*).
	for plural, want := range map[string][]string{
		"clusterresourceplacements":         {"Name", "Gen", "Scheduled", "Scheduled-Gen", "Available", "Available-Gen", "Age"},
		"clusterresourcebindings":           {"Name", "WorkSynchronized", "ResourcesApplied", "Age"},
		"clusterresourceplacementevictions": {"Name", "Valid", "Executed"},
		"clusterstagedupdateruns":           {"Name", "Placement", "Resource-Snapshot-Index", "Policy-Snapshot-Index", "Initialized", "Succeeded", "Age"},
		"clusterapprovalrequests":           {"Name", "Update-Run", "Stage", "Approved", "ApprovalAccepted", "Age"},
	} {
		if got := tableColumns(t, cfg, "/apis/placement.kubernetes-fleet.io/v1beta1/"+plural); !equalStrings(got, want) {
			t.Errorf("kubectl get %s columns %v, want %v", plural, got, want)
		}
	}
	mcCols := tableColumns(t, cfg, "/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters")
	if want := []string{"Name", "Joined", "Age", "Member-Agent-Last-Seen", "Node-Count", "Available-CPU", "Available-Memory", "Allocatable-CPU", "Allocatable-Memory"}; !equalStrings(mcCols, want) {
		t.Errorf("kubectl get memberclusters -o wide columns %v, want %v", mcCols, want)
	}
}

// tableColumns asks the API server for the server-side table kubectl prints.
func tableColumns(t *testing.T, cfg *rest.Config, path string) []string {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }
