package agentk8s

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Sightings remembers when an agent first saw each finding (a drift or a diff of one
// manifest), so the firstDriftedObservedTime and firstDiffedObservedTime it reports stay put
// while the finding lasts. The simulator's member agents and `fleet member` share it.
type Sightings map[string]time.Time

// FirstSeen returns when the finding key was first seen, remembering now if it is new; when
// found is false the finding is gone, so it is forgotten and the zero time returned.
func (s *Sightings) FirstSeen(key string, found bool, now time.Time) time.Time {
	if !found {
		delete(*s, key)
		return time.Time{}
	}
	if *s == nil {
		*s = Sightings{}
	}
	t, ok := (*s)[key]
	if !ok {
		t = now
		(*s)[key] = t
	}
	return t
}

// RetainWorks forgets the findings of every Work for which live is false: a gone Work's
// findings would otherwise stay forever.
func (s Sightings) RetainWorks(live func(work string) bool) {
	for k := range s {
		if work, _, _ := strings.Cut(k, "|"); !live(work) {
			delete(s, k)
		}
	}
}

// sightingKey names the findings of one manifest of a Work (RunWork adds the kind of
// finding): the Work, then the object's API group, kind, namespace and name. The group
// keeps apart objects whose kinds share a name, such as the Deployment of apps and a CRD's
// Deployment; the version is left out, as it names the same object. A Work's name has no
// "|" (it is a Kubernetes name), so RetainWorks can find it.
func sightingKey(work string, m *unstructured.Unstructured) string {
	gvk := m.GroupVersionKind()
	return work + "|" + gvk.Group + "/" + gvk.Kind + "/" + m.GetNamespace() + "/" + m.GetName()
}
