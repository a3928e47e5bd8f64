package placement

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetsim/fleetsim/model/member"
)

// API limits on a policy (section 22 of the KubeFleet spec).
const (
	MaxClusterNames     = 100
	MaxSelectorTerms    = 10
	MaxTolerations      = 100
	MinPreferenceWeight = -100
	MaxPreferenceWeight = 100
)

// ValidatePolicy checks a policy the way the API server and webhook do, returning every
// problem with its field path (e.g. spec.policy.numberOfClusters). A nil policy is valid.
func ValidatePolicy(p *PlacementPolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p == nil {
		return nil
	}
	typ := p.Type()
	switch typ {
	case PickAll, PickN, PickFixed:
	default:
		return append(errs, field.NotSupported(path.Child("placementType"), p.PlacementType, []PlacementType{PickAll, PickN, PickFixed}))
	}

	// The field matrix of CRP-POL-FIELDS.
	if typ != PickFixed && len(p.ClusterNames) > 0 {
		errs = append(errs, field.Forbidden(path.Child("clusterNames"), fmt.Sprintf("only allowed with placementType PickFixed, not %s", typ)))
	}
	if typ == PickFixed {
		if len(p.ClusterNames) > MaxClusterNames {
			errs = append(errs, field.TooMany(path.Child("clusterNames"), len(p.ClusterNames), MaxClusterNames))
		}
		seen := map[string]bool{}
		for i, n := range p.ClusterNames {
			if n == "" {
				errs = append(errs, field.Required(path.Child("clusterNames").Index(i), "cluster name must not be empty"))
			} else if seen[n] {
				errs = append(errs, field.Duplicate(path.Child("clusterNames").Index(i), n))
			}
			seen[n] = true
		}
		if p.Affinity != nil {
			errs = append(errs, field.Forbidden(path.Child("affinity"), "not allowed with placementType PickFixed (clusterNames and affinity are mutually exclusive)"))
		}
		if len(p.Tolerations) > 0 {
			errs = append(errs, field.Forbidden(path.Child("tolerations"), "not allowed with placementType PickFixed (a fixed list of clusters ignores taints)"))
		}
	}
	if typ == PickN {
		if p.NumberOfClusters == nil {
			errs = append(errs, field.Required(path.Child("numberOfClusters"), "required with placementType PickN"))
		} else if *p.NumberOfClusters < 0 {
			errs = append(errs, field.Invalid(path.Child("numberOfClusters"), *p.NumberOfClusters, "must be greater than or equal to 0"))
		}
	} else if p.NumberOfClusters != nil {
		errs = append(errs, field.Forbidden(path.Child("numberOfClusters"), fmt.Sprintf("only allowed with placementType PickN, not %s", typ)))
	}
	if typ != PickN && len(p.TopologySpreadConstraints) > 0 {
		errs = append(errs, field.Forbidden(path.Child("topologySpreadConstraints"), fmt.Sprintf("only allowed with placementType PickN, not %s", typ)))
	}

	if p.Affinity != nil && p.Affinity.ClusterAffinity != nil {
		ap := path.Child("affinity", "clusterAffinity")
		if typ == PickAll && len(p.Affinity.ClusterAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			// KubeFleet's webhook refuses these too: PickAll takes every matching cluster
			// and never ranks them, so the terms could only be ignored.
			errs = append(errs, field.Forbidden(ap.Child("preferredDuringSchedulingIgnoredDuringExecution"),
				"preferred affinity terms are not supported with placementType PickAll, which selects every matching cluster without ranking them"))
		}
		errs = append(errs, validateClusterAffinity(p.Affinity.ClusterAffinity, ap)...)
	}
	for i, c := range p.TopologySpreadConstraints {
		cp := path.Child("topologySpreadConstraints").Index(i)
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(cp.Child("topologyKey"), "a label key is required"))
		}
		if c.MaxSkew != nil && *c.MaxSkew < 1 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), *c.MaxSkew, "must be at least 1"))
		}
		switch c.WhenUnsatisfiable {
		case "", DoNotSchedule, ScheduleAnyway:
		default:
			errs = append(errs, field.NotSupported(cp.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []UnsatisfiableConstraintAction{DoNotSchedule, ScheduleAnyway}))
		}
	}
	if len(p.Tolerations) > MaxTolerations {
		errs = append(errs, field.TooMany(path.Child("tolerations"), len(p.Tolerations), MaxTolerations))
	}
	for i, t := range p.Tolerations {
		errs = append(errs, validateToleration(t, path.Child("tolerations").Index(i))...)
	}
	return errs
}

