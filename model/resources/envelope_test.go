package resources

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestUnwrap(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		want    []string // kind/namespace/name of each wrapped object
		wantErr string
	}{
		{
			name: "cluster envelope with a webhook configuration [Using Envelope Objects to Place Resources › ClusterResourceEnvelope Example]",
			doc: `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceEnvelope
metadata: {name: example}
data:
  "webhook.yaml": {apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingWebhookConfiguration, metadata: {name: guard}}
  "clusterrole.yaml": {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: reader}}`,
			want: []string{"ClusterRole//reader", "ValidatingWebhookConfiguration//guard"},
		},
		{
			name: "namespaced envelope defaults the namespace [Using Envelope Objects to Place Resources › ResourceEnvelope Example]",
			doc: `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceEnvelope
metadata: {name: example, namespace: app}
data:
  "cm.yaml": {apiVersion: v1, kind: ConfigMap, metadata: {name: config}}
  "quota.yaml": {apiVersion: v1, kind: ResourceQuota, metadata: {name: q, namespace: app}}`,
			want: []string{"ConfigMap/app/config", "ResourceQuota/app/q"},
		},
		{
			name: "legacy config map envelope carries manifests as text",
			doc: `apiVersion: v1
kind: ConfigMap
metadata: {name: env, namespace: app, annotations: {kubernetes-fleet.io/envelope-configmap: "true"}}
data:
  "lr.yaml": |
    apiVersion: v1
    kind: LimitRange
    metadata: {name: limits}`,
			want: []string{"LimitRange/app/limits"},
		},
		{
			name:    "a cluster envelope cannot carry namespaced objects",
			doc:     "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceEnvelope\nmetadata: {name: e}\ndata:\n  x: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ops}}",
			wantErr: "may only wrap cluster-scoped objects",
		},
		{
			name:    "a malformed entry (TSG-WORKSYNC-BAD-ENVELOPE)",
			doc:     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: env, namespace: app, annotations: {kubernetes-fleet.io/envelope-configmap: \"true\"}}\ndata:\n  bad.yaml: \"kind: [\"",
			wantErr: `data["bad.yaml"] is not a manifest`,
		},
		{
			name:    "an entry without a name",
			doc:     "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: n}\ndata:\n  x: {apiVersion: v1, kind: ConfigMap}",
			wantErr: "needs apiVersion, kind and metadata.name",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := objects(t, tc.doc)[0]
			if !IsEnvelope(o) {
				t.Fatalf("IsEnvelope(%s) = false", tc.name)
			}
			got, env, err := Unwrap(o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Unwrap() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range got {
				names = append(names, g.GetKind()+"/"+g.GetNamespace()+"/"+g.GetName())
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("Unwrap() (-want +got):\n%s", diff)
			}
			if env.Name != o.GetName() {
				t.Errorf("Unwrap() envelope = %+v", env)
			}
		})
	}
	plain := objects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}")[0]
	if IsEnvelope(plain) {
		t.Errorf("a plain ConfigMap is not an envelope")
	}
}

// envelopeOf builds an envelope of kind in namespace ns (none for a cluster envelope) with n
// ConfigMap or ClusterRole entries, for the bound on entries.
func envelopeOf(kind, ns string, n int) *unstructured.Unstructured {
	data := map[string]any{}
	for i := range n {
		inner := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("c%d", i)}}
		if kind == KindClusterResourceEnvelope {
			inner = map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": fmt.Sprintf("r%d", i)}}
		}
		data[fmt.Sprintf("e%05d.yaml", i)] = inner
	}
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": kind, "data": data}}
	o.SetName("big")
	o.SetNamespace(ns)
	return o
}

