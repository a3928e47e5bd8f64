package resources

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/placement"
)

// ObjectRef is what MaySelect knows of a changed hub object: its kind, namespace, name and
// labels, and, for a namespaced object, its namespace's labels (NamespaceKnown false when
// the namespace could not be read: any Namespace label selector may then match).
type ObjectRef struct {
	GVK             schema.GroupVersionKind
	Namespace, Name string
	Labels          map[string]string
	NamespaceLabels map[string]string
	NamespaceKnown  bool
}

// RefOf describes o; the namespace's labels are for the caller to add.
func RefOf(o *unstructured.Unstructured) ObjectRef {
	return ObjectRef{GVK: o.GroupVersionKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Labels: o.GetLabels()}
}

// MaySelect reports whether selectors could pick the object, directly or through its
// namespace, as Select would: a change to an object for which it says false cannot change
// what the placement selects. It errs towards true (versions are not compared, and an
// unparsable label selector matches), never towards false.
func MaySelect(selectors []placement.ResourceSelector, o ObjectRef) bool {
	if o.Namespace != "" && placement.HasNamespaceWithResourceSelectors(selectors) {
		// A namespaced selector picks in the scoped namespaces: whether this object's
		// namespace is one of them is left to Select (erring towards true).
		for _, sel := range selectors {
			if sel.Group == o.GVK.Group && sel.Kind == o.GVK.Kind && (sel.Name == "" || sel.Name == o.Name) &&
				matches(sel.LabelSelector, o.Labels, true) {
				return true
			}
		}
	}
	for _, sel := range selectors {
		if o.Namespace == "" {
			if sel.Group == o.GVK.Group && sel.Kind == o.GVK.Kind && (sel.Name == "" || sel.Name == o.Name) &&
				matches(sel.LabelSelector, o.Labels, true) {
				return true
			}
			continue
		}
		if sel.Group != "" || sel.Kind != "Namespace" || ReservedNamespace(o.Namespace) || !Propagatable(o.GVK) {
			continue
		}
		if (sel.Name == "" || sel.Name == o.Namespace) && matches(sel.LabelSelector, o.NamespaceLabels, o.NamespaceKnown) {
			return true
		}
	}
	return false
}

func matches(ls *metav1.LabelSelector, l map[string]string, known bool) bool {
	if ls == nil || !known {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return true
	}
	return s.Matches(labels.Set(l))
}
