package sim

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// ApplyResource creates or updates a hub object that placements may select (a namespace,
// config map, deployment, ...). Only a change of content counts as a change. An envelope its
// CRD refuses (more than resources.MaxEnvelopeEntries entries, data missing or not a map of
// manifests) is refused here, as the API server refuses it in production.
func (s *Sim) ApplyResource(o *unstructured.Unstructured) error {
	if o.GetName() == "" || o.GetKind() == "" {
		return fmt.Errorf("a resource needs a kind and a name")
	}
	if fe := resources.ValidateEnvelope(o); fe != nil {
		return fmt.Errorf("%s: %s", resources.ObjectName(o), fe.Error())
	}
	key := resources.Key(o)
	if old, ok := s.store.resources[key]; ok && resources.Hash([]*unstructured.Unstructured{resources.Strip(old)}) == resources.Hash([]*unstructured.Unstructured{resources.Strip(o)}) {
		return nil
	}
	s.store.resources[key] = o.DeepCopy()
	s.store.resourcesDirty = true
	s.Record("resource-applied", resources.ObjectName(o), "")
	s.hub.fire(triggers.HubResourceChanged, key, "", "")
	return nil
}

// DeleteResource deletes a hub object named by kind, namespace and name (of any group);
// deleting a namespace deletes what is in it.
func (s *Sim) DeleteResource(kind, namespace, name string) error {
	var found *unstructured.Unstructured
	for _, o := range s.store.HubObjects() {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			found = o
			break
		}
	}
	if found == nil {
		return fmt.Errorf("%s %s does not exist", kind, name)
	}
	key := resources.Key(found)
	delete(s.store.resources, key)
	if found.GroupVersionKind().Group == "" && kind == "Namespace" {
		for k, r := range s.store.resources {
			if r.GetNamespace() == name {
				delete(s.store.resources, k)
			}
		}
	}
	s.store.resourcesDirty = true
	s.Record("resource-deleted", resources.ObjectName(found), "")
	s.hub.fire(triggers.HubResourceChanged, key, "", "")
	return nil
}

// HubObjects lists hub resources in key order, rebuilt only after a change.
func (st *store) HubObjects() []*unstructured.Unstructured {
	if st.resourcesDirty {
		st.resourceList = st.resourceList[:0]
		for _, o := range st.resources {
			st.resourceList = append(st.resourceList, o)
		}
		slices.SortFunc(st.resourceList, func(a, b *unstructured.Unstructured) int { return cmp.Compare(resources.Key(a), resources.Key(b)) })
		st.resourcesDirty = false
	}
	return st.resourceList
}
