package hub

// Queueing: how a wake reaches a controller's workqueue, at once or after a delay, noted
// in the wake ledger on the way, and held until the controller's queue exists. The only
// code that touches the queues; separate from triggers.go (which wakes to make) and
// decision.go (what a dequeued key runs).

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fleetsim/fleetsim/model/triggers"
)

func (h *Hub) enqueue(c triggers.Controller, key string) { h.enqueueAfter(c, key, 0) }

func (h *Hub) enqueueAfter(c triggers.Controller, key string, d time.Duration) {
	if key == "" {
		return
	}
	if ledgered[c] {
		h.wakes.woke(c, key)
	}
	h.add(c, key, d)
}

// requeueAt wakes controller c for key again after d: a timed wake, which only a decision
// taken after d serves. It is semantic time (an unavailable period, a staged-run wait, a
// heartbeat timeout): it is scheduled on the hub's clock, not with the workqueue's
// wall-clock AddAfter, so that a mock clock's Add fires it (docs/architecture.md › Time).
func (h *Hub) requeueAt(c triggers.Controller, key string, d time.Duration) {
	clk := h.clock()
	if ledgered[c] {
		h.wakes.wokeAt(c, key, clk.Now().Add(d))
	}
	if d <= 0 {
		h.add(c, key, 0)
		return
	}
	clk.AfterFunc(d, func() { h.add(c, key, 0) })
}

// add queues key for controller c, after d on the wall clock: the delays that reach it
// directly (enqueueAfter) are latency-only batching windows, which never change an
// outcome; timed wakes go through requeueAt and the hub's clock.
func (h *Hub) add(c triggers.Controller, key string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queues[c]
	if q == nil {
		// Controllers start concurrently: keep the key until the queue is there.
		if h.pending == nil {
			h.pending = map[triggers.Controller][]string{}
		}
		h.pending[c] = append(h.pending[c], key)
		return
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: key}}
	if d > 0 {
		q.AddAfter(req, d)
		return
	}
	q.Add(req)
}

// queueSource hands the hub controller c's queue when the controller starts, so fired
// changes can reach it, with the keys fired before it started.
func (h *Hub) queueSource(c triggers.Controller) source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.queues == nil {
			h.queues = map[triggers.Controller]workqueue.TypedRateLimitingInterface[reconcile.Request]{}
		}
		h.queues[c] = q
		for _, key := range h.pending[c] {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: key}})
		}
		delete(h.pending, c)
		return nil
	})
}
