package resources

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetsim/fleetsim/model/placement"
)

// skippedGroups never propagate (ARCH-PROPAGATION-FILTER).
var skippedGroups = map[string]bool{
	"events.k8s.io": true, "coordination.k8s.io": true, "metrics.k8s.io": true,
	"cluster.kubernetes-fleet.io": true,
}

// skippedCoreKinds are core kinds that never propagate.
var skippedCoreKinds = map[string]bool{"Pod": true, "Node": true, "Event": true}

// ReservedNamespace reports whether a namespace is never placed: fleet-*, kube-* and default.
func ReservedNamespace(ns string) bool {
	return ns == "default" || strings.HasPrefix(ns, "fleet-") || strings.HasPrefix(ns, "kube-")
}

// Propagatable reports whether objects of this group and kind may be placed at all.
func Propagatable(gvk schema.GroupVersionKind) bool {
	switch {
	case skippedGroups[gvk.Group]:
		return false
	case gvk.Group == "" && skippedCoreKinds[gvk.Kind]:
		return false
	case gvk.Group == "placement.kubernetes-fleet.io":
		// Fleet's own kinds stay on the hub; only envelopes travel (ENV-SELECTION).
		return gvk.Kind == "ClusterResourceEnvelope" || gvk.Kind == "ResourceEnvelope"
	}
	return true
}

// SelectionError says why a placement's selectors cannot be honoured; it is reported as
// the placement's Scheduled=False condition (TSG-SCHED-RESERVED-NS).
type SelectionError struct {
	Selector int
	Reason   string
}

func (e *SelectionError) Error() string {
	return fmt.Sprintf("resourceSelectors[%d]: %s", e.Selector, e.Reason)
}

// CheckSelectors finds what makes selectors impossible to honour whatever the hub holds: a
// kind that is never placed, a namespaced kind (placement.SelectorScopeError), a reserved namespace named, a label selector that does not
// parse. It depends on the selectors alone, so status can be derived from the spec.
func CheckSelectors(selectors []placement.ResourceSelector) error {
	scoped := placement.HasNamespaceWithResourceSelectors(selectors)
	for i, sel := range selectors {
		gvk := schema.GroupVersionKind{Group: sel.Group, Version: sel.Version, Kind: sel.Kind}
		if !Propagatable(gvk) {
			return &SelectionError{Selector: i, Reason: fmt.Sprintf("%s cannot be placed", gvk.GroupKind())}
		}
		if msg := placement.SelectorScopeError(sel, placement.KnownNamespaced); msg != "" && !scoped {
			return &SelectionError{Selector: i, Reason: msg}
		}
		if sel.Group == "" && sel.Kind == "Namespace" && sel.Name != "" && ReservedNamespace(sel.Name) {
			return &SelectionError{Selector: i, Reason: fmt.Sprintf("namespace %q is reserved and cannot be placed", sel.Name)}
		}
		if sel.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(sel.LabelSelector); err != nil {
				return &SelectionError{Selector: i, Reason: err.Error()}
			}
		}
	}
	return nil
}

// Select returns the hub objects a placement's selectors pick, sorted by group, kind,
// namespace and name. Selectors are ORed; the fields of one selector are ANDed. Selectors
// pick cluster-scoped objects (a label selector never picks a namespaced object, CRP-SEL-GVK);
// a selected Namespace brings every propagatable object in it, unless its selector's
// selectionScope is NamespaceOnly. Under NamespaceWithResourceSelectors a selected Namespace
// brings only what the other selectors pick in it: they may name namespaced kinds, which
// pick objects in those namespaces alone. A namespace that does not
// exist yet selects nothing and is not an error (CRP-SEL-CHANGES).
func Select(selectors []placement.ResourceSelector, objects []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return (*Filter)(nil).Select(selectors, objects)
}

