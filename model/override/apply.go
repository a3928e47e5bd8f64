package override

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Result is what applying the override snapshots to one manifest for one cluster decided.
type Result struct {
	// Manifest is the overridden manifest: always a new object, even when nothing applied.
	// It is nil when the resource is deleted or an override failed.
	Manifest *unstructured.Unstructured
	// Deleted is true when a matching Delete rule keeps the resource off the cluster.
	Deleted bool
	// AppliedCRO and AppliedRO name the snapshots that select the resource and have at least
	// one rule for the cluster, in the order they were applied (name order). They are the
	// per-resource share of ApplicableFor, listed even when an earlier Delete rule or failure
	// stopped them from running.
	AppliedCRO []string
	AppliedRO  []placement.NamespacedName
	// Err is the first failure; its message is what the Overridden condition shows.
	Err error
}

// ApplyError is a failure to apply an override to a resource. Its message is the cause alone
// (e.g. the JSON patch library's), exactly as KubeFleet's Overridden condition shows it; the
// fields say where it happened.
type ApplyError struct {
	Resource placement.ResourceIdentifier
	// Snapshot names the override snapshot; Namespace is set for a ResourceOverrideSnapshot.
	Snapshot  string
	Namespace string
	// Rule is the index of the failing rule in the snapshot's policy.
	Rule int
	Err  error
}

func (e *ApplyError) Error() string { return e.Err.Error() }
func (e *ApplyError) Unwrap() error { return e.Err }

// Apply applies the override snapshots that select manifest to it for cluster: the
// ClusterResourceOverride first (selecting the resource, or for a namespaced resource its
// namespace), then the ResourceOverride in the resource's namespace, so the latter wins;
// within each, rules in order and patches in order. The snapshots are normally the latest
// ones, or those a binding recorded; their order does not matter. manifest is never modified.
//
// Apply does not re-validate the snapshots (the API refused invalid overrides); a patch that
// the library cannot decode or apply fails the result.
func Apply(manifest *unstructured.Unstructured, cluster *member.Member, cros []CROSnapshot, ros []ROSnapshot) Result {
	return NewSet(cros, ros).Apply(manifest, cluster)
}

// ApplicableFor lists the override snapshots that apply to cluster for the selected resources:
// those selecting at least one of them with at least one rule whose cluster selector matches
// the cluster. The lists are sorted (ROs by namespace, then name) and are what a binding and
// the placement status record per cluster (applicableClusterResourceOverrides,
// applicableResourceOverrides); the rollout rolls a binding whose lists change. Resources that
// came inside an envelope are not overridden and are skipped.
func ApplicableFor(cluster *member.Member, resources []placement.ResourceIdentifier, cros []CROSnapshot, ros []ROSnapshot) (cro []string, ro []placement.NamespacedName) {
	return NewSet(cros, ros).ApplicableFor(cluster, resources)
}

// ForPlacement keeps the snapshots an override applies to placementName with: those whose
// override names no placement, or names this one at the Cluster scope (OVR-PLACEMENT-REF).
func ForPlacement(placementName string, cros []CROSnapshot, ros []ROSnapshot) ([]CROSnapshot, []ROSnapshot) {
	var c []CROSnapshot
	for _, s := range cros {
		if s.Spec.Placement.RefersTo(placementName) {
			c = append(c, s)
		}
	}
	var r []ROSnapshot
	for _, s := range ros {
		if s.Spec.Placement.RefersTo(placementName) {
			r = append(r, s)
		}
	}
	return c, r
}

// Set is a group of override snapshots compiled once (selectors parsed, patches decoded,
// lookups indexed) for deciding over many resources and clusters. It is immutable and safe
// for concurrent use.
type Set struct {
	cros, ros []compiledOverride // sorted by namespace, then name
	// croByResource indexes CROs by the cluster-scoped resource they select, croByNamespace by
	// the Namespace they select; roByResource indexes ROs by namespace and resource.
	croByResource  map[resourceKey][]int
	croByNamespace map[string][]int
	roByResource   map[resourceKey][]int
}

type resourceKey struct{ namespace, group, version, kind, name string }

type compiledOverride struct {
	name, namespace string
	rules           []compiledRule
}

type compiledRule struct {
	selectNone bool              // nil cluster selector
	terms      []labels.Selector // ORed; none means every cluster
	termErr    error             // a term's labelSelector does not parse
	delete     bool
	patches    []JSONPatchOverride
	// decoded is the rule's patch, decoded once when no value uses a variable.
	decoded   jsonpatch.Patch
	decodeErr error
	variables bool
}