func validateClusterAffinity(a *ClusterAffinity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if req := a.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		tp := path.Child("requiredDuringSchedulingIgnoredDuringExecution", "clusterSelectorTerms")
		if len(req.ClusterSelectorTerms) > MaxSelectorTerms {
			errs = append(errs, field.TooMany(tp, len(req.ClusterSelectorTerms), MaxSelectorTerms))
		}
		for i, t := range req.ClusterSelectorTerms {
			errs = append(errs, validateTerm(t, tp.Index(i), false)...)
		}
	}
	for i, pref := range a.PreferredDuringSchedulingIgnoredDuringExecution {
		pp := path.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		if pref.Weight < MinPreferenceWeight || pref.Weight > MaxPreferenceWeight {
			errs = append(errs, field.Invalid(pp.Child("weight"), pref.Weight, fmt.Sprintf("must be between %d and %d", MinPreferenceWeight, MaxPreferenceWeight)))
		}
		errs = append(errs, validateTerm(pref.Preference, pp.Child("preference"), true)...)
	}
	return errs
}

func validateTerm(t ClusterSelectorTerm, path *field.Path, preferred bool) field.ErrorList {
	var errs field.ErrorList
	if t.LabelSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(t.LabelSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("labelSelector"), t.LabelSelector, err.Error()))
		}
	}
	if t.PropertySelector != nil {
		if preferred {
			errs = append(errs, field.Forbidden(path.Child("propertySelector"), "preferred terms rank with propertySorter; propertySelector is only for required terms"))
		}
		ranges := map[string]*propertyRange{}
		for i, r := range t.PropertySelector.MatchExpressions {
			rp := path.Child("propertySelector", "matchExpressions").Index(i)
			if r.Name != "" && len(r.Values) == 1 {
				if q, err := resource.ParseQuantity(r.Values[0]); err == nil {
					pr := ranges[r.Name]
					if pr == nil {
						pr = &propertyRange{}
						ranges[r.Name] = pr
					}
					if !pr.add(r.Operator, q) {
						errs = append(errs, field.Invalid(rp, fmt.Sprintf("%s %s %s", r.Name, r.Operator, r.Values[0]),
							fmt.Sprintf("contradicts the earlier requirements on property %s in this term (%s): no value satisfies them all", r.Name, strings.Join(pr.seen[:len(pr.seen)-1], ", "))))
					}
				}
			}
			if r.Name == "" {
				errs = append(errs, field.Required(rp.Child("name"), "a property name is required"))
			}
			switch r.Operator {
			case PropertyGt, PropertyGe, PropertyEq, PropertyNe, PropertyLt, PropertyLe:
			default:
				errs = append(errs, field.NotSupported(rp.Child("operator"), r.Operator, []PropertySelectorOperator{PropertyGt, PropertyGe, PropertyEq, PropertyNe, PropertyLt, PropertyLe}))
			}
			if len(r.Values) != 1 {
				errs = append(errs, field.Invalid(rp.Child("values"), r.Values, "must have exactly one value"))
			} else if _, err := resource.ParseQuantity(r.Values[0]); err != nil {
				errs = append(errs, field.Invalid(rp.Child("values").Index(0), r.Values[0], "must be a quantity: "+err.Error()))
			}
		}
	}
	if t.PropertySorter != nil {
		sp := path.Child("propertySorter")
		if !preferred {
			errs = append(errs, field.Forbidden(sp, "propertySorter is only for preferred terms"))
		}
		if t.PropertySorter.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), "a property name is required"))
		}
		switch t.PropertySorter.SortOrder {
		case Ascending, Descending:
		default:
			errs = append(errs, field.NotSupported(sp.Child("sortOrder"), t.PropertySorter.SortOrder, []PropertySortOrder{Ascending, Descending}))
		}
	}
	return errs
}

