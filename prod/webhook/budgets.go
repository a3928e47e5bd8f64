package webhook

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/eviction"
)

// budgets refuses a malformed ClusterResourcePlacementDisruptionBudget (both or neither of
// maxUnavailable and minAvailable, a malformed value): eviction.ValidateBudget, the rule the
// simulator applies. The budget's name is its placement's (PDB-API), so no other link is
// checked; a budget that does not suit its placement's type is accepted and blocks
// evictions, as KubeFleet documents (PDB-VALIDITY).
type budgets struct {
	decoder admission.Decoder
}

func (h *budgets) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	b := &v1beta1.ClusterResourcePlacementDisruptionBudget{}
	if err := h.decoder.Decode(req, b); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if errs := eviction.ValidateBudget(convert.DisruptionBudgetToModel(b)); len(errs) > 0 {
		return admission.Denied(errs.ToAggregate().Error())
	}
	return admission.Allowed("")
}
