package webhook

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/override"
)

// overrides refuses a ClusterResourceOverride or ResourceOverride whose creation or update
// breaks the fleet-wide rules against the stored overrides (override.RefuseClusterResourceOverride,
// RefuseResourceOverride).
type overrides struct {
	reader  client.Reader
	decoder admission.Decoder
}

func (h *overrides) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	var refused field.ErrorList
	switch req.Kind.Kind {
	case "ClusterResourceOverride":
		o := &v1beta1.ClusterResourceOverride{}
		if err := h.decoder.Decode(req, o); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		var list v1beta1.ClusterResourceOverrideList
		if err := h.reader.List(ctx, &list); err != nil {
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("list ClusterResourceOverrides: %w", err))
		}
		var others []*override.ClusterResourceOverride
		for i := range list.Items {
			if list.Items[i].Name != o.Name {
				others = append(others, convert.ClusterResourceOverrideToModel(&list.Items[i]))
			}
		}
		refused = override.RefuseClusterResourceOverride(convert.ClusterResourceOverrideToModel(o), others)
	case "ResourceOverride":
		o := &v1beta1.ResourceOverride{}
		if err := h.decoder.Decode(req, o); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		o.Namespace = req.Namespace
		var list v1beta1.ResourceOverrideList
		if err := h.reader.List(ctx, &list); err != nil {
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("list ResourceOverrides: %w", err))
		}
		var others []*override.ResourceOverride
		for i := range list.Items {
			if list.Items[i].Namespace != o.Namespace || list.Items[i].Name != o.Name {
				others = append(others, convert.ResourceOverrideToModel(&list.Items[i]))
			}
		}
		refused = override.RefuseResourceOverride(convert.ResourceOverrideToModel(o), others)
	default:
		return admission.Allowed("")
	}
	if len(refused) > 0 {
		return admission.Denied(refused.ToAggregate().Error())
	}
	return admission.Allowed("")
}
