package eviction_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetsim/fleetsim/model/eviction"
)

// errsOf renders errors as "type path" for comparison.
func errsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestValidateEviction(t *testing.T) {
	long := strings.Repeat("a", eviction.MaxNameLength+1)
	max := strings.Repeat("a", eviction.MaxNameLength)
	mk := func(name, crp, cluster string) *eviction.Eviction {
		return &eviction.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: eviction.EvictionSpec{PlacementName: crp, ClusterName: cluster}}
	}
	cases := []struct {
		name string
		in   *eviction.Eviction
		want []string
	}{
		{"how-to eviction", &ev, nil},
		{"names of 255 characters", mk("e", max, max), nil},
		{"placementName too long", mk("e", long, "c"), []string{"FieldValueTooLong spec.placementName"}},
		{"clusterName too long", mk("e", "p", long), []string{"FieldValueTooLong spec.clusterName"}},
		{"both required", mk("e", "", ""), []string{"FieldValueRequired spec.placementName", "FieldValueRequired spec.clusterName"}},
		{"name required", mk("", "p", "c"), []string{"FieldValueRequired metadata.name"}},
		{"name not a DNS subdomain", mk("Test_Eviction", "p", "c"), []string{"FieldValueInvalid metadata.name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errsOf(eviction.ValidateEviction(tc.in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateEviction(%s) = %v, want %v\n(-want +got):\n%s", tc.name, got, tc.want, diff)
			}
		})
	}
}

func TestValidateEvictionUpdate(t *testing.T) {
	changed := ev
	changed.Spec.ClusterName = "kind-cluster-2"
	withStatus := ev
	withStatus.Status.Conditions = nil
	if got := errsOf(eviction.ValidateEvictionUpdate(&ev, &withStatus)); got != nil {
		t.Errorf("ValidateEvictionUpdate(same spec) = %v, want none", got)
	}
	want := []string{"FieldValueForbidden spec"}
	if diff := cmp.Diff(want, errsOf(eviction.ValidateEvictionUpdate(&ev, &changed))); diff != "" {
		t.Errorf("ValidateEvictionUpdate(changed clusterName) (-want +got):\n%s", diff)
	}
}

func TestValidateBudget(t *testing.T) {
	v := func(s string) *intstr.IntOrString { x := intstr.Parse(s); return &x }
	str := func(s string) *intstr.IntOrString { x := intstr.FromString(s); return &x }
	mk := func(maxU, minA *intstr.IntOrString) *eviction.DisruptionBudget {
		return &eviction.DisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: crpName}, Spec: eviction.DisruptionBudgetSpec{MaxUnavailable: maxU, MinAvailable: minA}}
	}
	cases := []struct {
		name string
		in   *eviction.DisruptionBudget
		want []string
	}{
		{"minAvailable 1 (how-to)", mk(nil, v("1")), nil},
		{"minAvailable 0", mk(nil, v("0")), nil},
		{"maxUnavailable 0", mk(v("0"), nil), nil},
		{"minAvailable 50%", mk(nil, v("50%")), nil},
		{"maxUnavailable 100%", mk(v("100%"), nil), nil},
		{"maxUnavailable 0%", mk(v("0%"), nil), nil},
		{"minAvailable \"3\" as a string", mk(nil, str("3")), nil},
		{"neither set", mk(nil, nil), []string{"FieldValueRequired spec"}},
		{"both set", mk(v("1"), v("1")), []string{"FieldValueForbidden spec.minAvailable"}},
		{"negative integer", mk(nil, v("-1")), []string{"FieldValueInvalid spec.minAvailable"}},
		{"101%", mk(v("101%"), nil), []string{"FieldValueInvalid spec.maxUnavailable"}},
		{"not a number", mk(str("half"), nil), []string{"FieldValueInvalid spec.maxUnavailable"}},
		{"negative percentage", mk(nil, str("-5%")), []string{"FieldValueInvalid spec.minAvailable"}},
		{"beyond int32", mk(nil, str("99999999999")), []string{"FieldValueInvalid spec.minAvailable"}},
		{"both set and one malformed", mk(str("x"), v("1")), []string{"FieldValueForbidden spec.minAvailable", "FieldValueInvalid spec.maxUnavailable"}},
		{"no name", &eviction.DisruptionBudget{Spec: eviction.DisruptionBudgetSpec{MinAvailable: v("1")}}, []string{"FieldValueRequired metadata.name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errsOf(eviction.ValidateBudget(tc.in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateBudget(%s) = %v, want %v\n(-want +got):\n%s", tc.name, got, tc.want, diff)
			}
		})
	}
}
