package sim

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/model/triggers"
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
	h.s.push(h.s.cfg.HubDelay, event{kind: evReconcile, ctrl: c, ref: id, epoch: h.epoch})
}

// enqueueAll queues every placement for controller c, in name order.
func (h *hub) enqueueAllPlacements(c controller) {
	for _, n := range h.s.store.placementNames() {
		h.enqueue(c, n)
	}
}

// requeueAfter asks for key to be reconciled again after d. Only the earliest pending timer
// per key is kept, so a member's health timer does not multiply with its heartbeats.
func (h *hub) requeueAfter(c controller, key string, d time.Duration) {
	due := h.s.now + d
	id := h.s.key(key)
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
		r := h.s.store.members[h.s.keys[e.ref]]
		if r != nil && r.reportedHealthy && !r.m.Leaving {
			if at := membership.StaleAt(r.m, h.s.cfg.Eligibility).Sub(h.s.cfg.Start); at > h.s.now {
				h.requeueAfter(ctrlMembership, h.s.keys[e.ref], at-h.s.now)
				return false
			}
		}
	}
	h.reconcile(e.ctrl, h.s.keys[e.ref])
	return true
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
	switch c {
	case ctrlMembership:
		h.reconcileMember(key)
	case ctrlPolicy:
		h.reconcilePolicy(key)
	case ctrlScheduler:
		h.reconcileScheduler(key)
	case ctrlRollout:
		h.reconcileRollout(key)
	case ctrlWork:
		h.reconcileWork(key)
	case ctrlEviction:
		h.reconcileEviction(key)
	case ctrlStaged:
		h.reconcileStaged(key)
	}
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
			for _, n := range h.s.store.memberNames() {
				h.enqueue(ctrl, n)
			}
		case triggers.PlacementBindings:
			for _, p := range h.s.store.placementNames() {
				if placement == "" || p == placement {
					for _, b := range h.s.store.byCRP[p] {
						h.enqueue(ctrl, b.Name)
					}
				}
			}
		case triggers.AllRuns:
			for _, n := range h.s.store.runNames() {
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

func (h *hub) reconcileMember(name string) {
	s := h.s
	r := s.store.members[name]
	if r == nil {
		return
	}
	plan := membership.Decide(membership.Input{
		Member: r.m, NamespaceExists: r.nsExists, IMC: r.imc,
		BindingsOnMember: s.store.byMember[name], Now: s.Now(), Eligibility: s.cfg.Eligibility,
	})
	if plan.CreateNamespace {
		r.nsExists = true
		s.Record("namespace-created", membership.Namespace(name), "with Role and RoleBinding for the member identity")
	}
	if plan.CreateIMC {
		st := membership.StateJoin
		r.imc = &st
		s.Record("imc-created", name, "state Join")
		s.notifyAgent(r)
	}
	if plan.SetIMCLeave {
		*r.imc = membership.StateLeave
		s.Record("imc-leave", name, "state Leave")
		s.notifyAgent(r)
	}
	if plan.DeleteIMC {
		r.imc = nil
	}
	if plan.DeleteNamespace {
		r.nsExists = false
		s.Record("namespace-deleted", membership.Namespace(name), "")
	}
	for _, c := range setConditions(&r.conditions, plan.Conditions, 0, s.Now()) {
		s.Record("member-condition", name, conditionText(c))
		if c.Type == membership.TypeHealthy && c.Status != metav1.ConditionTrue {
			// Losing a member changes no binding, but a PickFixed placement naming it is no
			// longer fulfilled: let placements re-decide.
			h.fire(triggers.MemberHealthLost, name, "", name)
		}
	}
	hc, _ := condition.Find(r.conditions, membership.TypeHealthy)
	r.reportedHealthy = hc.Reason == membership.ReasonHealthy
	if plan.Remove {
		s.store.removeMember(name)
		s.Record("member-left", name, "")
		return
	}
	if plan.RequeueAfter > 0 {
		h.requeueAfter(ctrlMembership, name, plan.RequeueAfter)
	}
}

func conditionText(c condition.Condition) string {
	return fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
}

func (h *hub) reconcilePolicy(name string) {
	s := h.s
	p := s.store.placements[name]
	if p == nil {
		return
	}
	if p.deleting {
		for _, b := range slices.Clone(s.store.byCRP[name]) {
			s.store.deleteBinding(b.Name)
			s.Record("binding-deleted", b.Name, "placement deleted")
			h.fire(triggers.BindingDeleted, b.Name, name, b.TargetCluster)
		}
		delete(s.store.placements, name)
		s.Record("placement-deleted", name, "")
		return
	}
	h.snapshotResources(name, p)
	latest := s.store.latest(name)
	dec := placement.DecidePolicySnapshot(name, p.generation, p.crp.Spec.Policy, latest)
	switch {
	case dec.Create != nil:
		p.snapshots = append(p.snapshots, dec.Create)
		if extra := len(p.snapshots) - 1 - p.historyLimit(); extra > 0 {
			p.snapshots = slices.Delete(p.snapshots, 0, extra)
		}
		s.Record("policy-snapshot-created", name, dec.Create.Name)
	case dec.SetNumberOfClusters != nil:
		latest.NumberOfClusters = *dec.SetNumberOfClusters
		s.Record("policy-snapshot-scaled", name, fmt.Sprintf("%s numberOfClusters=%d", latest.Name, latest.NumberOfClusters))
	default:
		return
	}
	h.fire(triggers.PolicySnapshotNew, s.store.latest(name).Name, name, "")
}

func (h *hub) reconcileScheduler(name string) {
	s := h.s
	p := s.store.placements[name]
	snap := s.store.latest(name)
	if p == nil || p.deleting || snap == nil {
		return
	}
	plan, err := s.sched.Schedule(scheduler.Input{Snapshot: snap, Members: s.store.clusters, Bindings: s.store.byCRP[name], Now: s.Now()})
	if err != nil {
		c := condition.False(condition.TypeScheduled, "InvalidSchedulingPolicy", err.Error())
		for _, c := range setConditions(&p.conditions, []condition.Condition{c}, p.generation, s.Now()) {
			s.Record("placement-condition", name, conditionText(c))
		}
		return
	}
	for _, c := range plan.Create {
		s.store.putBinding(c.Binding)
		s.newBindings = append(s.newBindings, c.Binding)
		s.Record("binding-scheduled", c.Binding.Name, scoreText(c))
	}
	for _, c := range plan.Update {
		s.store.putBinding(c.Binding)
		s.Record("binding-repicked", c.Binding.Name, c.Reason)
	}
	for _, c := range plan.Unschedule {
		s.store.putBinding(c.Binding)
		s.Record("binding-unscheduled", c.Binding.Name, c.Reason)
	}
	p.decisions = plan.Decisions
	p.scheduled, p.scheduledGen, p.observedCount = &plan.Scheduled, p.generation, plan.Placed
	for _, c := range setConditions(&p.conditions, []condition.Condition{plan.Scheduled}, p.generation, s.Now()) {
		detail := conditionText(c)
		if plan.Wanted >= 0 {
			detail += fmt.Sprintf(" (%d cluster(s) placed, %d wanted)", plan.Placed, plan.Wanted)
		}
		s.Record("placement-condition", name, detail)
	}
	for _, cs := range [][]scheduler.Change{plan.Create, plan.Update, plan.Unschedule} {
		for _, c := range cs {
			h.fire(triggers.BindingChanged, c.Binding.Name, name, c.Binding.TargetCluster)
		}
	}
	h.refreshStatus(name)
}

func scoreText(c scheduler.Change) string {
	d := c.Binding.ClusterDecision
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s", c.Reason, c.Binding.TargetCluster)
	if d.ClusterScore != nil {
		fmt.Fprintf(&b, " (affinity score %d, topology spread score %d)", d.ClusterScore.AffinityScore, d.ClusterScore.TopologySpreadScore)
	}
	return b.String()
}
