package webhook

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/override"
)

// overrides refuses a ClusterResourceOverride or ResourceOverride whose creation or update
// breaks the fleet-wide rules (override.ValidateSet): the stored overrides come first and the
// one written last, so only what it adds is refused.
type overrides struct {
	reader  client.Reader
	decoder admission.Decoder
}

func (h *overrides) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	var cros []*override.ClusterResourceOverride
	var ros []*override.ResourceOverride
	var prefix string
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
		for i := range list.Items {
			if list.Items[i].Name != o.Name {
				cros = append(cros, convert.ClusterResourceOverrideToModel(&list.Items[i]))
			}
		}
		cros = append(cros, convert.ClusterResourceOverrideToModel(o))
		prefix = fmt.Sprintf("clusterResourceOverrides[%s]", o.Name)
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
		for i := range list.Items {
			if list.Items[i].Namespace != o.Namespace || list.Items[i].Name != o.Name {
				ros = append(ros, convert.ResourceOverrideToModel(&list.Items[i]))
			}
		}
		ros = append(ros, convert.ResourceOverrideToModel(o))
		prefix = fmt.Sprintf("resourceOverrides[%s/%s]", o.Namespace, o.Name)
	default:
		return admission.Allowed("")
	}
	var refused []string
	for _, e := range override.ValidateSet(cros, ros) {
		// A limit counts every override: refused only when this one is new (an update of
		// an existing override does not add one).
		if e.Field == "clusterResourceOverrides" || e.Field == "resourceOverrides" {
			limit := override.MaxClusterOverrides
			if e.Field == "resourceOverrides" {
				limit = override.MaxNamespacedOverrides
			}
			if req.Operation == admissionv1.Create {
				refused = append(refused, fmt.Sprintf("at most %d %ss may exist", limit, req.Kind.Kind))
			}
			continue
		}
		if strings.HasPrefix(e.Field, prefix) {
			refused = append(refused, e.Error())
		}
	}
	if len(refused) > 0 {
		return admission.Denied(strings.Join(refused, "; "))
	}
	return admission.Allowed("")
}
