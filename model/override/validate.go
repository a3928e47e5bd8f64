package override

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetsim/fleetsim/model/placement"
)

// ValidateClusterResourceOverride checks one ClusterResourceOverride as the API server and
// the webhook do, naming the field of every problem (e.g.
// spec.policy.overrideRules[0].jsonPatchOverrides[1].path).
func ValidateClusterResourceOverride(o *ClusterResourceOverride) field.ErrorList {
	var errs field.ErrorList
	if o.Name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "an override needs a name"))
	}
	spec := field.NewPath("spec")
	errs = append(errs, validatePlacementRef(o.Spec.Placement, spec.Child("placement"))...)
	if r := o.Spec.Placement; r != nil && r.Scope == NamespacedScope {
		errs = append(errs, field.Forbidden(spec.Child("placement", "scope"), "a ClusterResourceOverride refers to a cluster-scoped placement"))
	}
	errs = append(errs, validateSelectors(o.Spec.ClusterResourceSelectors, spec.Child("clusterResourceSelectors"), false)...)
	errs = append(errs, ValidatePolicy(o.Spec.Policy, spec.Child("policy"))...)
	return errs
}

// ValidateResourceOverride checks one ResourceOverride as the API server and the webhook do.
func ValidateResourceOverride(o *ResourceOverride) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if o.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "an override needs a name"))
	}
	if o.Namespace == "" {
		errs = append(errs, field.Required(meta.Child("namespace"), "a ResourceOverride lives in the namespace of the resources it overrides"))
	}
	spec := field.NewPath("spec")
	errs = append(errs, validatePlacementRef(o.Spec.Placement, spec.Child("placement"))...)
	errs = append(errs, validateSelectors(o.Spec.ResourceSelectors, spec.Child("resourceSelectors"), true)...)
	errs = append(errs, ValidatePolicy(o.Spec.Policy, spec.Child("policy"))...)
	return errs
}

func validatePlacementRef(r *PlacementRef, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if r.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "a placement reference names a ClusterResourcePlacement"))
	}
	switch r.Scope {
	case "", ClusterScope, NamespacedScope:
	default:
		errs = append(errs, field.NotSupported(path.Child("scope"), r.Scope, []PlacementScope{ClusterScope, NamespacedScope}))
	}
	return errs
}

func validateSelectors(sels []ResourceSelector, path *field.Path, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	switch n := len(sels); {
	case n < MinSelectors:
		errs = append(errs, field.Required(path, fmt.Sprintf("between %d and %d resource selectors are required", MinSelectors, MaxSelectors)))
	case n > MaxSelectors:
		errs = append(errs, field.TooMany(path, n, MaxSelectors))
	}
	seen := make(map[ResourceSelector]bool, len(sels))
	for i, s := range sels {
		sp := path.Index(i)
		if s.Version == "" {
			errs = append(errs, field.Required(sp.Child("version"), ""))
		}
		if s.Kind == "" {
			errs = append(errs, field.Required(sp.Child("kind"), ""))
		}
		if s.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), "resources can only be selected by name"))
		}
		if namespaced && isNamespaceKind(s.Group, s.Kind) {
			errs = append(errs, field.Forbidden(sp.Child("kind"), "a ResourceOverride selects namespace-scoped resources; select a Namespace with a ClusterResourceOverride"))
		}
		if seen[s] {
			errs = append(errs, field.Duplicate(sp, s.String()))
		}
		seen[s] = true
	}
	return errs
}

func isNamespaceKind(group, kind string) bool { return group == "" && kind == "Namespace" }

// ValidatePolicy checks an override policy: 1–20 rules, each with a label-only cluster
// selector, a known override type, and 1–20 valid JSON patches exactly when the type is
// JSONPatch.
func ValidatePolicy(p OverridePolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := path.Child("overrideRules")
	switch n := len(p.OverrideRules); {
	case n < MinRules:
		errs = append(errs, field.Required(rp, fmt.Sprintf("between %d and %d override rules are required", MinRules, MaxRules)))
	case n > MaxRules:
		errs = append(errs, field.TooMany(rp, n, MaxRules))
	}
	for i, r := range p.OverrideRules {
		errs = append(errs, validateRule(r, rp.Index(i))...)
	}
	return errs
}