// TestUnwrapRefusals: what an envelope may not carry, and the whole message the work
// generator reports as WorkSynchronized=False / SyncWorkFailed in both worlds: it names the
// envelope, the entry, the wrapped object and the rule (ENV-RESERVED-NS, ENV-MAX-ENTRIES,
// TSG-WORKSYNC-BAD-ENVELOPE).
func TestUnwrapRefusals(t *testing.T) {
	cases := []struct {
		name string
		env  *unstructured.Unstructured
		want string // the error; "" for none
	}{
		{
			name: "a ResourceEnvelope in app wrapping a ConfigMap in kube-system",
			env: objects(t, `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceEnvelope
metadata: {name: sneaky, namespace: app}
data:
  "ok.yaml": {apiVersion: v1, kind: ConfigMap, metadata: {name: fine}}
  "sys.yaml": {apiVersion: v1, kind: ConfigMap, metadata: {name: config, namespace: kube-system}}`)[0],
			want: `envelope ResourceEnvelope app/sneaky: data["sys.yaml"]: ConfigMap kube-system/config: namespace "kube-system" is reserved and cannot be placed`,
		},
		{
			name: "a ResourceEnvelope wrapping into a member's reserved namespace",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: app}\ndata:\n  w.yaml: {apiVersion: v1, kind: Secret, metadata: {name: s, namespace: fleet-member-east}}")[0],
			want: `envelope ResourceEnvelope app/e: data["w.yaml"]: Secret fleet-member-east/s: namespace "fleet-member-east" is reserved and cannot be placed`,
		},
		{
			name: "a ResourceEnvelope wrapping into default",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: app}\ndata:\n  d.yaml: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}")[0],
			want: `envelope ResourceEnvelope app/e: data["d.yaml"]: ConfigMap default/c: namespace "default" is reserved and cannot be placed`,
		},
		{
			name: "a ClusterResourceEnvelope wrapping the Namespace kube-public",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceEnvelope\nmetadata: {name: e}\ndata:\n  ns.yaml: {apiVersion: v1, kind: Namespace, metadata: {name: kube-public, labels: {owned: me}}}")[0],
			want: `envelope ClusterResourceEnvelope e: data["ns.yaml"]: Namespace kube-public: namespace "kube-public" is reserved and cannot be placed`,
		},
		{
			name: "a ClusterResourceEnvelope wrapping an ordinary Namespace",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceEnvelope\nmetadata: {name: e}\ndata:\n  ns.yaml: {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}")[0],
		},
		{
			name: "a legacy ConfigMap envelope wrapping into kube-system",
			env:  objects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: env, namespace: app, annotations: {kubernetes-fleet.io/envelope-configmap: \"true\"}}\ndata:\n  r.yaml: |\n    apiVersion: rbac.authorization.k8s.io/v1\n    kind: Role\n    metadata: {name: admin, namespace: kube-system}")[0],
			want: `envelope ConfigMap app/env: data["r.yaml"]: Role kube-system/admin: namespace "kube-system" is reserved and cannot be placed`,
		},
		{
			name: "a ResourceEnvelope in app wrapping a ConfigMap in another, unreserved namespace",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: app}\ndata:\n  c.yaml: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: prod}}")[0],
			want: `envelope ResourceEnvelope app/e: data["c.yaml"]: a ResourceEnvelope may only wrap objects of its own namespace app, not ConfigMap prod/c`,
		},
		{
			name: "a ResourceEnvelope naming its own namespace",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: app}\ndata:\n  c.yaml: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: app}}")[0],
		},
		{
			name: "a namespace merely starting with kube is not reserved",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: kubernetes-apps}\ndata:\n  c.yaml: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}")[0],
		},
		{
			name: "a ResourceEnvelope of 50 entries, the CRD's maxProperties",
			env:  envelopeOf(KindResourceEnvelope, "app", MaxEnvelopeEntries),
		},
		{
			name: "a ResourceEnvelope of 51 entries",
			env:  envelopeOf(KindResourceEnvelope, "app", MaxEnvelopeEntries+1),
			want: "envelope ResourceEnvelope app/big: data: Too many: 51: must have at most 50 items",
		},
		{
			name: "a ClusterResourceEnvelope of 20,000 entries",
			env:  envelopeOf(KindClusterResourceEnvelope, "", 20000),
			want: "envelope ClusterResourceEnvelope big: data: Too many: 20000: must have at most 50 items",
		},
		{
			name: "an envelope without data",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceEnvelope\nmetadata: {name: e}")[0],
			want: "envelope ClusterResourceEnvelope e: data: Required value",
		},
		{
			name: "an envelope with a CRD carries manifests as objects, not text",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: app}\ndata:\n  t.yaml: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: c}\"")[0],
			want: `envelope ResourceEnvelope app/e: data[t.yaml]: Invalid value: "string": must be of type object: a manifest`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Unwrap(tc.env)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.want, gotErr); diff != "" {
				t.Errorf("Unwrap() error (-want +got):\n%s", diff)
			}
			if err != nil && got != nil {
				t.Errorf("Unwrap() = %d objects with an error, want none: nothing of a refused envelope is placed", len(got))
			}
		})
	}
}

// TestValidateEnvelope: the envelope CRDs' rules on data, as the simulator and the scenario
// parser apply them to an envelope written to the hub (ENV-CRDS, ENV-MAX-ENTRIES).
func TestValidateEnvelope(t *testing.T) {
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"50 entries", envelopeOf(KindClusterResourceEnvelope, "", MaxEnvelopeEntries), ""},
		{"51 entries", envelopeOf(KindClusterResourceEnvelope, "", MaxEnvelopeEntries+1), "data: Too many: 51: must have at most 50 items"},
		{"20,000 entries", envelopeOf(KindResourceEnvelope, "app", 20000), "data: Too many: 20000: must have at most 50 items"},
		{"no entries", envelopeOf(KindResourceEnvelope, "app", 0), ""},
		{"no data", objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: app}")[0], "data: Required value"},
		{"data a list", objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: app}\ndata: [a]")[0], `data: Invalid value: "array": must be of type object: a map of manifests`},
		{"an entry a number", objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: app}\ndata: {a: {kind: ConfigMap}, b: 1}")[0], `data[b]: Invalid value: "number": must be of type object: a manifest`},
		{"a legacy ConfigMap envelope is not bounded in entries", func() *unstructured.Unstructured {
			o := objects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: env, namespace: app, annotations: {kubernetes-fleet.io/envelope-configmap: \"true\"}}")[0]
			data := map[string]any{}
			for i := range MaxEnvelopeEntries + 1 {
				data[fmt.Sprint(i)] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}"
			}
			o.Object["data"] = data
			return o
		}(), ""},
		{"not an envelope", objects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: app}")[0], ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if fe := ValidateEnvelope(tc.obj); fe != nil {
				got = fe.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateEnvelope() (-want +got):\n%s", diff)
			}
		})
	}
}
