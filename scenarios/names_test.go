package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// TestObjectNames: applied objects must have valid Kubernetes names; the error names the
// manifest and the field.
func TestObjectNames(t *testing.T) {
	const head = "name: t\nduration: 1h\ntimeline:\n  - at: 0s\n    apply: |\n" // lines 1-5
	doc := func(apiVersion, kind, meta string) string {
		return head + "      apiVersion: " + apiVersion + "\n      kind: " + kind + "\n      metadata:\n" + meta + // lines 6-8
			"      spec:\n        resourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: app}]\n"
	}
	for _, tc := range []struct {
		name, src string
		line      int
		field     string
		reason    string
	}{
		{"placement with underscore", doc("placement.kubernetes-fleet.io/v1beta1", "ClusterResourcePlacement", "        name: Bad_CRP_Name\n"), 9,
			"timeline[0].apply[0] (ClusterResourcePlacement Bad_CRP_Name)", `metadata.name: Invalid value: "Bad_CRP_Name": a lowercase RFC 1123 subdomain`},
		{"namespace with a dot", head + "      apiVersion: v1\n      kind: Namespace\n      metadata: {name: a.b}\n", 8,
			"timeline[0].apply[0] (Namespace a.b)", "must not contain dots"},
		{"config map in a bad namespace", head + "      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: c, namespace: Bad_NS}\n", 8,
			"timeline[0].apply[0] (ConfigMap c)", `metadata.namespace: Invalid value: "Bad_NS"`},
		{"role with a slash", head + "      apiVersion: rbac.authorization.k8s.io/v1\n      kind: ClusterRole\n      metadata: {name: a/b}\n", 8,
			"timeline[0].apply[0] (ClusterRole a/b)", "may not contain '/'"},
		{"name too long", head + "      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: " + strings.Repeat("a", 254) + "}\n", 8,
			"timeline[0].apply[0] (ConfigMap " + strings.Repeat("a", 254) + ")", "must be no more than 253 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.src))
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse = %v, want an *Error", err)
			}
			if perr.Line != tc.line || perr.Field != tc.field || !strings.Contains(perr.Reason, tc.reason) {
				t.Errorf("Parse = %v\nwant line %d, field %q, reason containing %q", err, tc.line, tc.field, tc.reason)
			}
		})
	}
	for _, src := range []string{
		head + "      apiVersion: rbac.authorization.k8s.io/v1\n      kind: ClusterRole\n      metadata: {name: \"system:controller:x\"}\n",
		head + "      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: a.b-c, namespace: app}\n",
	} {
		if _, err := Parse("t.yaml", []byte(src)); err != nil {
			t.Errorf("Parse(%q) = %v, want no error", src, err)
		}
	}
}

// TestPlacementsUpstreamRefuses: scenario validation refuses the placements KubeFleet's
// webhook refuses, naming the manifest and the field.
func TestPlacementsUpstreamRefuses(t *testing.T) {
	const head = "name: t\nduration: 1h\ntimeline:\n  - at: 0s\n    apply: |\n" // lines 1-5
	crp := func(policy string) string {
		return head + "      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: ClusterResourcePlacement\n      metadata: {name: crp}\n" +
			"      spec:\n        resourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: app}]\n        policy:\n" + policy // policy from line 12
	}
	for _, tc := range []struct {
		name, src string
		line      int
		reason    string
	}{
		{"PickAll with a preferred term", crp("          placementType: PickAll\n          affinity:\n            clusterAffinity:\n              preferredDuringSchedulingIgnoredDuringExecution:\n                - weight: 5\n                  preference: {labelSelector: {matchLabels: {a: b}}}\n"),
			15, "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution: Forbidden: preferred affinity terms are not supported with placementType PickAll"},
		{"Gt 10 with Lt 5", crp("          placementType: PickAll\n          affinity:\n            clusterAffinity:\n              requiredDuringSchedulingIgnoredDuringExecution:\n                clusterSelectorTerms:\n                  - propertySelector:\n                      matchExpressions:\n                        - {name: kubernetes-fleet.io/node-count, operator: Gt, values: [\"10\"]}\n                        - {name: kubernetes-fleet.io/node-count, operator: Lt, values: [\"5\"]}\n"),
			20, "matchExpressions[1]: Invalid value: \"kubernetes-fleet.io/node-count Lt 5\": contradicts the earlier requirements on property kubernetes-fleet.io/node-count in this term (Gt 10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.src))
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse = %v, want an *Error", err)
			}
			if perr.Line != tc.line || perr.Field != "timeline[0].apply[0] (ClusterResourcePlacement crp)" || !strings.Contains(perr.Reason, tc.reason) {
				t.Errorf("Parse = %v\nwant line %d, reason containing %q", err, tc.line, tc.reason)
			}
		})
	}
}
