package sim

import (
	"math"
	"time"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/model/triggers"
	"github.com/fleetsim/fleetsim/sim/timing"
)

// controller identifies one of the hub's reconcilers.
type controller uint8

const (
	ctrlMembership controller = iota
	ctrlPolicy
	ctrlScheduler
	ctrlRollout
	ctrlWork
	ctrlEviction
	ctrlStaged
	numControllers
)

var controllerNames = [numControllers]string{"membership", "policy-snapshot", "scheduler", "rollout", "work-generator", "eviction", "staged-update"}

// hub holds the controllers' in-memory state: their work queues and requeue timers. A hub
// restart loses all of it; the store keeps everything persisted.
type hub struct {
	s     *Sim
	epoch uint32
	up    bool
	// Both are indexed by interned key; a zero timer means none.
	queued [numControllers][]bool
	timers [numControllers][]time.Duration
	// With Config.Hub: when each worker is next free, and the token bucket (tokens at
	// bucketAt).
	workerFree []time.Duration
	tokens     float64
	bucketAt   time.Duration
	// With Config.HubModel: the API server's and the hub's cores.
	cores *timing.Cores
	// recs caches member records by interned key, valid while the store's memberGen is
	// recsGen: a health timer finds its member without hashing its name.
	recs    []*memberRecord
	recsGen uint64
}

// memberRecord returns the store's record of the member whose name is interned key id, or
// nil.
func (h *hub) memberRecord(id int32) *memberRecord {
	st := h.s.store
	if h.recsGen != st.memberGen {
		clear(h.recs)
		h.recsGen = st.memberGen
	}
	if int(id) < len(h.recs) && h.recs[id] != nil {
		return h.recs[id]
	}
	r := st.members[h.s.keys[id]]
	if r != nil {
		for int(id) >= len(h.recs) {
			h.recs = append(h.recs, nil)
		}
		h.recs[id] = r
	}
	return r
}

func newHub(s *Sim) hub {
	h := hub{s: s, up: true}
	h.reset()
	return h
}

func (h *hub) reset() {
	for c := range numControllers {
		h.queued[c] = h.queued[c][:0]
		h.timers[c] = h.timers[c][:0]
	}
	if hc := h.s.cfg.Hub; hc != nil {
		h.workerFree = make([]time.Duration, hc.Workers)
		for i := range h.workerFree {
			h.workerFree[i] = h.s.now
		}
		h.tokens, h.bucketAt = float64(hc.Burst), h.s.now
	}
	if hm := h.s.cfg.HubModel; hm != nil {
		h.workerFree = make([]time.Duration, hm.Workers)
		for i := range h.workerFree {
			h.workerFree[i] = h.s.now
		}
		if h.cores == nil {
			h.cores = timing.NewCores(hm.Calibration) // the API server outlives a hub restart
		}
	}
}

// modelDelay is decisionDelay under Config.HubModel for a decision of controller c about
// key: a worker, then the decision's CPU and its writes on the shared cores, then a round
// trip.
func (h *hub) modelDelay(c controller, key string) time.Duration {
	cal := h.s.cfg.HubModel.Calibration
	w := 0
	for i, free := range h.workerFree {
		if free < h.workerFree[w] {
			w = i
		}
	}
	start := max(h.s.now, h.workerFree[w])
	n := h.bindingsHandled(c, key)
	// A policy snapshot's status holds a decision for every member the scheduler saw, up
	// to its limit (picked and not picked).
	decisions := min(len(h.s.store.members), scheduler.DefaultMaxDecisions)
	writes := cal.DecisionWrites(controllerNames[c], n, decisions)
	// The CPU per binding goes with the writes (HubCPUPerWrite); a decision that writes
	// nothing spends it before it ends.
	cpu := cal.DecisionCPU(0)
	if len(writes) == 0 {
		cpu = cal.DecisionCPU(n)
	}
	decided := h.cores.Serve(start, cpu)
	end := decided
	share := cal.HubCPUPerWrite(n, len(writes))
	for _, wr := range writes {
		end = max(end, h.cores.Serve(decided, share+cal.WriteCPU(wr.Cost)))
	}
	end += cal.RoundTrip()
	h.workerFree[w] = end
	return end - h.s.now
}

// bindingsHandled is how many bindings a decision about key handles: one for a binding's,
// the placement's bindings (or, before it has any, the clusters its policy asks for) for a
// placement-wide one, none for a member's.
func (h *hub) bindingsHandled(c controller, key string) int {
	switch c {
	case ctrlMembership:
		return 0
	case ctrlWork:
		return 1
	}
	st := h.s.store
	n := len(st.byCRP[key])
	if p := st.placements[key]; p != nil && n == 0 {
		pol := p.CRP.Spec.Policy
		switch {
		case pol != nil && pol.NumberOfClusters != nil:
			n = int(*pol.NumberOfClusters)
		case pol != nil && len(pol.ClusterNames) > 0:
			n = len(pol.ClusterNames)
		default:
			n = len(st.members)
		}
	}
	return n
}

