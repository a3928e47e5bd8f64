package eviction

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateEviction checks an eviction as the API server does on create: a name, and both
// spec fields set and at most MaxNameLength long (EVICT-API). Whether the placement and the
// binding exist is not checked here; that is Decide's Valid condition.
func ValidateEviction(e *Eviction) field.ErrorList {
	errs := validateObjectName(e.Name, field.NewPath("metadata", "name"))
	spec := field.NewPath("spec")
	for _, f := range []struct {
		name, value string
	}{{"placementName", e.Spec.PlacementName}, {"clusterName", e.Spec.ClusterName}} {
		p := spec.Child(f.name)
		switch {
		case f.value == "":
			errs = append(errs, field.Required(p, ""))
		case len(f.value) > MaxNameLength:
			errs = append(errs, field.TooLong(p, f.value, MaxNameLength))
		}
	}
	return errs
}

// ValidateEvictionUpdate checks an update of an eviction: the whole spec is immutable
// (EVICT-API). Status changes are always accepted.
func ValidateEvictionUpdate(old, new *Eviction) field.ErrorList {
	errs := ValidateEviction(new)
	if old.Spec != new.Spec {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "the eviction spec is immutable; delete and re-create the eviction"))
	}
	return errs
}

// ValidateBudget checks a disruption budget as the API server does: a name, and exactly one
// of maxUnavailable and minAvailable, a non-negative integer or a percentage from 0% to 100%
// (PDB-API). The name must also equal the protected placement's; that link cannot be
// checked here. Fitness for the placement's type (PDB-VALIDITY) is not an API error either:
// a budget misfit for a PickAll placement only blocks evictions.
func ValidateBudget(b *DisruptionBudget) field.ErrorList {
	errs := validateObjectName(b.Name, field.NewPath("metadata", "name"))
	return append(errs, validateSpec(b.Spec, field.NewPath("spec"))...)
}

func validateSpec(s DisruptionBudgetSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case s.MaxUnavailable == nil && s.MinAvailable == nil:
		errs = append(errs, field.Required(path, "exactly one of maxUnavailable and minAvailable must be set"))
	case s.MaxUnavailable != nil && s.MinAvailable != nil:
		errs = append(errs, field.Forbidden(path.Child("minAvailable"), "maxUnavailable and minAvailable are mutually exclusive; set exactly one"))
	}
	errs = append(errs, validateValue(s.MaxUnavailable, path.Child("maxUnavailable"))...)
	return append(errs, validateValue(s.MinAvailable, path.Child("minAvailable"))...)
}

// validateValue accepts nil or a well-formed value (see valueOK).
func validateValue(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	if v == nil || valueOK(v) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, v.String(), "must be a non-negative integer or a percentage from 0% to 100%")}
}

// valueOK: a non-negative integer, or a string matching the IntOrString pattern whose number
// fits in an int32 ("7" is the integer 7, "7%" a percentage).
func valueOK(v *intstr.IntOrString) bool {
	switch v.Type {
	case intstr.Int:
		return v.IntVal >= 0
	case intstr.String:
		if !intOrPercent.MatchString(v.StrVal) {
			return false
		}
		_, err := strconv.ParseInt(strings.TrimSuffix(v.StrVal, "%"), 10, 32)
		return err == nil
	}
	return false
}

// wellFormed: what validateSpec accepts, without building errors.
func wellFormed(s DisruptionBudgetSpec) bool {
	if (s.MaxUnavailable == nil) == (s.MinAvailable == nil) {
		return false
	}
	return (s.MaxUnavailable == nil || valueOK(s.MaxUnavailable)) && (s.MinAvailable == nil || valueOK(s.MinAvailable))
}

// validateObjectName: a cluster-scoped object's name is a DNS-1123 subdomain.
func validateObjectName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "a name is required")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}
