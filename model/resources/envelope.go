package resources

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

// MaxEnvelopeEntries is the most entries the data of a ClusterResourceEnvelope or a
// ResourceEnvelope holds: the maxProperties of both CRDs' data (ENV-CRDS). The API server
// refuses a bigger envelope; ValidateEnvelope refuses it for the simulator and the scenario
// parser, and Unwrap for the work generator of both worlds.
const MaxEnvelopeEntries = 50

// isEnvelopeKind reports whether o is one of the envelope kinds with a CRD (not the older
// ConfigMap form, whose data the API server does not bound in entries).
func isEnvelopeKind(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "placement.kubernetes-fleet.io" && (gvk.Kind == KindResourceEnvelope || gvk.Kind == KindClusterResourceEnvelope)
}

// ValidateEnvelope checks a ClusterResourceEnvelope or a ResourceEnvelope as its CRD does:
// data is required, a map of at most MaxEnvelopeEntries entries, each a manifest (a
// mapping). It returns nil for any other object. The simulator's hub (sim.ApplyResource)
// and the scenario parser refuse what it refuses, as the API server refuses it in
// production (ENV-CRDS, ENV-MAX-ENTRIES).
func ValidateEnvelope(o *unstructured.Unstructured) *field.Error {
	if !isEnvelopeKind(o) {
		return nil
	}
	p := field.NewPath("data")
	data, ok := o.Object["data"]
	if !ok || data == nil {
		return field.Required(p, "")
	}
	entries, ok := data.(map[string]any)
	if !ok {
		return field.Invalid(p, jsonType(data), "must be of type object: a map of manifests")
	}
	if len(entries) > MaxEnvelopeEntries {
		return field.TooMany(p, len(entries), MaxEnvelopeEntries)
	}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := entries[k].(map[string]any); !ok {
			return field.Invalid(p.Key(k), jsonType(entries[k]), "must be of type object: a manifest")
		}
	}
	return nil
}

// jsonType names the JSON type of a decoded value, as the API server's schema errors do.
func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

// envelopeError refuses an envelope's content, naming the envelope.
func envelopeError(o *unstructured.Unstructured, format string, args ...any) error {
	return fmt.Errorf("envelope %s: %s", ObjectName(o), fmt.Sprintf(format, args...))
}

// reservedWrapped says why the reserved-namespace rule refuses a wrapped object: it is in a
// reserved namespace, or it is a reserved Namespace. A placement may not select a reserved
// namespace (CheckSelectors); an envelope may not carry an object into one either
// (ENV-RESERVED-NS).
func reservedWrapped(inner *unstructured.Unstructured) (string, bool) {
	ns := inner.GetNamespace()
	if gvk := inner.GroupVersionKind(); gvk.Group == "" && gvk.Kind == "Namespace" {
		ns = inner.GetName()
	}
	if ns == "" || !ReservedNamespace(ns) {
		return "", false
	}
	return fmt.Sprintf("%s: namespace %q is reserved and cannot be placed", ObjectName(inner), ns), true
}

// IsEnvelope reports whether a selected object wraps others instead of being placed itself.
func IsEnvelope(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	switch {
	case isEnvelopeKind(o):
		return true
	case gvk.Group == "" && gvk.Kind == "ConfigMap":
		return o.GetAnnotations()[EnvelopeConfigMapAnnotation] == "true"
	}
	return false
}

// Unwrap returns the objects an envelope carries, in data-key order, each named with the
// envelope in its identifier. The envelope itself is never placed: its contents are, and
// only on members (ENV-*). A ResourceEnvelope may carry only namespaced objects of its own
// namespace (the default), a ClusterResourceEnvelope only cluster-scoped ones; no envelope may carry
// an object into a reserved namespace, nor a reserved Namespace (ENV-RESERVED-NS); an
// envelope with a CRD may hold at most MaxEnvelopeEntries entries. Each of these is an error
// naming the envelope, the entry and the rule, which the work generator reports as
// WorkSynchronized=False (TSG-WORKSYNC-BAD-ENVELOPE): nothing of the envelope is placed.
func Unwrap(o *unstructured.Unstructured) ([]*unstructured.Unstructured, *placement.NamespacedName, error) {
	env := &placement.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	if fe := ValidateEnvelope(o); fe != nil {
		return nil, env, envelopeError(o, "%s", fe.Error())
	}
	data, _, _ := unstructured.NestedFieldNoCopy(o.Object, "data")
	entries, ok := data.(map[string]any)
	if !ok && data != nil {
		return nil, env, envelopeError(o, "data must be a map of manifests")
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
				return nil, env, envelopeError(o, "data[%q] is not a manifest: %v", k, err)
			}
		case map[string]any:
			inner.Object = v
		default:
			return nil, env, envelopeError(o, "data[%q] is not a manifest", k)
		}
		if inner.Object == nil || inner.GetKind() == "" || inner.GetAPIVersion() == "" || inner.GetName() == "" {
			return nil, env, envelopeError(o, "data[%q] needs apiVersion, kind and metadata.name", k)
		}
		inner = inner.DeepCopy()
		switch kind {
		case KindClusterResourceEnvelope:
			if inner.GetNamespace() != "" {
				return nil, env, envelopeError(o, "data[%q]: a ClusterResourceEnvelope may only wrap cluster-scoped objects, not %s in namespace %s", k, inner.GetKind(), inner.GetNamespace())
			}
		default:
			if inner.GetNamespace() == "" {
				inner.SetNamespace(o.GetNamespace())
			}
		}
		if why, reserved := reservedWrapped(inner); reserved {
			return nil, env, envelopeError(o, "data[%q]: %s", k, why)
		}
		// A ResourceEnvelope places into its own namespace only: whoever may write to that
		// namespace must not reach others through it (KubeFleet refuses the same).
		if kind == KindResourceEnvelope && inner.GetNamespace() != o.GetNamespace() {
			return nil, env, envelopeError(o, "data[%q]: a ResourceEnvelope may only wrap objects of its own namespace %s, not %s", k, o.GetNamespace(), ObjectName(inner))
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
