package hub

// One decision: what a controller does with a key it dequeued. It takes the locks and a
// worker slot, waits for the hub's own writes, loads its scope, decides, flushes, fires
// the changes it made and records its events (consistency.go has the rules). Separate
// from the setup (controllers.go) and the wiring around it (triggers.go, queue.go): the
// path every wake ends in.

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// flushTimeout bounds a decision's writes, which run to the end even when the hub is
// told to stop: a flush cut half-way is what the next hub would have to repair.
const flushTimeout = 20 * time.Second

// reconcile runs one controller for one key: it takes the locks of consistency.go's rule 3
// and a worker slot, waits until the cache holds the hub's own writes, reads the decision's
// scope from the cache, decides, writes what changed, then fires the changes it made.
func (h *Hub) reconcile(ctx context.Context, c triggers.Controller, key string) (reconcile.Result, error) {
	// Wall time: metrics and the report-batching windows are latency only and never
	// change an outcome; semantic time is h.clock() (docs/architecture.md › Time).
	arrived := time.Now()
	if c == WorkStatus {
		// Last, after the flush and the changes it fired: the placement-wide decisions
		// held back for the placement's fan-ins go once the last one is done.
		defer h.fanInDone(key)
	}
	if h.servedInline(c, key) {
		return reconcile.Result{}, nil
	}
	h.exp.wait(ctx, writesOf("", key))
	sc, unlock, err := h.lock(ctx, c, key)
	if err != nil {
		return reconcile.Result{}, err
	}
	defer unlock()
	if h.servedInline(c, key) { // while this one waited for the lock
		return reconcile.Result{}, nil
	}
	// The ledger's mark is on the hub's clock, as the timed wakes it serves (requeueAt).
	m := h.wakes.mark(h.clock().Now())
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return reconcile.Result{}, nil
	}
	defer func() { <-h.sem }()
	start := time.Now()
	decisionWaitSeconds.WithLabelValues(string(c)).Observe(start.Sub(arrived).Seconds())
	defer func() { decisionSeconds.WithLabelValues(string(c)).Observe(time.Since(start).Seconds()) }()
	// The previous holder of the locks may have written since the first wait. A hub told to
	// stop decides nothing more: a decision on a cache that stopped following the API
	// server would write stale objects beside the next hub's.
	if sc.bindingOnly() {
		h.exp.wait(ctx, writesOfBinding(sc.placement, sc.binding))
	} else {
		h.exp.wait(ctx, writesOf(sc.placement, key))
	}
	if ctx.Err() != nil {
		return reconcile.Result{}, nil
	}
	now := h.clock().Now()
	var st *state
	var waited sync.Once
	members := memberReader{memo: &h.members, before: func() { waited.Do(func() { h.exp.wait(ctx, memberWrites) }) }}
	load := func() (*state, error) {
		return loadState(ctx, h.Cache, h.Reader, sc, members, func() ([]*unstructured.Unstructured, error) {
			// Only the placement controller selects, for the placement it decides on.
			var sels []placement.ResourceSelector
			if p := st.placements[key]; p != nil {
				sels = p.CRP.Spec.ResourceSelectors
			}
			return h.Resources.List(ctx, sels)
		})
	}
	if st, err = load(); err != nil {
		return reconcile.Result{}, err
	}
	log := h.Log.WithValues("controller", string(c), "key", key)
	var unwritten []string // fan-ins whose changes this decision's flush writes
	if sc.allBindings {
		if st, m, unwritten, err = h.fanInsFirst(ctx, st, sc, key, m, now, log, load); err != nil {
			if ctx.Err() != nil {
				return reconcile.Result{}, nil
			}
			if retryable(err) {
				decisionRetries.WithLabelValues(string(c)).Inc()
				log.V(1).Info("retrying on fresh objects", "reason", err.Error())
				//lint:ignore SA1019 a conflict is retried at once with the queue's rate-limited backoff, which RequeueAfter's fixed delay is not; returning it as an error would log every routine conflict
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, fmt.Errorf("%s %s: %w", c, key, err)
		}
	}
	var probe *invariantProbe
	if h.checker != nil {
		probe = h.checker.before(st)
	}
	env := &decisionEnv{now: now, log: log}
	var served *inlined // the wakes this decision served by running controllers inline
	if c == WorkStatus {
		h.receiveWorkStatus(st, env, key)
	} else {
		sched := h.schedulers.Get().(*scheduler.Scheduler)
		ctrls := &mhub.Controllers{Store: st, Env: env, Scheduler: sched, Eligibility: h.Eligibility, Propagation: h.Propagation}
		ctrls.Reconcile(c, key)
		if sc.allBindings {
			served = runInline(ctrls, st, env, c, key, h.dueWakes(st, sc.placement, m))
		}
		h.schedulers.Put(sched)
	}
	for _, w := range st.warnings {
		h.Log.V(1).Info("object left out of the hub's decisions", "reason", w.Error())
	}
	// Works this decision creates have no report to fan in: the agent's first report
	// wakes the fan-in through the Work's watch.
	var newWorks map[string]bool
	for _, b := range env.worksWritten {
		if len(st.workObjs[b]) == 0 {
			if newWorks == nil {
				newWorks = map[string]bool{}
			}
			newWorks[b] = true
		}
	}
	// Before the flush: an agent may report on its Work before the rest is written. A
	// flush that fails leaves Works awaited that were not written, for awaitLimit at most.
	writing := time.Now()
	for _, b := range env.worksWritten {
		h.awaited.expect(st.placementOf(b), b, writing)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	flushErr := st.flush(fctx, h.Client, now)
	// Changes are fired even when the writes stopped part-way: some of them happened, and
	// every controller decides on current objects, so a change fired for nothing costs one
	// decision while a change lost could stall a rollout.
	if flushErr != nil {
		// What ran inline may not be written: every controller it woke decides again on
		// its own.
		served = nil
	}
	for i, f := range env.fired {
		h.fireExcept(ctx, st, f.change, f.key, f.placement, f.memberOf, served.skip(i))
	}
	if flushErr != nil {
		if retryable(flushErr) {
			// Someone wrote first, or the decision was made on a cache that missed a
			// write: decide again on fresh objects.
			decisionRetries.WithLabelValues(string(c)).Inc()
			log.V(1).Info("retrying on fresh objects", "reason", flushErr.Error())
			//lint:ignore SA1019 as above: the rate-limited retry of a conflict, without an error log
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, fmt.Errorf("%s %s: %w", c, key, flushErr)
	}
	h.wakes.served(c, key, m)
	for _, b := range unwritten {
		h.wakes.served(WorkStatus, b, m)
		h.fanInDone(b)
	}
	served.note(&h.wakes, m)
	for _, r := range env.requeues {
		h.requeueAt(r.c, r.key, r.after)
	}
	h.sendEvents(st, env)
	if probe != nil {
		for _, v := range h.checker.after(st, probe, now) {
			h.reportViolation(st, log, v)
		}
	}
	// The simulator delivers the agent's report after every Work it writes; here the agent
	// may report nothing new (a Work whose manifests did not change), so the fan-in looks.
	for _, b := range env.worksWritten {
		if !newWorks[b] {
			h.batch.queued(st.placementOf(b), b)
			h.enqueue(WorkStatus, b)
		}
	}
	return reconcile.Result{}, nil
}

// retryable errors mean the decision was made on objects that changed since: it is taken
// again on fresh ones.
func retryable(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err)
}

// lock resolves what a decision is about and takes its locks (consistency.go, rule 3).
func (h *Hub) lock(ctx context.Context, c triggers.Controller, key string) (scope, func(), error) {
	switch c {
	case triggers.PolicySnapshot, triggers.Scheduler, triggers.Rollout:
		return scope{placement: key, allBindings: true}, h.locks.placementWide(key), nil
	case triggers.Eviction:
		e := &v1beta1.ClusterResourcePlacementEviction{}
		ok, err := get(ctx, h.Cache, key, "", e)
		if err != nil || !ok {
			return scope{eviction: key}, func() {}, err
		}
		p := e.Spec.PlacementName
		return scope{eviction: key, placement: p, allBindings: true}, h.locks.placementWide(p), nil
	case triggers.StagedUpdate:
		r := &v1beta1.ClusterStagedUpdateRun{}
		ok, err := get(ctx, h.Cache, key, "", r)
		if err != nil || !ok {
			return scope{run: key}, func() {}, err
		}
		p := r.Spec.PlacementName
		return scope{run: key, placement: p, allBindings: true}, h.locks.placementWide(p), nil
	}
	// A decision about one binding: its placement is on its label, or on its Work's when
	// the binding is gone.
	p := ""
	b := &v1beta1.ClusterResourceBinding{}
	if err := h.Cache.Get(ctx, client.ObjectKey{Name: key}, b, client.UnsafeDisableDeepCopy); err == nil {
		p = b.Labels[v1beta1.CRPTrackingLabel]
	} else if !apierrors.IsNotFound(err) {
		return scope{}, nil, fmt.Errorf("get ClusterResourceBinding %s: %w", key, err)
	} else {
		var ws v1beta1.WorkList
		if err := h.Cache.List(ctx, &ws, client.MatchingFields{indexBinding: key}, client.UnsafeDisableDeepCopy); err != nil {
			return scope{}, nil, fmt.Errorf("list Works of %s: %w", key, err)
		}
		if len(ws.Items) > 0 {
			p = ws.Items[0].Labels[v1beta1.CRPTrackingLabel]
		}
	}
	return scope{placement: p, binding: key}, h.locks.binding(p, key), nil
}

// sendEvents records what a decision did as Kubernetes events on the placement it was about.
// Records of one kind go out as one event per placement (byKind).
func (h *Hub) sendEvents(st *state, env *decisionEnv) {
	var order []string
	per := map[string][]record{}
	for _, e := range env.records {
		p := st.placementOf(e.subject)
		if st.crps[p] == nil {
			continue
		}
		if _, ok := per[p]; !ok {
			order = append(order, p)
		}
		per[p] = append(per[p], e)
	}
	for _, p := range order {
		for _, e := range byKind(per[p]) {
			sendEvent(h.Events, st.crps[p], e)
		}
	}
}
