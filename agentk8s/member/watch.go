package member

import (
	"context"
	"fmt"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/fleetsim/fleetsim/agentk8s"
)

// watcher follows the objects the agent applied on the member: one metadata informer per
// applied kind, started when the agent first records an object of that kind. An add, update
// or delete of an object an AppliedWork owns marks that Work for a check in the next round
// and wakes the agent, so drift is found within a round instead of on the period. Events of
// the agent's own writes (the resourceVersion it wrote) are ignored; others that change
// nothing cost one idempotent decision, which writes nothing.
type watcher struct {
	client metadata.Interface
	ctx    context.Context

	mu      sync.Mutex
	started map[schema.GroupVersionResource]bool
	dirty   map[string]bool
	written map[string]string // object key → resourceVersion of the agent's last write
	kick    chan struct{}
}

func newWatcher(ctx context.Context, c metadata.Interface) *watcher {
	return &watcher{client: c, ctx: ctx, started: map[schema.GroupVersionResource]bool{},
		dirty: map[string]bool{}, written: map[string]string{}, kick: make(chan struct{}, 1)}
}

func objectKey(gk schema.GroupKind, namespace, name string) string {
	return gk.String() + "/" + namespace + "/" + name
}

// wrote records the resourceVersion of a write of the agent, whose event is not drift.
func (w *watcher) wrote(gk schema.GroupKind, namespace, name, resourceVersion string) {
	if w == nil || resourceVersion == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written[objectKey(gk, namespace, name)] = resourceVersion
}

// watch starts the informer of a resource unless it runs already.
func (w *watcher) watch(gvr schema.GroupVersionResource, gk schema.GroupKind) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started[gvr] {
		return nil
	}
	inf := metadatainformer.NewFilteredMetadataInformer(w.client, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	on := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		w.event(gk, m)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    on,
		UpdateFunc: func(_, obj any) { on(obj) },
		DeleteFunc: on,
	}); err != nil {
		return fmt.Errorf("watch %s: %w", gvr, err)
	}
	w.started[gvr] = true
	go inf.Run(w.ctx.Done())
	return nil
}

// event marks the Works whose AppliedWorks own an object that someone else changed.
func (w *watcher) event(gk schema.GroupKind, m metav1.Object) {
	owners := slices.DeleteFunc(slices.Clone(m.GetOwnerReferences()), func(r metav1.OwnerReference) bool {
		return r.Kind != agentk8s.AppliedWorkKind
	})
	if len(owners) == 0 {
		return
	}
	w.mu.Lock()
	if m.GetDeletionTimestamp() == nil && w.written[objectKey(gk, m.GetNamespace(), m.GetName())] == m.GetResourceVersion() {
		w.mu.Unlock()
		return
	}
	for _, r := range owners {
		// An AppliedWork is named after its Work.
		w.dirty[r.Name] = true
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// take reports whether a Work is marked, and clears the mark.
func (w *watcher) take(work string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.dirty[work]
	delete(w.dirty, work)
	return d
}

// mark marks a Work again (its check failed).
func (w *watcher) mark(work string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dirty[work] = true
}

// wake is the channel a round waits on besides the poll period; nil (never ready) without
// a watcher.
func (w *watcher) wake() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.kick
}

// watchApplied starts watching the kinds of the applied resources (from Run only: the
// informers live as long as its context).
func (a *Agent) watchApplied(applied []appliedResource) {
	if a.watch == nil {
		return
	}
	for _, r := range applied {
		gvk := r.gvk()
		mapping, err := a.Member.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			a.Log.Info("cannot watch an applied kind; its drift is found on the period", "kind", gvk.String(), "error", err.Error())
			continue
		}
		if err := a.watch.watch(mapping.Resource, gvk.GroupKind()); err != nil {
			a.Log.Info("cannot watch an applied kind; its drift is found on the period", "kind", gvk.String(), "error", err.Error())
		}
	}
}
