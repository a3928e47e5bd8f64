package resources

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/placement"
)

// Envelope kinds (ENV-CRDS, ENV-LEGACY).
const (
	KindResourceEnvelope        = "ResourceEnvelope"
	KindClusterResourceEnvelope = "ClusterResourceEnvelope"
	// EnvelopeConfigMapAnnotation marks the older form: a ConfigMap whose data values are
	// manifests.
	EnvelopeConfigMapAnnotation = "kubernetes-fleet.io/envelope-configmap"
)

// IsEnvelope reports whether a selected object wraps others instead of being placed itself.
func IsEnvelope(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	switch {
	case gvk.Group == "placement.kubernetes-fleet.io" && (gvk.Kind == KindResourceEnvelope || gvk.Kind == KindClusterResourceEnvelope):
		return true
	case gvk.Group == "" && gvk.Kind == "ConfigMap":
		return o.GetAnnotations()[EnvelopeConfigMapAnnotation] == "true"
	}
	return false
}

// Unwrap returns the objects an envelope carries, in data-key order, each named with the
// envelope in its identifier. The envelope itself is never placed: its contents are, and
// only on members (ENV-*). A ResourceEnvelope may carry only namespaced objects (defaulted to
// its namespace), a ClusterResourceEnvelope only cluster-scoped ones; a malformed entry is
// an error the work generator reports as WorkSynchronized=False (TSG-WORKSYNC-BAD-ENVELOPE).
func Unwrap(o *unstructured.Unstructured) ([]*unstructured.Unstructured, *placement.NamespacedName, error) {
	env := &placement.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	data, _, _ := unstructured.NestedFieldNoCopy(o.Object, "data")
	entries, ok := data.(map[string]any)
	if !ok && data != nil {
		return nil, env, fmt.Errorf("envelope %s: data must be a map of manifests", ObjectName(o))
	}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kind := o.GetKind()
	var out []*unstructured.Unstructured
	for _, k := range keys {
		inner := &unstructured.Unstructured{}
		switch v := entries[k].(type) {
		case string: // the ConfigMap form carries manifests as text
			if err := yaml.Unmarshal([]byte(v), &inner.Object); err != nil {
				return nil, env, fmt.Errorf("envelope %s: data[%q] is not a manifest: %v", ObjectName(o), k, err)
			}
		case map[string]any:
			inner.Object = v
		default:
			return nil, env, fmt.Errorf("envelope %s: data[%q] is not a manifest", ObjectName(o), k)
		}
		if inner.Object == nil || inner.GetKind() == "" || inner.GetAPIVersion() == "" || inner.GetName() == "" {
			return nil, env, fmt.Errorf("envelope %s: data[%q] needs apiVersion, kind and metadata.name", ObjectName(o), k)
		}
		inner = inner.DeepCopy()
		switch kind {
		case KindClusterResourceEnvelope:
			if inner.GetNamespace() != "" {
				return nil, env, fmt.Errorf("envelope %s: data[%q]: a ClusterResourceEnvelope may only wrap cluster-scoped objects, not %s in namespace %s", ObjectName(o), k, inner.GetKind(), inner.GetNamespace())
			}
		default:
			if inner.GetNamespace() == "" {
				inner.SetNamespace(o.GetNamespace())
			}
		}
		out = append(out, inner)
	}
	return out, env, nil
}

// ObjectName names an object for messages: "Kind namespace/name" or "Kind name".
func ObjectName(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return o.GetKind() + " " + ns + "/" + o.GetName()
	}
	return o.GetKind() + " " + o.GetName()
}
