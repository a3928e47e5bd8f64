package sim

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// work is a Work object in a member's reserved namespace: the overridden manifests of one
// binding at one binding generation.
type work struct {
	name       string
	binding    string
	member     string
	generation int64
	manifests  []*unstructured.Unstructured
	// envelopes[i] names the envelope manifests[i] came in, or is nil.
	envelopes []*placement.NamespacedName
	// applied is whether, and appliedAt when, the member agent applied this generation.
	applied   bool
	appliedAt time.Duration
}

// WorkloadBehavior scripts how a resource behaves on members.
type WorkloadBehavior string

const (
	// WorkloadAvailable: applies and, if trackable, becomes available after WorkloadReadyDelay.
	WorkloadAvailable WorkloadBehavior = "available"
	// WorkloadUnavailable: applies but never becomes available (a bad image).
	WorkloadUnavailable WorkloadBehavior = "unavailable"
	// WorkloadApplyFails: the apply is refused.
	WorkloadApplyFails WorkloadBehavior = "applyFails"
)

// workloadRule says how matching resources behave; later rules override earlier ones.
type workloadRule struct {
	member, kind, name, namespace string
	behavior                      WorkloadBehavior
}

// SetWorkload scripts a resource's behaviour on one member, or on every member with "*".
// Kind matches exactly; an empty name or namespace matches any.
func (s *Sim) SetWorkload(member, kind, name, namespace string, b WorkloadBehavior) error {
	switch b {
	case WorkloadAvailable, WorkloadUnavailable, WorkloadApplyFails:
	default:
		return fmt.Errorf("workload behavior %q is not one of available, unavailable, applyFails", b)
	}
	s.workloads = append(s.workloads, workloadRule{member: member, kind: kind, name: name, namespace: namespace, behavior: b})
	s.Record("workload-behavior", member, fmt.Sprintf("%s %s/%s: %s", kind, namespace, name, b))
	// Members re-evaluate what they run, as a changed image would make them.
	for _, w := range s.store.sortedWorks() {
		if member == "*" || member == w.member {
			s.scheduleApply(w.member, w.binding, w.generation, 0)
		}
	}
	return nil
}

func (s *Sim) workloadBehavior(member string, o *unstructured.Unstructured) WorkloadBehavior {
	b := WorkloadAvailable
	for _, r := range s.workloads {
		if (r.member == "*" || r.member == member) && r.kind == o.GetKind() &&
			(r.name == "" || r.name == o.GetName()) && (r.namespace == "" || r.namespace == o.GetNamespace()) {
			b = r.behavior
		}
	}
	return b
}

// Per-cluster WorkSynchronized reasons (WORK-SYNC).
const (
	ReasonAllWorkSynced  = "AllWorkSynced"
	ReasonSyncWorkFailed = "SyncWorkFailed"
)

// reconcileWork is the work generator for one binding: it applies the binding's override
// snapshots to its resource snapshot for the target member and writes the Work, setting the
// binding's Overridden and WorkSynchronized conditions (WORK-SYNC, OVR-STATUS).
func (h *hub) reconcileWork(bindingName string) {
	s := h.s
	b := s.store.bindings[bindingName]
	if b == nil {
		delete(s.store.works, bindingName)
		return
	}
	bound := b.State == placement.Bound || (b.State == placement.Unscheduled && b.PreviousState == placement.Bound)
	if !bound || b.ResourceSnapshotName == "" {
		return
	}
	p := s.store.placements[b.Placement]
	if p == nil {
		return
	}
	snap := p.resourceSnapshotByName(b.ResourceSnapshotName)
	r := s.store.members[b.TargetCluster]
	now := s.Now()
	changed := false
	set := func(c condition.Condition) {
		if condition.Set(&b.Conditions, c, b.Generation, now) {
			changed = true
			s.Record("binding-condition", b.Name, conditionText(c))
		}
	}
	defer func() {
		if changed {
			h.fire(triggers.BindingStatusChanged, b.Name, b.Placement, b.TargetCluster)
		}
	}()
	if snap == nil {
		set(condition.False(condition.TypeWorkSynchronized, ReasonSyncWorkFailed, "Failed to synchronize the work to the latest: resource snapshot "+b.ResourceSnapshotName+" no longer exists"))
		return
	}
	cros, ros := s.store.overrides.named(b.ClusterResourceOverrideSnapshots, b.ResourceOverrideSnapshots)
	ovr := override.NewSet(cros, ros)
	var manifests []*unstructured.Unstructured
	var envelopes []*placement.NamespacedName
	var overrideErr, envelopeErr error
	if r != nil {
		for _, m := range snap.Manifests {
			if resources.IsEnvelope(m) {
				// Enveloped objects travel as they are: overrides do not apply to them.
				inner, env, err := resources.Unwrap(m)
				if err != nil {
					envelopeErr = err
					continue
				}
				for _, in := range inner {
					manifests, envelopes = append(manifests, in), append(envelopes, env)
				}
				continue
			}
			res := ovr.Apply(m, r.m)
			if res.Err != nil {
				overrideErr = res.Err
				break
			}
			if !res.Deleted {
				manifests, envelopes = append(manifests, res.Manifest), append(envelopes, nil)
			}
		}
	}
	set(override.ClusterCondition(b.ClusterResourceOverrideSnapshots, b.ResourceOverrideSnapshots, overrideErr))
	if overrideErr != nil {
		return
	}
	if envelopeErr != nil {
		set(condition.False(condition.TypeWorkSynchronized, ReasonSyncWorkFailed, "Failed to synchronize the work to the latest: "+envelopeErr.Error()))
		return
	}
	if r == nil || !r.nsExists {
		set(condition.False(condition.TypeWorkSynchronized, ReasonSyncWorkFailed,
			fmt.Sprintf("Failed to synchronize the work to the latest: unable to create new content in namespace %s because it is being terminated", membership.Namespace(b.TargetCluster))))
		return
	}
	if w := s.store.works[b.Name]; w == nil || w.generation != b.Generation {
		w = &work{name: b.Placement + "-work", binding: b.Name, member: b.TargetCluster, generation: b.Generation, manifests: manifests, envelopes: envelopes}
		s.store.works[b.Name] = w
		s.Record("work-synchronized", membership.Namespace(b.TargetCluster)+"/"+w.name, fmt.Sprintf("binding %s generation %d, %d manifest(s)", b.Name, b.Generation, len(manifests)))
		s.scheduleApply(b.TargetCluster, b.Name, b.Generation, s.cfg.AgentSyncDelay)
	}
	set(condition.True(condition.TypeWorkSynchronized, ReasonAllWorkSynced, "All of the works are synchronized to the latest"))
}

