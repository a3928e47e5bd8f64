package member

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetsim/fleetsim/agentk8s"
)

// TestWatcherEvent: an event marks the Works whose AppliedWorks own the object, unless it is
// the agent's own write (the resourceVersion it wrote) or the object is not Fleet's.
func TestWatcherEvent(t *testing.T) {
	cm := schema.GroupKind{Kind: "ConfigMap"}
	owned := func(rv string, works ...string) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{Namespace: "web", Name: "settings", ResourceVersion: rv}
		for _, w := range works {
			m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{Kind: agentk8s.AppliedWorkKind, Name: w})
		}
		return m
	}
	deleted := owned("7", "web-work")
	deleted.DeletionTimestamp = &metav1.Time{}
	other := owned("9")
	other.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs"}}
	for _, tc := range []struct {
		name  string
		obj   *metav1.ObjectMeta
		marks map[string]bool
		woken bool
	}{
		{name: "edit by someone else", obj: owned("8", "web-work"), marks: map[string]bool{"web-work": true}, woken: true},
		{name: "owned by two Works", obj: owned("8", "a-work", "b-work"), marks: map[string]bool{"a-work": true, "b-work": true}, woken: true},
		{name: "the agent's own write", obj: owned("7", "web-work"), marks: map[string]bool{}},
		{name: "deleted at the written version", obj: deleted, marks: map[string]bool{"web-work": true}, woken: true},
		{name: "not Fleet's", obj: other, marks: map[string]bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatcher(context.Background(), nil)
			w.wrote(cm, "web", "settings", "7")
			w.event(cm, tc.obj)
			if diff := cmp.Diff(tc.marks, w.dirty); diff != "" {
				t.Errorf("marks (-want +got):\n%s", diff)
			}
			woken := len(w.wake()) == 1
			if woken != tc.woken {
				t.Errorf("woken %v, want %v", woken, tc.woken)
			}
			for name := range tc.marks {
				if !w.take(name) || w.take(name) {
					t.Errorf("take(%s) did not report the mark once", name)
				}
			}
		})
	}
	var none *watcher
	if none.take("web-work") || none.wake() != nil {
		t.Error("a nil watcher marks or wakes")
	}
	none.wrote(cm, "web", "settings", "1")
	none.mark("web-work")
}