// propertyRange is what the requirements on one property in one term (all of which must
// hold) leave possible: an interval, a required value and excluded values.
type propertyRange struct {
	lo, hi         *resource.Quantity
	loOpen, hiOpen bool
	eq             *resource.Quantity
	ne             []resource.Quantity
	empty          bool
	seen           []string // the requirements, as "Op value"
}

// add narrows the range by one requirement and reports whether some value still satisfies
// every requirement so far (once empty, it stays empty and add keeps reporting false only
// for the requirement that emptied it).
func (r *propertyRange) add(op PropertySelectorOperator, q resource.Quantity) bool {
	r.seen = append(r.seen, fmt.Sprintf("%s %s", op, q.String()))
	if r.empty {
		return true // reported already
	}
	setLo := func(open bool) {
		if r.lo == nil || q.Cmp(*r.lo) > 0 || (q.Cmp(*r.lo) == 0 && open) {
			r.lo, r.loOpen = &q, open
		}
	}
	setHi := func(open bool) {
		if r.hi == nil || q.Cmp(*r.hi) < 0 || (q.Cmp(*r.hi) == 0 && open) {
			r.hi, r.hiOpen = &q, open
		}
	}
	switch op {
	case PropertyGt:
		setLo(true)
	case PropertyGe:
		setLo(false)
	case PropertyLt:
		setHi(true)
	case PropertyLe:
		setHi(false)
	case PropertyEq:
		if r.eq != nil && r.eq.Cmp(q) != 0 {
			r.empty = true
			return false
		}
		r.eq = &q
	case PropertyNe:
		r.ne = append(r.ne, q)
	default:
		return true
	}
	r.empty = !r.satisfiable()
	return !r.empty
}

func (r *propertyRange) satisfiable() bool {
	if r.lo != nil && r.hi != nil {
		c := r.lo.Cmp(*r.hi)
		if c > 0 || (c == 0 && (r.loOpen || r.hiOpen)) {
			return false
		}
	}
	// The single value left when the bounds meet, or the required value.
	only := r.eq
	if only == nil && r.lo != nil && r.hi != nil && r.lo.Cmp(*r.hi) == 0 {
		only = r.lo
	}
	if only == nil {
		return true // an interval with room holds values other than any finite set of exclusions
	}
	if r.lo != nil && (only.Cmp(*r.lo) < 0 || (only.Cmp(*r.lo) == 0 && r.loOpen)) {
		return false
	}
	if r.hi != nil && (only.Cmp(*r.hi) > 0 || (only.Cmp(*r.hi) == 0 && r.hiOpen)) {
		return false
	}
	for _, n := range r.ne {
		if n.Cmp(*only) == 0 {
			return false
		}
	}
	return true
}

func validateToleration(t Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch t.Operator {
	case "", TolerationOpEqual:
		if t.Key == "" {
			errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "an empty key requires operator Exists"))
		}
	case TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty with operator Exists"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, []TolerationOperator{TolerationOpEqual, TolerationOpExists}))
	}
	switch t.Effect {
	case "", member.NoSchedule:
	default:
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, []member.TaintEffect{member.NoSchedule}))
	}
	return errs
}