// NewSet compiles snapshots. Snapshot names must be unique (per namespace for ROs).
func NewSet(cros []CROSnapshot, ros []ROSnapshot) *Set {
	s := &Set{
		croByResource:  map[resourceKey][]int{},
		croByNamespace: map[string][]int{},
		roByResource:   map[resourceKey][]int{},
	}
	cs := slices.Clone(cros)
	slices.SortFunc(cs, func(a, b CROSnapshot) int { return strings.Compare(a.Name, b.Name) })
	for i, o := range cs {
		s.cros = append(s.cros, compileOverride(o.Name, "", o.Spec.Policy))
		for _, sel := range o.Spec.ClusterResourceSelectors {
			if isNamespaceKind(sel.Group, sel.Kind) {
				s.croByNamespace[sel.Name] = appendOnce(s.croByNamespace[sel.Name], i)
			}
			k := resourceKey{"", sel.Group, sel.Version, sel.Kind, sel.Name}
			s.croByResource[k] = appendOnce(s.croByResource[k], i)
		}
	}
	rs := slices.Clone(ros)
	slices.SortFunc(rs, func(a, b ROSnapshot) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i, o := range rs {
		s.ros = append(s.ros, compileOverride(o.Name, o.Namespace, o.Spec.Policy))
		for _, sel := range o.Spec.ResourceSelectors {
			k := resourceKey{o.Namespace, sel.Group, sel.Version, sel.Kind, sel.Name}
			s.roByResource[k] = appendOnce(s.roByResource[k], i)
		}
	}
	return s
}

func appendOnce(list []int, i int) []int {
	if n := len(list); n > 0 && list[n-1] == i {
		return list
	}
	return append(list, i)
}

func compileOverride(name, namespace string, p OverridePolicy) compiledOverride {
	o := compiledOverride{name: name, namespace: namespace}
	for _, r := range p.OverrideRules {
		cr := compiledRule{delete: r.Type() == DeleteOverrideType, patches: r.JSONPatchOverrides}
		if r.ClusterSelector == nil {
			cr.selectNone = true
		} else {
			for _, t := range r.ClusterSelector.ClusterSelectorTerms {
				// A term without a labelSelector selects nothing, as Kubernetes reads a nil
				// label selector; property selectors are not supported and not consulted.
				sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
				if err != nil && cr.termErr == nil {
					cr.termErr = fmt.Errorf("invalid cluster selector: %w", err)
				}
				cr.terms = append(cr.terms, sel)
			}
		}
		if !cr.delete {
			for _, p := range r.JSONPatchOverrides {
				if bytes.Contains(p.Value.Raw, []byte("${")) {
					cr.variables = true
				}
			}
			if !cr.variables {
				cr.decoded, cr.decodeErr = decodePatch(r.JSONPatchOverrides, nil)
			}
		}
		o.rules = append(o.rules, cr)
	}
	return o
}

// matches reports whether the rule applies to a cluster with these labels. A rule whose
// selector cannot be read counts as matching, so that the failure surfaces.
func (r *compiledRule) matches(clusterLabels labels.Set) (bool, error) {
	if r.selectNone {
		return false, nil
	}
	if r.termErr != nil {
		return true, r.termErr
	}
	if len(r.terms) == 0 {
		return true, nil
	}
	for _, t := range r.terms {
		if t != nil && t.Matches(clusterLabels) {
			return true, nil
		}
	}
	return false, nil
}

func (o *compiledOverride) appliesTo(clusterLabels labels.Set) bool {
	for i := range o.rules {
		if ok, _ := o.rules[i].matches(clusterLabels); ok {
			return true
		}
	}
	return false
}

// selecting returns the indices of the CROs and ROs selecting a resource, in name order.
func (s *Set) selecting(id placement.ResourceIdentifier) (cro, ro []int) {
	if id.Namespace == "" {
		return s.croByResource[resourceKey{"", id.Group, id.Version, id.Kind, id.Name}], nil
	}
	return s.croByNamespace[id.Namespace], s.roByResource[resourceKey{id.Namespace, id.Group, id.Version, id.Kind, id.Name}]
}

// ApplicableFor is the package-level ApplicableFor over the compiled snapshots.
func (s *Set) ApplicableFor(cluster *member.Member, resources []placement.ResourceIdentifier) (cro []string, ro []placement.NamespacedName) {
	clusterLabels := labels.Set(cluster.Labels)
	croSeen := make([]bool, len(s.cros))
	roSeen := make([]bool, len(s.ros))
	for _, id := range resources {
		if id.Envelope != nil {
			continue
		}
		ci, ri := s.selecting(id)
		for _, i := range ci {
			croSeen[i] = croSeen[i] || s.cros[i].appliesTo(clusterLabels)
		}
		for _, i := range ri {
			roSeen[i] = roSeen[i] || s.ros[i].appliesTo(clusterLabels)
		}
	}
	for i, ok := range croSeen {
		if ok {
			cro = append(cro, s.cros[i].name)
		}
	}
	for i, ok := range roSeen {
		if ok {
			ro = append(ro, placement.NamespacedName{Namespace: s.ros[i].namespace, Name: s.ros[i].name})
		}
	}
	return cro, ro
}

// Identify names the resource a manifest describes.
func Identify(manifest *unstructured.Unstructured) placement.ResourceIdentifier {
	gvk := manifest.GroupVersionKind()
	return placement.ResourceIdentifier{
		Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Name: manifest.GetName(), Namespace: manifest.GetNamespace(),
	}
}

// Apply is the package-level Apply over the compiled snapshots.
func (s *Set) Apply(manifest *unstructured.Unstructured, cluster *member.Member) Result {
	id := Identify(manifest)
	clusterLabels := labels.Set(cluster.Labels)
	ci, ri := s.selecting(id)

	var res Result
	var todo []*compiledOverride
	for _, i := range ci {
		if o := &s.cros[i]; o.appliesTo(clusterLabels) {
			res.AppliedCRO = append(res.AppliedCRO, o.name)
			todo = append(todo, o)
		}
	}
	for _, i := range ri {
		if o := &s.ros[i]; o.appliesTo(clusterLabels) {
			res.AppliedRO = append(res.AppliedRO, placement.NamespacedName{Namespace: o.namespace, Name: o.name})
			todo = append(todo, o)
		}
	}
	if len(todo) == 0 {
		res.Manifest = manifest.DeepCopy()
		return res
	}

	doc, err := json.Marshal(manifest.Object)
	if err != nil {
		res.Err = &ApplyError{Resource: id, Err: err}
		return res
	}
	for _, o := range todo {
		for ri := range o.rules {
			r := &o.rules[ri]
			fail := func(err error) Result {
				res.Err = &ApplyError{Resource: id, Snapshot: o.name, Namespace: o.namespace, Rule: ri, Err: err}
				return res
			}
			ok, err := r.matches(clusterLabels)
			if err != nil {
				return fail(err)
			}
			if !ok {
				continue
			}
			if r.delete {
				res.Deleted = true
				return res
			}
			patch, err := r.decoded, r.decodeErr
			if r.variables {
				patch, err = decodePatch(r.patches, cluster)
			}
			if err != nil {
				return fail(err)
			}
			if doc, err = patch.Apply(doc); err != nil {
				return fail(err)
			}
		}
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(doc, &obj); err != nil {
		res.Err = &ApplyError{Resource: id, Err: err}
		return res
	}
	res.Manifest = &unstructured.Unstructured{Object: obj}
	return res
}

// patchOp is one RFC 6902 operation as the library decodes it.
type patchOp struct {
	Op    JSONPatchOperator `json:"op"`
	Path  string            `json:"path"`
	Value json.RawMessage   `json:"value,omitempty"`
}

// decodePatch turns a rule's patches into one RFC 6902 patch, substituting the reserved
// variables for cluster (nil: no substitution).
func decodePatch(patches []JSONPatchOverride, cluster *member.Member) (jsonpatch.Patch, error) {
	ops := make([]patchOp, len(patches))
	for i, p := range patches {
		v := p.Value.Raw
		if cluster != nil {
			var err error
			if v, err = substitute(v, cluster); err != nil {
				return nil, err
			}
		}
		ops[i] = patchOp{Op: p.Operator, Path: p.Path, Value: v}
	}
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return jsonpatch.DecodePatch(b)
}

// substitute replaces ${MEMBER-CLUSTER-NAME} and ${MEMBER-CLUSTER-LABEL-KEY-<key>} in a raw
// JSON value in one pass (substituted text is never rescanned). The variables only occur
// inside JSON strings, so the replacement is JSON-escaped. Anything else starting with ${ is
// left alone; the names are case-sensitive.
func substitute(raw []byte, cluster *member.Member) ([]byte, error) {
	const open = "${"
	if !bytes.Contains(raw, []byte(open)) {
		return raw, nil
	}
	out := make([]byte, 0, len(raw)+32)
	rest := raw
	for {
		i := bytes.Index(rest, []byte(open))
		if i < 0 {
			break
		}
		out, rest = append(out, rest[:i]...), rest[i:]
		switch {
		case bytes.HasPrefix(rest, []byte(VariableClusterName)):
			out = appendEscaped(out, cluster.Name)
			rest = rest[len(VariableClusterName):]
		case bytes.HasPrefix(rest, []byte(VariableLabelKeyPrefix)):
			end := bytes.IndexByte(rest, '}')
			if end < 0 {
				out, rest = append(out, open...), rest[len(open):]
				continue
			}
			key := string(rest[len(VariableLabelKeyPrefix):end])
			v, ok := cluster.Labels[key]
			if !ok {
				return nil, fmt.Errorf("member cluster %q has no label %q, which the reserved variable %s needs", cluster.Name, key, rest[:end+1])
			}
			out = appendEscaped(out, v)
			rest = rest[end+1:]
		default:
			out, rest = append(out, open...), rest[len(open):]
		}
	}
	return append(out, rest...), nil
}

// appendEscaped appends s as the inside of a JSON string.
func appendEscaped(out []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return append(out, b[1:len(b)-1]...)
}