// decisionDelay is how long from now a decision queued now ends: HubDelay, or with
// Config.Hub the wait for a worker and for the decision's API tokens plus DecisionTime.
func (h *hub) decisionDelay(c controller, key string) time.Duration {
	if h.s.cfg.HubModel != nil {
		return h.modelDelay(c, key)
	}
	hc := h.s.cfg.Hub
	if hc == nil {
		return h.s.cfg.HubDelay
	}
	w := 0
	for i, free := range h.workerFree {
		if free < h.workerFree[w] {
			w = i
		}
	}
	start := max(h.s.now, h.workerFree[w])
	// Refill the bucket up to start, then take this decision's calls, waiting for them.
	// Hand-written rather than golang.org/x/time/rate with explicit times: rate.Limiter
	// refuses a reservation of more tokens than its burst (a decision may make more calls
	// than Burst, and then waits here), it needs wall-clock time.Time values rather than
	// the simulation's durations, and it rounds waits to nanoseconds where the timeline
	// keeps whole microseconds; every trace hash depends on these waits.
	if start > h.bucketAt {
		h.tokens = min(float64(hc.Burst), h.tokens+(start-h.bucketAt).Seconds()*hc.QPS)
		h.bucketAt = start
	}
	at := h.bucketAt
	if need := float64(hc.CallsPerDecision); h.tokens < need {
		// Whole microseconds, so that times read well in the timeline.
		at += time.Duration(math.Ceil((need-h.tokens)/hc.QPS*1e6)) * time.Microsecond
		h.tokens = 0
		h.bucketAt = at
	} else {
		h.tokens -= need
	}
	end := max(at, start) + hc.DecisionTime
	h.workerFree[w] = end
	return end - h.s.now
}

// enqueue adds key to controller c's work queue; a key already queued is not added twice,
// as in a controller work queue.
func (h *hub) enqueue(c controller, key string) {
	if !h.up {
		return
	}
	id := h.s.key(key)
	h.grow(c, id)
	if h.queued[c][id] {
		return
	}
	h.queued[c][id] = true
	h.s.push(h.decisionDelay(c, key), event{kind: evReconcile, ctrl: c, ref: id, epoch: h.epoch})
}

// enqueueAll queues every placement for controller c, in name order.
func (h *hub) enqueueAllPlacements(c controller) {
	for _, n := range h.s.store.PlacementNames() {
		h.enqueue(c, n)
	}
}

// requeueAfter asks for key to be reconciled again after d. Only the earliest pending timer
// per key is kept, so a member's health timer does not multiply with its heartbeats.
func (h *hub) requeueAfter(c controller, key string, d time.Duration) {
	h.requeueAfterID(c, h.s.key(key), d)
}

// requeueAfterID is requeueAfter for an interned key.
func (h *hub) requeueAfterID(c controller, id int32, d time.Duration) {
	due := h.s.now + d
	h.grow(c, id)
	if cur := h.timers[c][id]; cur != 0 && cur <= due {
		return
	}
	h.timers[c][id] = due
	h.s.schedule(due, event{kind: evRequeue, ctrl: c, ref: id, epoch: h.epoch})
}

// grow makes room for key id in controller c's tables.
func (h *hub) grow(c controller, id int32) {
	for int(id) >= len(h.queued[c]) {
		h.queued[c] = append(h.queued[c], false)
		h.timers[c] = append(h.timers[c], 0)
	}
}

func (h *hub) requeueFired(e *event) bool {
	if e.epoch != h.epoch || int(e.ref) >= len(h.timers[e.ctrl]) || h.timers[e.ctrl][e.ref] != h.s.now {
		return false // lost with a hub restart, or superseded by an earlier timer
	}
	h.timers[e.ctrl][e.ref] = 0
	if h.queued[e.ctrl][e.ref] {
		return false // a reconcile is already on its way
	}
	if e.ctrl == ctrlMembership {
		// A heartbeat since the timer was set postpones the health check: move the timer
		// rather than reconcile a member whose decision cannot have changed.
		r := h.memberRecord(e.ref)
		if r != nil && r.HealthyReported && !r.Member.Leaving {
			if at := h.staleAt(r); at > h.s.now {
				h.requeueAfterID(ctrlMembership, e.ref, at-h.s.now)
				return false
			}
		}
	}
	h.reconcile(e.ctrl, h.s.keys[e.ref])
	return true
}

