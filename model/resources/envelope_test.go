package resources

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
