package placement

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestValidateAsUpstreamDoes: placements KubeFleet's webhook refuses are refused here too,
// so a manifest that works here also works on KubeFleet: PickAll with preferred affinity
// terms, and requirements on one property that no value satisfies together.
func TestValidateAsUpstreamDoes(t *testing.T) {
	term := func(exprs string) string {
		return "placementType: PickN\nnumberOfClusters: 1\naffinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {clusterSelectorTerms: [{propertySelector: {matchExpressions: [" + exprs + "]}}]}}}"
	}
	const expr0 = "spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[0].propertySelector.matchExpressions"
	cases := []struct {
		name   string
		policy string
		want   []string // "field: type: detail substring"
	}{
		{"PickAll with preferred terms", "placementType: PickAll\naffinity: {clusterAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, preference: {labelSelector: {matchLabels: {a: b}}}}]}}",
			[]string{"spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution: Forbidden: preferred affinity terms are not supported with placementType PickAll"}},
		{"PickN with preferred terms", "placementType: PickN\nnumberOfClusters: 1\naffinity: {clusterAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, preference: {labelSelector: {matchLabels: {a: b}}}}]}}", nil},
		{"Gt 10 with Lt 5", term("{name: p, operator: Gt, values: ['10']}, {name: p, operator: Lt, values: ['5']}"),
			[]string{expr0 + "[1]: Invalid value: contradicts the earlier requirements on property p in this term (Gt 10): no value satisfies them all"}},
		{"Ge 5 with Le 5 is 5", term("{name: p, operator: Ge, values: ['5']}, {name: p, operator: Le, values: ['5']}"), nil},
		{"Gt 5 with Le 5", term("{name: p, operator: Gt, values: ['5']}, {name: p, operator: Le, values: ['5']}"), []string{expr0 + "[1]: Invalid value: (Gt 5)"}},
		{"Ge 5, Le 5, Ne 5", term("{name: p, operator: Ge, values: ['5']}, {name: p, operator: Le, values: ['5']}, {name: p, operator: Ne, values: ['5']}"),
			[]string{expr0 + "[2]: Invalid value: (Ge 5, Le 5)"}},
		{"Eq 3 and Eq 4", term("{name: p, operator: Eq, values: ['3']}, {name: p, operator: Eq, values: ['4']}"), []string{expr0 + "[1]: Invalid value: (Eq 3)"}},
		{"Eq 3 and Gt 3", term("{name: p, operator: Eq, values: ['3']}, {name: p, operator: Gt, values: ['3']}"), []string{expr0 + "[1]: Invalid value: (Eq 3)"}},
		{"quantities compare by value", term("{name: p, operator: Ge, values: ['1Gi']}, {name: p, operator: Lt, values: ['1000Mi']}"), []string{expr0 + "[1]: Invalid value: (Ge 1Gi)"}},
		{"Gt 1 with Lt 2 has room", term("{name: p, operator: Gt, values: ['1']}, {name: p, operator: Lt, values: ['2']}, {name: p, operator: Ne, values: ['1500m']}"), nil},
		{"different properties never contradict", term("{name: p, operator: Gt, values: ['10']}, {name: q, operator: Lt, values: ['5']}"), nil},
		{"only the first contradiction is reported", term("{name: p, operator: Gt, values: ['10']}, {name: p, operator: Lt, values: ['5']}, {name: p, operator: Lt, values: ['1']}"),
			[]string{expr0 + "[1]: Invalid value: (Gt 10)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidatePolicy(decodePolicy(t, tc.policy), field.NewPath("spec", "policy"))
			if len(errs) != len(tc.want) {
				t.Fatalf("ValidatePolicy = %v, want %d errors: %v", errs, len(tc.want), tc.want)
			}
			for i, e := range errs {
				want := tc.want[i]
				f, rest, _ := strings.Cut(want, ": ")
				typ, detail, _ := strings.Cut(rest, ": ")
				if diff := cmp.Diff(f+": "+typ, e.Field+": "+e.Type.String()); diff != "" || !strings.Contains(e.Detail, detail) {
					t.Errorf("error %d = %v, want %s", i, e, want)
				}
			}
		})
	}
}
