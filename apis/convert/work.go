package convert

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
)

// WorkToModel reads a Work into the hub's view and the apply strategy its spec carries: the
// member is the one whose reserved namespace (fleet-member-<member>) holds it, the placement
// and binding are the parent-CRP and parent-resource-binding labels, the binding generation
// and the manifests' envelopes fleetsim's annotations. The status (what the member agent
// reports) has no model counterpart; WorkFromModel keeps base's.
func WorkToModel(w *v1beta1.Work) (*hub.Work, *placement.ApplyStrategy, error) {
	what := "Work " + metaName(w)
	m, ok := strings.CutPrefix(w.Namespace, membership.NamespacePrefix)
	if !ok || m == "" {
		return nil, nil, fmt.Errorf("%s: not in a member's reserved namespace (%s<member>)", what, membership.NamespacePrefix)
	}
	gen, err := intFrom(w.Annotations, v1beta1.WorkBindingGenerationAnnotation, "annotation", what)
	if err != nil {
		return nil, nil, err
	}
	out := &hub.Work{
		Name:       w.Name,
		Binding:    w.Labels[v1beta1.ParentBindingLabel],
		Placement:  w.Labels[v1beta1.CRPTrackingLabel],
		Member:     m,
		Generation: gen,
		Abandon:    w.Annotations[v1beta1.DeletePropagationPolicyAnnotation] == string(placement.DeletePropagationAbandon),
		ReportBack: ReportBackToModel(w.Spec.ReportBackStrategy),
	}
	for i, mf := range w.Spec.Workload.Manifests {
		u, err := rawToUnstructured(mf.RawExtension)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: spec.workload.manifests[%d]: %v", what, i, err)
		}
		out.Manifests = append(out.Manifests, u)
	}
	if len(out.Manifests) > 0 {
		out.Envelopes = make([]*placement.NamespacedName, len(out.Manifests))
	}
	if a, ok := w.Annotations[v1beta1.WorkManifestEnvelopesAnnotation]; ok {
		var envs []*placement.NamespacedName
		if err := json.Unmarshal([]byte(a), &envs); err != nil || len(envs) != len(out.Manifests) {
			return nil, nil, fmt.Errorf("%s: annotation %s must list one envelope (or null) per manifest, %d of them: %q", what, v1beta1.WorkManifestEnvelopesAnnotation, len(out.Manifests), a)
		}
		copy(out.Envelopes, envs)
	}
	return out, ApplyStrategyToModel(w.Spec.ApplyStrategy), nil
}

// WorkFromModel writes a Work in the member's reserved namespace with the parent-CRP and
// parent-resource-binding labels, the binding generation, the manifests and, when any
// manifest came in an envelope, the envelope list; strategy is the binding's apply
// strategy. base keeps the status and server metadata.
func WorkFromModel(w *hub.Work, strategy *placement.ApplyStrategy, base *v1beta1.Work) (*v1beta1.Work, error) {
	out := &v1beta1.Work{}
	if base != nil {
		out = base.DeepCopy()
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), "Work"
	out.Name, out.Namespace = w.Name, membership.Namespace(w.Member)
	setLabel(&out.ObjectMeta, v1beta1.CRPTrackingLabel, w.Placement)
	setLabel(&out.ObjectMeta, v1beta1.ParentBindingLabel, w.Binding)
	setIntAnnotation(&out.ObjectMeta, v1beta1.WorkBindingGenerationAnnotation, w.Generation)
	removeAnnotation(&out.ObjectMeta, v1beta1.WorkManifestEnvelopesAnnotation)
	removeAnnotation(&out.ObjectMeta, v1beta1.DeletePropagationPolicyAnnotation)
	if w.Abandon {
		setAnnotation(&out.ObjectMeta, v1beta1.DeletePropagationPolicyAnnotation, string(placement.DeletePropagationAbandon))
	}
	for _, e := range w.Envelopes {
		if e != nil {
			b, err := json.Marshal(w.Envelopes)
			if err != nil {
				return nil, err
			}
			setAnnotation(&out.ObjectMeta, v1beta1.WorkManifestEnvelopesAnnotation, string(b))
			break
		}
	}
	var manifests []v1beta1.Manifest
	for i, m := range w.Manifests {
		raw, err := json.Marshal(m.Object)
		if err != nil {
			return nil, fmt.Errorf("work %s: manifest %d: %v", w.Name, i, err)
		}
		manifests = append(manifests, v1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	if !sameManifests(out.Spec.Workload.Manifests, manifests) {
		out.Spec.Workload.Manifests = manifests
	}
	out.Spec.ApplyStrategy = keepOr(&out.Spec.ApplyStrategy, strategy, ApplyStrategyToModel, ApplyStrategyFromModel)
	out.Spec.ReportBackStrategy = ReportBackFromModel(w.ReportBack)
	return out, nil
}

// ReportBackToModel converts a report-back strategy; nothing is lost.
func ReportBackToModel(r *v1beta1.ReportBackStrategy) *placement.ReportBackStrategy {
	if r == nil {
		return nil
	}
	return &placement.ReportBackStrategy{Type: r.Type, Destination: copyPtr(r.Destination)}
}

// ReportBackFromModel converts a report-back strategy; nothing is lost.
func ReportBackFromModel(r *placement.ReportBackStrategy) *v1beta1.ReportBackStrategy {
	if r == nil {
		return nil
	}
	return &v1beta1.ReportBackStrategy{Type: r.Type, Destination: copyPtr(r.Destination)}
}

func sameManifests(a, b []v1beta1.Manifest) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameJSON(a[i].Raw, b[i].Raw) {
			return false
		}
	}
	return true
}