// scheduleApply has the member agent apply a work after d.
func (s *Sim) scheduleApply(member, bindingName string, gen int64, d time.Duration) {
	s.atSubject(s.now+d, "work-apply", member, func() { s.applyWork(member, bindingName, gen) })
}

// applyWork is the member agent applying one Work and reporting its status. A crashed or
// partitioned agent does nothing; it applies everything again when it heals.
func (s *Sim) applyWork(memberName, bindingName string, gen int64) {
	r := s.store.members[memberName]
	w := s.store.works[bindingName]
	if r == nil || w == nil || w.generation != gen {
		return
	}
	a := r.agent
	if a.crashed || a.partitioned || !a.joined {
		return
	}
	if !w.applied {
		w.applied, w.appliedAt = true, s.now
	}
	var results []agentk8s.ManifestResult
	nextCheck := time.Duration(-1)
	for i, m := range w.manifests {
		res := agentk8s.ManifestResult{Identifier: resources.Identifier(m), Tracking: agentk8s.Classify(m)}
		res.Identifier.Envelope = w.envelopes[i]
		switch s.workloadBehavior(memberName, m) {
		case WorkloadApplyFails:
			res.ApplyError = fmt.Sprintf("Failed to apply manifest: %s %s was rejected by the member cluster (simulated)", m.GetKind(), m.GetName())
		case WorkloadUnavailable:
			res.Tracking, res.Available = agentk8s.Trackable, false
		default:
			if res.Tracking == agentk8s.Trackable {
				readyAt := w.appliedAt + s.cfg.WorkloadReadyDelay
				res.Available = s.now >= readyAt
				if !res.Available && (nextCheck < 0 || readyAt < nextCheck) {
					nextCheck = readyAt
				}
			}
		}
		results = append(results, res)
	}
	summary := agentk8s.Summarise(w.name, results)
	if nextCheck >= 0 {
		s.scheduleApply(memberName, bindingName, gen, nextCheck-s.now)
	}
	s.sendMessage(a, "work-status", func() { s.deliverWorkStatus(bindingName, gen, summary) })
}

// deliverWorkStatus writes a member's work status into its binding, as the hub's status
// fan-in does (Work status → binding conditions).
func (s *Sim) deliverWorkStatus(bindingName string, gen int64, res agentk8s.WorkResult) {
	b := s.store.bindings[bindingName]
	if b == nil || b.Generation != gen {
		return
	}
	now := s.Now()
	changed := false
	for _, c := range []*condition.Condition{&res.Applied, res.Available} {
		if c != nil && condition.Set(&b.Conditions, *c, gen, now) {
			changed = true
			s.Record("binding-condition", b.Name, conditionText(*c))
		}
	}
	if res.Available == nil {
		condition.Remove(&b.Conditions, condition.TypeAvailable)
	}
	b.FailedPlacements = res.Failed
	if changed {
		s.hub.fire(triggers.WorkStatusChanged, b.Name, b.Placement, b.TargetCluster)
	}
}

// reapplyWorks makes a member's agent apply all its works again (after it heals).
func (s *Sim) reapplyWorks(member string) {
	for _, w := range s.store.sortedWorks() {
		if w.member == member {
			s.scheduleApply(member, w.binding, w.generation, s.cfg.AgentSyncDelay)
		}
	}
}