func validateRule(r OverrideRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if cs := r.ClusterSelector; cs != nil {
		tp := path.Child("clusterSelector", "clusterSelectorTerms")
		if len(cs.ClusterSelectorTerms) > MaxSelectorTerms {
			errs = append(errs, field.TooMany(tp, len(cs.ClusterSelectorTerms), MaxSelectorTerms))
		}
		for i, t := range cs.ClusterSelectorTerms {
			errs = append(errs, validateTerm(t, tp.Index(i))...)
		}
	}
	pp := path.Child("jsonPatchOverrides")
	switch r.OverrideType {
	case "", JSONPatchOverrideType:
		switch n := len(r.JSONPatchOverrides); {
		case n < MinPatches:
			errs = append(errs, field.Required(pp, fmt.Sprintf("between %d and %d JSON patches are required with overrideType JSONPatch", MinPatches, MaxPatches)))
		case n > MaxPatches:
			errs = append(errs, field.TooMany(pp, n, MaxPatches))
		}
	case DeleteOverrideType:
		if len(r.JSONPatchOverrides) > 0 {
			errs = append(errs, field.Forbidden(pp, "only allowed with overrideType JSONPatch, not Delete"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("overrideType"), r.OverrideType, []OverrideType{JSONPatchOverrideType, DeleteOverrideType}))
	}
	if r.Type() == JSONPatchOverrideType {
		for i, p := range r.JSONPatchOverrides {
			errs = append(errs, validatePatch(p, pp.Index(i))...)
		}
	}
	return errs
}

func validateTerm(t placement.ClusterSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.LabelSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(t.LabelSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("labelSelector"), metav1.FormatLabelSelector(t.LabelSelector), err.Error()))
		}
	}
	if t.PropertySelector != nil {
		errs = append(errs, field.Forbidden(path.Child("propertySelector"), "only labelSelector is supported in an override cluster selector"))
	}
	if t.PropertySorter != nil {
		errs = append(errs, field.Forbidden(path.Child("propertySorter"), "only labelSelector is supported in an override cluster selector"))
	}
	return errs
}

