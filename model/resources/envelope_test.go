package resources

import (
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

// TestUnwrapRefusals: what an envelope may not carry, and the whole message the work
// generator reports as WorkSynchronized=False / SyncWorkFailed in both worlds: it names the
// envelope, the entry, the wrapped object and the rule (ENV-RESERVED-NS,
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
			name: "a namespace merely starting with kube is not reserved",
			env:  objects(t, "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ResourceEnvelope\nmetadata: {name: e, namespace: kubernetes-apps}\ndata:\n  c.yaml: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}")[0],
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