// ValidatePlacement checks a ClusterResourcePlacement as the API server and webhook do.
func ValidatePlacement(crp *ClusterResourcePlacement) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if crp.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "a placement needs a name"))
	}
	spec := field.NewPath("spec")
	sel := spec.Child("resourceSelectors")
	switch n := len(crp.Spec.ResourceSelectors); {
	case n == 0:
		errs = append(errs, field.Required(sel, "at least one resource selector is required"))
	case n > MaxResourceSelectors:
		errs = append(errs, field.TooMany(sel, n, MaxResourceSelectors))
	}
	scoped := HasNamespaceWithResourceSelectors(crp.Spec.ResourceSelectors)
	for i, s := range crp.Spec.ResourceSelectors {
		if s.Version == "" {
			errs = append(errs, field.Required(sel.Index(i).Child("version"), ""))
		}
		if s.Kind == "" {
			errs = append(errs, field.Required(sel.Index(i).Child("kind"), ""))
		}
		if msg := SelectorScopeError(s, KnownNamespaced); msg != "" && !scoped {
			errs = append(errs, field.Invalid(sel.Index(i).Child("kind"), s.Kind, msg))
		}
		if s.Name != "" && s.LabelSelector != nil {
			errs = append(errs, field.Forbidden(sel.Index(i).Child("labelSelector"), "name and labelSelector are mutually exclusive"))
		}
		switch s.SelectionScope {
		case "", NamespaceWithResources, NamespaceOnly, NamespaceWithResourceSelectors:
		default:
			errs = append(errs, field.NotSupported(sel.Index(i).Child("selectionScope"), s.SelectionScope, []SelectionScope{NamespaceOnly, NamespaceWithResources, NamespaceWithResourceSelectors}))
		}
		if s.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(s.LabelSelector); err != nil {
				errs = append(errs, field.Invalid(sel.Index(i).Child("labelSelector"), s.LabelSelector, err.Error()))
			}
		}
	}
	if l := crp.Spec.RevisionHistoryLimit; l != nil && (*l < 1 || *l > 1000) {
		errs = append(errs, field.Invalid(spec.Child("revisionHistoryLimit"), *l, "must be between 1 and 1000"))
	}
	switch crp.Spec.StatusReportingScope {
	case "", ClusterScopeOnly:
	case NamespaceAccessible:
		n := 0
		for _, s := range crp.Spec.ResourceSelectors {
			if s.Kind == "Namespace" {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, field.Invalid(spec.Child("statusReportingScope"), crp.Spec.StatusReportingScope,
				fmt.Sprintf("NamespaceAccessible needs exactly one resource selector of kind Namespace, not %d", n)))
		}
	default:
		errs = append(errs, field.NotSupported(spec.Child("statusReportingScope"), crp.Spec.StatusReportingScope,
			[]StatusReportingScope{ClusterScopeOnly, NamespaceAccessible}))
	}
	errs = append(errs, ValidatePolicy(crp.Spec.Policy, spec.Child("policy"))...)
	errs = append(errs, validateStrategy(crp.Spec.Strategy, spec.Child("strategy"))...)
	return errs
}

var intOrPercent = regexp.MustCompile(`^((100|[0-9]{1,2})%|[0-9]+)$`)

