package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// raw is a wrapped manifest of an envelope.
func raw(t *testing.T, o map[string]any) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

// TestEnvelopeIntoReservedNamespace: the API server accepts an envelope that carries an
// object into a reserved namespace (a ResourceEnvelope in app wrapping a ConfigMap in
// kube-system; a ClusterResourceEnvelope wrapping the Namespace kube-public), as it accepts a
// placement selecting kube-system; the hub's work generator, the one shared with the
// simulator (model/resources.Unwrap), refuses them (ENV-RESERVED-NS): it writes no Work, and
// the member's WorkSynchronized condition is False/SyncWorkFailed with the message the
// simulator reports (scenarios/runner TestEnvelopeIntoReservedNamespaceIsNotPlaced), naming
// the envelope, the entry, the object and the rule (TSG-WORKSYNC-BAD-ENVELOPE).
func TestEnvelopeIntoReservedNamespace(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", nil)
	cm := func(name, ns string) map[string]any {
		md := map[string]any{"name": name}
		if ns != "" {
			md["namespace"] = ns
		}
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": map[string]any{"k": "v"}}
	}
	f.create(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}},
		&placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "sneaky"}, Data: map[string]runtime.RawExtension{
			"ok.yaml":  raw(t, cm("fine", "")),
			"sys.yaml": raw(t, cm("config", "kube-system")),
		}},
		&placementv1beta1.ClusterResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Name: "ns-envelope"}, Data: map[string]runtime.RawExtension{
			"ns.yaml": raw(t, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "kube-public", "labels": map[string]any{"taken": "yes"}}}),
		}},
		&placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: "app"},
			Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("app")},
		},
		&placementv1beta1.ClusterResourcePlacement{
			ObjectMeta: metav1.ObjectMeta{Name: "ns"},
			Spec: placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: []placementv1beta1.ClusterResourceSelector{
				{Group: placementv1beta1.GroupVersion.Group, Version: "v1beta1", Kind: "ClusterResourceEnvelope", Name: "ns-envelope"},
			}},
		},
	)
	const prefix = "Failed to synchronize the work to the latest: "
	want := map[string]metav1.Condition{
		"app/east": {Type: "WorkSynchronized", Status: metav1.ConditionFalse, Reason: "SyncWorkFailed",
			Message: prefix + `envelope ResourceEnvelope app/sneaky: data["sys.yaml"]: ConfigMap kube-system/config: namespace "kube-system" is reserved and cannot be placed`},
		"ns/east": {Type: "WorkSynchronized", Status: metav1.ConditionFalse, Reason: "SyncWorkFailed",
			Message: prefix + `envelope ClusterResourceEnvelope ns-envelope: data["ns.yaml"]: Namespace kube-public: namespace "kube-public" is reserved and cannot be placed`},
	}
	testenv.Eventually(t, "the envelopes refused on east", func() error {
		got := map[string]metav1.Condition{}
		for _, name := range []string{"app", "ns"} {
			conds, crp, err := f.crpConditions(name)
			if err != nil {
				return err
			}
			if !strings.Contains(strings.Join(conds, " "), "ClusterResourcePlacementWorkSynchronized=False/") {
				return fmt.Errorf("%s: conditions %v, want ClusterResourcePlacementWorkSynchronized False", name, conds)
			}
			for _, ps := range crp.Status.PlacementStatuses {
				if c := meta.FindStatusCondition(ps.Conditions, "WorkSynchronized"); c != nil {
					got[name+"/"+ps.ClusterName] = metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("per-cluster WorkSynchronized (-want +got):\n%s", diff)
		}
		return nil
	})
	for _, name := range []string{"app", "ns"} {
		if ws, err := f.workMembers(name); err != nil || len(ws) != 0 {
			t.Errorf("Works of %s: got %v (err %v), want none: nothing of a refused envelope is placed", name, ws, err)
		}
	}
}

// TestEnvelopeEntryBound: the envelope CRDs allow at most resources.MaxEnvelopeEntries (50)
// entries in data, and the API server's refusal of more says what the model says to the
// simulator and the scenario parser (ENV-MAX-ENTRIES): an envelope of 20,000 entries, or 51,
// is refused at creation, with the same field, count and limit; one of 50 is accepted.
func TestEnvelopeEntryBound(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}}); err != nil {
		t.Fatal(err)
	}
	data := func(n int, clusterScoped bool) map[string]runtime.RawExtension {
		out := map[string]runtime.RawExtension{}
		for i := range n {
			o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("c%d", i)}}
			if clusterScoped {
				o = map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": fmt.Sprintf("r%d", i)}}
			}
			out[fmt.Sprintf("e%05d.yaml", i)] = raw(t, o)
		}
		return out
	}
	cases := []struct {
		name    string
		obj     client.Object
		refused bool
	}{
		{"ResourceEnvelope of 20,000 entries", &placementv1beta1.ResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "huge"}, Data: data(20000, false)}, true},
		{"ClusterResourceEnvelope of 51 entries", &placementv1beta1.ClusterResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: data(resources.MaxEnvelopeEntries+1, true)}, true},
		{"ClusterResourceEnvelope of 50 entries", &placementv1beta1.ClusterResourceEnvelope{ObjectMeta: metav1.ObjectMeta{Name: "full"}, Data: data(resources.MaxEnvelopeEntries, true)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// What the model says of the same envelope.
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			o := &unstructured.Unstructured{Object: u}
			switch tc.obj.(type) {
			case *placementv1beta1.ResourceEnvelope:
				o.SetGroupVersionKind(placementv1beta1.GroupVersion.WithKind(resources.KindResourceEnvelope))
			default:
				o.SetGroupVersionKind(placementv1beta1.GroupVersion.WithKind(resources.KindClusterResourceEnvelope))
			}
			fe := resources.ValidateEnvelope(o)
			if (fe != nil) != tc.refused {
				t.Fatalf("model: ValidateEnvelope() = %v, want refused %t", fe, tc.refused)
			}
			err = admin.Create(ctx, tc.obj)
			switch {
			case !tc.refused && err != nil:
				t.Fatalf("API server refused an envelope the model accepts: %v", err)
			case tc.refused && err == nil:
				t.Fatalf("API server accepted an envelope the model refuses (%v)", fe)
			case tc.refused && !strings.Contains(err.Error(), fe.Error()):
				t.Errorf("API server: %v\nwant it to say what the model says: %q", err, fe.Error())
			case tc.refused:
				t.Logf("API server: %v; model: %v", err, fe)
			}
		})
	}
}