// Select is Select under the hub's propagation filter: an object of an API the filter
// refuses is never picked, directly or through its namespace, and a namespace it skips is
// not placed, nor anything in it. A selector naming only what the filter refuses picks
// nothing and is not an error, as for a namespace that does not exist.
func (f *Filter) Select(selectors []placement.ResourceSelector, objects []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	picked := map[string]*unstructured.Unstructured{}
	byNamespace := map[string][]*unstructured.Unstructured{}
	for _, o := range objects {
		if ns := o.GetNamespace(); ns != "" {
			byNamespace[ns] = append(byNamespace[ns], o)
		}
	}
	if err := CheckSelectors(selectors); err != nil {
		return nil, err
	}
	scopedNamespaces := f.scopedNamespaces(selectors, objects)
	for _, sel := range selectors {
		var ls labels.Selector
		if sel.LabelSelector != nil {
			ls, _ = metav1.LabelSelectorAsSelector(sel.LabelSelector) // checked above
		}
		for _, o := range objects {
			ogvk := o.GroupVersionKind()
			if ns := o.GetNamespace(); ns != "" && scopedNamespaces[ns] && matchesObject(sel, ls, o) &&
				Propagatable(ogvk) && f.AllowsAPI(ogvk) {
				picked[Key(o)] = o
				continue
			}
			if o.GetNamespace() != "" || ogvk.Group != sel.Group || ogvk.Kind != sel.Kind || ogvk.Version != sel.Version || !f.AllowsAPI(ogvk) {
				continue
			}
			if sel.Name != "" && o.GetName() != sel.Name {
				continue
			}
			if ls != nil && !ls.Matches(labels.Set(o.GetLabels())) {
				continue
			}
			if ogvk.Group == "" && ogvk.Kind == "Namespace" {
				if ReservedNamespace(o.GetName()) || !f.AllowsNamespace(o.GetName()) {
					continue
				}
				if sel.SelectionScope == placement.NamespaceOnly || sel.SelectionScope == placement.NamespaceWithResourceSelectors {
					picked[Key(o)] = o
					continue
				}
				for _, inner := range byNamespace[o.GetName()] {
					if Propagatable(inner.GroupVersionKind()) && f.AllowsAPI(inner.GroupVersionKind()) {
						picked[Key(inner)] = inner
					}
				}
			}
			picked[Key(o)] = o
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(picked))
	for _, o := range picked {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int { return cmp.Compare(Key(a), Key(b)) })
	return out, nil
}

// scopedNamespaces are the namespaces selectors pick under NamespaceWithResourceSelectors.
func (f *Filter) scopedNamespaces(selectors []placement.ResourceSelector, objects []*unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, sel := range selectors {
		if !sel.ScopesNamespaces() {
			continue
		}
		var ls labels.Selector
		if sel.LabelSelector != nil {
			ls, _ = metav1.LabelSelectorAsSelector(sel.LabelSelector) // checked by CheckSelectors
		}
		for _, o := range objects {
			gvk := o.GroupVersionKind()
			if o.GetNamespace() == "" && gvk.Group == "" && gvk.Kind == "Namespace" && gvk.Version == sel.Version &&
				matchesObject(sel, ls, o) && !ReservedNamespace(o.GetName()) && f.AllowsNamespace(o.GetName()) {
				out[o.GetName()] = true
			}
		}
	}
	return out
}

// matchesObject reports whether sel's kind, name and label selector ls pick o, wherever o is.
func matchesObject(sel placement.ResourceSelector, ls labels.Selector, o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == sel.Group && gvk.Kind == sel.Kind && gvk.Version == sel.Version &&
		(sel.Name == "" || o.GetName() == sel.Name) && (ls == nil || ls.Matches(labels.Set(o.GetLabels())))
}

// Key identifies an object: group/kind/namespace/name. Namespaces sort before their contents.
func Key(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	if gvk.Group == "" && gvk.Kind == "Namespace" {
		return "/" + o.GetName()
	}
	return "/" + o.GetNamespace() + "/" + gvk.Group + "/" + gvk.Kind + "/" + o.GetName()
}

// Identifier names an object as selectedResources and failedPlacements do.
func Identifier(o *unstructured.Unstructured) placement.ResourceIdentifier {
	gvk := o.GroupVersionKind()
	return placement.ResourceIdentifier{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Name: o.GetName(), Namespace: o.GetNamespace()}
}