func validatePatch(p JSONPatchOverride, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch p.Operator {
	case JSONPatchOpAdd, JSONPatchOpReplace:
		if p.Value.IsZero() {
			errs = append(errs, field.Required(path.Child("value"), fmt.Sprintf("op %s needs a value", p.Operator)))
		}
	case JSONPatchOpRemove:
		if !p.Value.IsZero() {
			errs = append(errs, field.Invalid(path.Child("value"), string(p.Value.Raw), "must be empty when op is remove"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("op"), p.Operator, []JSONPatchOperator{JSONPatchOpAdd, JSONPatchOpRemove, JSONPatchOpReplace}))
	}
	if !p.Value.IsZero() && !json.Valid(p.Value.Raw) {
		errs = append(errs, field.Invalid(path.Child("value"), string(p.Value.Raw), "must be a JSON value"))
	}
	if detail := checkPath(p.Path); detail != "" {
		errs = append(errs, field.Invalid(path.Child("path"), p.Path, detail))
	}
	return errs
}

// pointerUnescaper decodes an RFC 6901 reference token.
var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// checkPath applies the path rules of OVR-JSONPATCH and returns why a path is refused, or "".
func checkPath(path string) string {
	if path == "" {
		return "must not be empty"
	}
	if path[0] != '/' {
		return "must start with /"
	}
	segs := strings.Split(path[1:], "/")
	for _, s := range segs {
		if s == "" {
			return "must not contain empty segments"
		}
	}
	for i, s := range segs {
		segs[i] = pointerUnescaper.Replace(s)
	}
	switch segs[0] {
	case "kind", "apiVersion":
		return "cannot override a TypeMeta field (kind, apiVersion)"
	case "status":
		return "cannot override any field under status"
	case "metadata":
		if len(segs) < 2 || (segs[1] != "labels" && segs[1] != "annotations") {
			return "cannot override a metadata field other than labels and annotations"
		}
	}
	return ""
}

// ValidateSet checks the fleet-wide rules over every ClusterResourceOverride and every
// ResourceOverride (OVR-PRECEDENCE-AND-LIMITS): at most 100 of each, and a resource selected
// by at most one ClusterResourceOverride and by at most one ResourceOverride. The order given
// is precedence: when two overrides select the same resource the later one is in error (the
// message names both), so a webhook passes the existing overrides first and the one being
// created or updated last.
//
// A resource is identified by group, kind, name (and, for a ResourceOverride, its namespace):
// two selectors naming the same object through different versions conflict.
func ValidateSet(cros []*ClusterResourceOverride, ros []*ResourceOverride) field.ErrorList {
	var errs field.ErrorList
	cp, rp := field.NewPath("clusterResourceOverrides"), field.NewPath("resourceOverrides")
	if n := len(cros); n > MaxClusterOverrides {
		errs = append(errs, field.TooMany(cp, n, MaxClusterOverrides))
	}
	if n := len(ros); n > MaxNamespacedOverrides {
		errs = append(errs, field.TooMany(rp, n, MaxNamespacedOverrides))
	}

	type key struct{ namespace, group, kind, name string }
	owner := map[key]string{}
	for _, o := range cros {
		for i, s := range o.Spec.ClusterResourceSelectors {
			k := key{"", s.Group, s.Kind, s.Name}
			if prev, ok := owner[k]; ok && prev != o.Name {
				errs = append(errs, field.Invalid(cp.Key(o.Name).Child("spec", "clusterResourceSelectors").Index(i), s.String(),
					fmt.Sprintf("ClusterResourceOverride %q cannot select this resource: it is already selected by ClusterResourceOverride %q, and a resource can be selected by at most one ClusterResourceOverride", o.Name, prev)))
				continue
			}
			owner[k] = o.Name
		}
	}
	owner = map[key]string{}
	for _, o := range ros {
		for i, s := range o.Spec.ResourceSelectors {
			k := key{o.Namespace, s.Group, s.Kind, s.Name}
			if prev, ok := owner[k]; ok && prev != o.Name {
				errs = append(errs, field.Invalid(rp.Key(o.Namespace+"/"+o.Name).Child("spec", "resourceSelectors").Index(i), s.String(),
					fmt.Sprintf("ResourceOverride %s/%s cannot select this resource: it is already selected by ResourceOverride %s/%s, and a resource can be selected by at most one ResourceOverride", o.Namespace, o.Name, o.Namespace, prev)))
				continue
			}
			owner[k] = o.Name
		}
	}
	return errs
}

// RefuseClusterResourceOverride says why o cannot be added to others, the
// ClusterResourceOverrides that exist before it (in precedence order, o itself not among
// them): it selects a resource one of them selects, or they already number
// MaxClusterOverrides (ValidateSet's rules, only what o breaks). Nil means o may be added. The
// webhook asks it of an override being written, the hub of each override it snapshots,
// against the ones created before it.
func RefuseClusterResourceOverride(o *ClusterResourceOverride, others []*ClusterResourceOverride) field.ErrorList {
	return refusedOf(ValidateSet(append(slices.Clone(others), o), nil), "clusterResourceOverrides", "clusterResourceOverrides["+o.Name+"]")
}

// RefuseResourceOverride is RefuseClusterResourceOverride for ResourceOverrides.
func RefuseResourceOverride(o *ResourceOverride, others []*ResourceOverride) field.ErrorList {
	return refusedOf(ValidateSet(nil, append(slices.Clone(others), o)), "resourceOverrides", "resourceOverrides["+o.Namespace+"/"+o.Name+"]")
}

// refusedOf keeps the errors about the override last added: the limit (the set's own path)
// and its selectors (under its key).
func refusedOf(errs field.ErrorList, set, key string) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if e.Field == set || strings.HasPrefix(e.Field, key) {
			out = append(out, e)
		}
	}
	return out
}
