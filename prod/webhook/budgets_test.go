package webhook

import (
	"context"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/fleetsim/fleetsim/apis"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// TestBudgetWebhook: the budget handler admits a well-formed budget and refuses a malformed
// one with the model's reason (the CRD refuses most of these first; the webhook does not
// depend on it).
func TestBudgetWebhook(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	h := &budgets{decoder: admission.NewDecoder(scheme)}
	val := func(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }
	for _, tc := range []struct {
		name string
		spec v1beta1.PlacementDisruptionBudgetSpec
		want string // "" admitted
	}{
		{"minAvailable", v1beta1.PlacementDisruptionBudgetSpec{MinAvailable: val("2")}, ""},
		{"maxUnavailable percentage", v1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: val("25%")}, ""},
		{"both", v1beta1.PlacementDisruptionBudgetSpec{MinAvailable: val("1"), MaxUnavailable: val("1")}, "spec.minAvailable: Forbidden: maxUnavailable and minAvailable are mutually exclusive; set exactly one"},
		{"neither", v1beta1.PlacementDisruptionBudgetSpec{}, "spec: Required value: exactly one of maxUnavailable and minAvailable must be set"},
		{"over 100%", v1beta1.PlacementDisruptionBudgetSpec{MaxUnavailable: val("150%")}, `spec.maxUnavailable: Invalid value: "150%": must be a non-negative integer or a percentage from 0% to 100%`},
	} {
		b := &v1beta1.ClusterResourcePlacementDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "ClusterResourcePlacementDisruptionBudget"},
			ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: tc.spec}
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		resp := h.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}})
		got := ""
		if !resp.Allowed {
			got = resp.Result.Message
		}
		if got != tc.want {
			t.Errorf("%s: refusal %q, want %q", tc.name, got, tc.want)
		}
	}
}