// staleAt is membership.StaleAt of the record's member as time since the start; from its
// agent's last heartbeat as a duration when the member still holds that heartbeat.
func (h *hub) staleAt(r *memberRecord) time.Duration {
	if r.agent != nil {
		if beat, ok := r.agent.lastBeat(r.Member); ok {
			return beat + h.s.cfg.Eligibility.HeartbeatTimeout + time.Nanosecond
		}
	}
	return membership.StaleAt(r.Member, h.s.cfg.Eligibility).Sub(h.s.cfg.Start)
}

func (h *hub) process(e *event) bool {
	if e.epoch != h.epoch || int(e.ref) >= len(h.queued[e.ctrl]) {
		return false
	}
	h.queued[e.ctrl][e.ref] = false
	h.reconcile(e.ctrl, h.s.keys[e.ref])
	return true
}

func (h *hub) reconcile(c controller, key string) {
	h.s.decided(c, key)
	h.s.controllers.Reconcile(triggerOf[c], key)
}

// restart drops the controllers' memory; they come back after HubRestartDelay and rebuild
// their queues from the store, like informers listing everything on start.
func (h *hub) restart() {
	h.epoch++
	h.up = false
	h.reset()
	h.s.Record("hub-stopped", "", "")
	h.s.push(h.s.cfg.HubRestartDelay, event{kind: evHubStart, epoch: h.epoch})
}

func (h *hub) start(e *event) bool {
	if e.epoch != h.epoch {
		return false
	}
	h.up = true
	h.s.Record("hub-started", "", "")
	h.fire(triggers.HubStarted, "", "", "")
	return true
}

var triggerOf = [numControllers]triggers.Controller{
	ctrlMembership: triggers.Membership, ctrlPolicy: triggers.PolicySnapshot, ctrlScheduler: triggers.Scheduler,
	ctrlRollout: triggers.Rollout, ctrlWork: triggers.WorkGenerator, ctrlEviction: triggers.Eviction, ctrlStaged: triggers.StagedUpdate,
}

var controllerOf = map[triggers.Controller]controller{
	triggers.Membership: ctrlMembership, triggers.PolicySnapshot: ctrlPolicy,
	triggers.Scheduler: ctrlScheduler, triggers.Rollout: ctrlRollout, triggers.WorkGenerator: ctrlWork,
	triggers.Eviction: ctrlEviction, triggers.StagedUpdate: ctrlStaged,
}

// fire queues what the shared trigger table says a change wakes. key is the changed
// object; placement and member name the placement it belongs to and the member it targets,
// where those apply.
func (h *hub) fire(c triggers.Change, key, placement, member string) {
	for _, t := range triggers.For(c) {
		ctrl := controllerOf[t.Controller]
		switch t.Scope {
		case triggers.ThisObject:
			h.enqueue(ctrl, key)
		case triggers.OwningPlacement:
			h.enqueue(ctrl, placement)
		case triggers.TargetMember:
			h.enqueue(ctrl, member)
		case triggers.AllPlacements:
			h.enqueueAllPlacements(ctrl)
		case triggers.AllMembers:
			for _, n := range h.s.store.MemberClusterNames() {
				h.enqueue(ctrl, n)
			}
		case triggers.PlacementBindings:
			for _, p := range h.s.store.PlacementNames() {
				if placement == "" || p == placement {
					for _, b := range h.s.store.byCRP[p] {
						h.enqueue(ctrl, b.Name)
					}
				}
			}
		case triggers.AllRuns:
			for _, n := range h.s.store.UpdateRunNames() {
				h.enqueue(ctrl, n)
			}
		case triggers.AllEvictions:
			for _, n := range sortedKeys(h.s.store.evictions) {
				h.enqueue(ctrl, n)
			}
		}
	}
}

// memberChanged records a change of a member that can alter scheduling and fires it.
func (h *hub) memberChanged(name string, c triggers.Change) {
	h.s.Record("member-changed", name, string(c))
	h.fire(c, name, "", name)
}

// The simulator is the controllers' environment (hub.Env).

// Fire queues what the trigger table says a change wakes.
func (s *Sim) Fire(c triggers.Change, key, placement, member string) {
	s.hub.fire(c, key, placement, member)
}

// RequeueAfter asks for a reconcile after d.
func (s *Sim) RequeueAfter(c triggers.Controller, key string, d time.Duration) {
	s.hub.requeueAfter(controllerOf[c], key, d)
}

// MemberNotified lets the member's agent see its InternalMemberCluster after the sync delay.
func (s *Sim) MemberNotified(member string) {
	if r := s.store.members[member]; r != nil {
		s.notifyAgent(r)
	}
}

// WorkWritten has the member's agent apply the work after the sync delay.
func (s *Sim) WorkWritten(w *mhub.Work) {
	s.scheduleApply(w.Member, w.Binding, w.Name, w.Generation, s.cfg.AgentSyncDelay)
}