func validateStrategy(s RolloutStrategy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Type {
	case "", RollingUpdateStrategy, ExternalStrategy:
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), s.Type, []RolloutStrategyType{RollingUpdateStrategy, ExternalStrategy}))
	}
	if a := s.ApplyStrategy; a != nil && !a.Type.Valid() {
		errs = append(errs, field.NotSupported(path.Child("applyStrategy", "type"), a.Type, ApplyTypes()))
	}
	if d := s.DeleteStrategy; d != nil {
		switch d.PropagationPolicy {
		case "", DeletePropagationDelete, DeletePropagationAbandon:
		default:
			errs = append(errs, field.NotSupported(path.Child("deleteStrategy", "propagationPolicy"), d.PropagationPolicy,
				[]DeletePropagationPolicy{DeletePropagationAbandon, DeletePropagationDelete}))
		}
	}
	if r := s.ReportBackStrategy; r != nil {
		rp := path.Child("reportBackStrategy")
		switch r.Type {
		case ReportBackDisabled, ReportBackMirror:
		case "":
			errs = append(errs, field.Required(rp.Child("type"), "Disabled or Mirror"))
		default:
			errs = append(errs, field.NotSupported(rp.Child("type"), r.Type, []ReportBackStrategyType{ReportBackDisabled, ReportBackMirror}))
		}
		switch {
		case r.Destination == nil:
			if r.Type == ReportBackMirror {
				errs = append(errs, field.Required(rp.Child("destination"), "when reportBackStrategy.type is 'Mirror', a destination must be specified"))
			}
		case *r.Destination == ReportBackToWorkAPI:
		case *r.Destination == ReportBackToOriginalResource:
			errs = append(errs, field.NotSupported(rp.Child("destination"), *r.Destination, []ReportBackDestination{ReportBackToWorkAPI}))
		default:
			errs = append(errs, field.NotSupported(rp.Child("destination"), *r.Destination, []ReportBackDestination{ReportBackToOriginalResource, ReportBackToWorkAPI}))
		}
	}
	ru := s.RollingUpdate
	if ru == nil {
		return errs
	}
	rp := path.Child("rollingUpdate")
	zero := func(v *intstr.IntOrString) bool {
		return v != nil && ((v.Type == intstr.Int && v.IntVal == 0) || (v.Type == intstr.String && (v.StrVal == "0" || v.StrVal == "0%")))
	}
	for _, f := range []struct {
		name string
		v    *intstr.IntOrString
	}{{"maxUnavailable", ru.MaxUnavailable}, {"maxSurge", ru.MaxSurge}} {
		name, v := f.name, f.v
		if v == nil {
			continue
		}
		if (v.Type == intstr.Int && v.IntVal < 0) || (v.Type == intstr.String && !intOrPercent.MatchString(v.StrVal)) {
			errs = append(errs, field.Invalid(rp.Child(name), v.String(), "must be a non-negative integer or a percentage from 0% to 100%"))
		}
	}
	// DC-1: maxUnavailable 0 is allowed, but not together with maxSurge 0 (nothing could move).
	if zero(ru.MaxUnavailable) && zero(ru.MaxSurge) {
		errs = append(errs, field.Invalid(rp.Child("maxSurge"), ru.MaxSurge.String(), "cannot be 0 when maxUnavailable is 0"))
	}
	if p := ru.UnavailablePeriodSeconds; p != nil && *p < 0 {
		errs = append(errs, field.Invalid(rp.Child("unavailablePeriodSeconds"), *p, "must not be negative"))
	}
	return errs
}

// Scope is the status reporting scope with its default.
func (s StatusReportingScope) Scope() StatusReportingScope {
	if s == "" {
		return ClusterScopeOnly
	}
	return s
}

// CheckScopeUpdate rejects a change of spec.statusReportingScope, which is immutable.
func CheckScopeUpdate(old, new StatusReportingScope) error {
	if old.Scope() != new.Scope() {
		return fmt.Errorf("spec.statusReportingScope: immutable, cannot change from %s to %s", old.Scope(), new.Scope())
	}
	return nil
}

// CheckPolicyUpdate rejects policy changes the API forbids on an existing placement:
// switching the placement type (CRP-POL-TYPES) and changing or removing tolerations, which
// may only be appended to (TAINT-IMMUTABLE).
func CheckPolicyUpdate(old, new *PlacementPolicy) error {
	if old.Type() != new.Type() {
		return fmt.Errorf("spec.policy.placementType: cannot change from %s to %s; delete and recreate the placement", old.Type(), new.Type())
	}
	var oldT, newT []Toleration
	if old != nil {
		oldT = old.Tolerations
	}
	if new != nil {
		newT = new.Tolerations
	}
	if len(newT) < len(oldT) {
		return fmt.Errorf("spec.policy.tolerations: tolerations can only be added, not removed")
	}
	for i := range oldT {
		if oldT[i] != newT[i] {
			return fmt.Errorf("spec.policy.tolerations[%d]: existing tolerations cannot be changed, only appended to", i)
		}
	}
	return nil
}
