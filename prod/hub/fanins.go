package hub

// Fan-ins: the work-status controller, which copies what member agents report in Works
// into bindings, the delays that gather a burst of reports into one decision, and how a
// placement-wide decision serves its placement's queued reports first (fanInsFirst).
// Separate because the fan-in is the one controller the simulator does not run (it
// delivers reports itself): its timing and ordering are the production hub's own.

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/go-logr/logr"

	"github.com/fleetsim/fleetsim/apis/convert"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// WorkStatus is the production hub's status fan-in controller: it copies what member
// agents report in Works into bindings (model/hub.ReceiveWorkStatus). The simulator
// delivers those reports itself, so the trigger table has no entry for it.
const WorkStatus triggers.Controller = "work-status"

// rolloutBatchDelay: a report on one binding wakes its placement's placement-wide
// controllers this much later, so a burst of reports from many members is decided once.
const rolloutBatchDelay = 50 * time.Millisecond

// reportBatchDelay: a member's report wakes its placement's rollout this much later, to
// serve the fan-ins of the reports that arrive together in one decision.
const reportBatchDelay = 20 * time.Millisecond

// reportWindow: a report wakes its placement's rollout this much later instead while
// other reports of the placement are awaited (awaitedReports).
const reportWindow = 300 * time.Millisecond

// fanInDelay: a report's own fan-in decision waits this long, for the placement's rollout to
// serve it first.
const fanInDelay = reportWindow + 200*time.Millisecond

// fanInDone notes that binding's queued fan-in ran or was served: once its placement has
// none left, the placement-wide decisions held back for them go.
func (h *Hub) fanInDone(binding string) {
	p, wide := h.batch.done(binding)
	for _, c := range wide {
		h.enqueueAfter(c, p, rolloutBatchDelay)
	}
}

// fanInsFirst runs, in a placement-wide decision at m, the queued fan-ins of the
// placement's bindings (members' reports) and writes what they changed before anything
// else is decided: a binding's new status must be stored before any write of a decision
// that counted it, such as a rollout updating the next binding within its budget, or a
// reader (and a hub killed between the two writes) would see the budget broken. When the
// reports changed a condition, the decision reads again, at a new mark, what it wrote; a
// restarted hub's reports are mostly known already and change nothing.
//
// When no condition changed, the fan-ins are served only once the decision's own flush has
// written what else they changed: it returns them as unwritten.
func (h *Hub) fanInsFirst(ctx context.Context, st *state, sc scope, key string, m mark, now time.Time, log logr.Logger, load func() (*state, error)) (*state, mark, []string, error) {
	var fanIns []string
	for _, b := range slices.Sorted(maps.Keys(st.bindings)) {
		if st.bindings[b].Placement == sc.placement && len(st.works[b]) > 0 && h.wakes.due(WorkStatus, b, m) {
			fanIns = append(fanIns, b)
		}
	}
	if len(fanIns) == 0 {
		return st, m, nil, nil
	}
	env := &decisionEnv{now: now, log: log.WithValues("fanIns", len(fanIns))}
	var probe *invariantProbe
	if h.checker != nil {
		probe = h.checker.before(st)
	}
	for _, b := range fanIns {
		h.receiveWorkStatus(st, env, b)
	}
	served := func() {
		for _, b := range fanIns {
			h.wakes.served(WorkStatus, b, m)
			h.fanInDone(b)
		}
	}
	if len(env.fired) == 0 {
		// No condition changed: what else changed (observation times, failed manifests
		// that follow the conditions) is written with the rest of the decision.
		return st, m, fanIns, nil
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	err := st.flush(fctx, h.Client, now)
	for _, f := range env.fired {
		h.fire(ctx, st, f.change, f.key, f.placement, f.memberOf)
	}
	if err != nil {
		return nil, m, nil, err
	}
	served()
	h.sendEvents(st, env)
	if probe != nil {
		for _, v := range h.checker.after(st, probe, now) {
			h.reportViolation(st, log, v)
		}
	}
	m = h.wakes.mark(h.clock().Now())
	h.exp.wait(ctx, writesOf(sc.placement, key))
	if ctx.Err() != nil {
		return nil, m, nil, ctx.Err()
	}
	st, err = load()
	return st, m, nil, err
}

// receiveWorkStatus runs the fan-in for the binding named key: what the agent reported on
// each of the binding's Works, folded into the binding (a Work with no report on its
// generation counts as not applied).
func (h *Hub) receiveWorkStatus(st *state, env mhub.Env, key string) {
	ms := st.Works(key)
	if len(ms) == 0 {
		return
	}
	gen := ms[0].Generation
	var all []mhub.WorkStatus
	for _, m := range ms {
		ws := mhub.WorkStatus{Work: m.Name}
		if w := st.workObjs[key][m.Name]; w != nil && m.Generation == gen {
			if r, ok := convert.WorkStatusToModel(w, m.Envelopes); ok {
				ws.Report = r
			}
		}
		all = append(all, ws)
	}
	mhub.ReceiveWorkStatus(st, env, key, gen, all)
}
