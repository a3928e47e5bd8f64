package sim

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/agentk8s"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
)

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

// Workload scripts how matching resources behave on members. Member is a member name or
// "*"; Kind matches exactly; an empty Name, Namespace or Image matches any. Image limits the
// rule to versions whose pod template runs that container image.
type Workload struct {
	Member, Kind, Name, Namespace, Image string
	Behavior                             WorkloadBehavior
}

// SetWorkload adds a workload rule; later rules override earlier ones.
func (s *Sim) SetWorkload(w Workload) error {
	switch w.Behavior {
	case WorkloadAvailable, WorkloadUnavailable, WorkloadApplyFails:
	default:
		return fmt.Errorf("workload behavior %q is not one of available, unavailable, applyFails", w.Behavior)
	}
	s.workloads = append(s.workloads, w)
	detail := fmt.Sprintf("%s %s/%s: %s", w.Kind, w.Namespace, w.Name, w.Behavior)
	if w.Image != "" {
		detail += " when running " + w.Image
	}
	s.Record("workload-behavior", w.Member, detail)
	// Members re-evaluate what they run, as a changed image would make them.
	for _, wk := range s.store.sortedWorks() {
		if w.Member == "*" || w.Member == wk.Member {
			s.scheduleApply(wk.Member, wk.Binding, wk.Name, wk.Generation, 0)
		}
	}
	return nil
}

func (s *Sim) workloadBehavior(member string, o *unstructured.Unstructured) WorkloadBehavior {
	b := WorkloadAvailable
	for _, r := range s.workloads {
		if (r.Member == "*" || r.Member == member) && r.Kind == o.GetKind() &&
			(r.Name == "" || r.Name == o.GetName()) && (r.Namespace == "" || r.Namespace == o.GetNamespace()) &&
			(r.Image == "" || runsImage(o, r.Image)) {
			b = r.Behavior
		}
	}
	return b
}

// runsImage reports whether an object's pod template (or pod spec) runs the image.
func runsImage(o *unstructured.Unstructured, image string) bool {
	for _, path := range [][]string{{"spec", "template", "spec"}, {"spec"}} {
		for _, field := range []string{"containers", "initContainers"} {
			cs, _, _ := unstructured.NestedSlice(o.Object, append(append([]string{}, path...), field)...)
			for _, c := range cs {
				if m, ok := c.(map[string]any); ok && m["image"] == image {
					return true
				}
			}
		}
	}
	return false
}

// scheduleApply has the member agent apply a binding's Work after d.
func (s *Sim) scheduleApply(member, bindingName, work string, gen int64, d time.Duration) {
	s.atSubject(s.now+d, "work-apply", member, func() { s.applyWork(member, bindingName, work, gen) })
}

// applyWork is the member agent applying one Work and reporting its status. A crashed or
// partitioned agent does nothing; it applies everything again when it heals.
func (s *Sim) applyWork(memberName, bindingName, work string, gen int64) {
	r := s.store.members[memberName]
	w := s.store.work(bindingName, work)
	if r == nil || w == nil || w.Generation != gen {
		return
	}
	a := r.agent
	if a.crashed || a.partitioned || !a.joined {
		return
	}
	// The member remembers when it first applied this generation of the binding (any of
	// its Works, all written together): availability of trackable workloads counts from
	// then.
	at, ok := s.appliedAt[bindingName]
	if !ok || at.generation != gen {
		at = appliedWork{generation: gen, at: s.now}
		s.appliedAt[bindingName] = at
	}
	// The agent runs the Work's loop (agentk8s.RunWork) over the member's objects;
	// scripted workload behaviour stands in for the member's controllers (an apply the
	// member rejects, a workload that never becomes available).
	var strategy *placement.ApplyStrategy
	if b := s.store.bindings[bindingName]; b != nil {
		strategy = b.ApplyStrategy
	}
	mc := &simMember{s: s, a: a, name: memberName, appliedAt: at.at, nextCheck: -1}
	run := agentk8s.RunWork(agentk8s.Work{Name: w.Name, Manifests: w.Manifests, Envelopes: w.Envelopes,
		Owner: appliedWorkOwner(memberName, w.Name), Strategy: strategy, ReportBack: w.ReportBack}, mc, &a.since, s.Now())
	if mc.nextCheck >= 0 {
		s.scheduleApply(memberName, bindingName, work, gen, mc.nextCheck-s.now)
	}
	summary := run.Report()
	var backs []map[string]any
	if w.ReportBack.Mirrors() {
		backs = make([]map[string]any, len(run.Results))
		for i, r := range run.Results {
			backs[i] = r.BackReported
		}
	}
	s.sendMessage(a, "work-status", func() {
		s.deliverWorkStatus(bindingName, gen, work, summary)
		if cur := s.store.work(bindingName, work); cur != nil && cur.Generation == gen {
			// The Work's status as the agent writes it: what it reported back replaces
			// what it reported before (nothing, once the strategy is no longer Mirror).
			if backs == nil {
				delete(s.store.backReported[bindingName], work)
			} else {
				if s.store.backReported[bindingName] == nil {
					s.store.backReported[bindingName] = map[string][]map[string]any{}
				}
				s.store.backReported[bindingName][work] = backs
			}
		}
	})
}

// simMember is the simulated member as one run of a Work's loop sees it: the agent's
// objects (Get and Write, memberobjects.go) and the scripted workloads standing in for the
// member's admission and controllers.
type simMember struct {
	s    *Sim
	a    *agent
	name string
	// appliedAt is when the member first applied the Work's generation: trackable
	// workloads become available WorkloadReadyDelay after it.
	appliedAt time.Duration
	// nextCheck is the earliest time a trackable workload not yet available will be, -1
	// when none waits: the agent looks again then.
	nextCheck time.Duration
	// behavior caches the scripted behaviour of manifest behaviorOf (asked twice a manifest).
	behaviorOf *unstructured.Unstructured
	behavior   WorkloadBehavior
}

func (m *simMember) behaviorFor(o *unstructured.Unstructured) WorkloadBehavior {
	if o != m.behaviorOf {
		m.behaviorOf, m.behavior = o, m.s.workloadBehavior(m.name, o)
	}
	return m.behavior
}

// Admit refuses every apply of a manifest whose scripted behaviour is applyFails.
func (m *simMember) Admit(o *unstructured.Unstructured) error {
	if m.behaviorFor(o) == WorkloadApplyFails {
		return fmt.Errorf("%s %s was rejected by the member cluster (simulated)", o.GetKind(), o.GetName())
	}
	return nil
}

// DryRun refuses as Admit does: the member that refuses a manifest's apply refuses its dry
// run too.
func (m *simMember) DryRun(o *unstructured.Unstructured) error { return m.Admit(o) }

// Available judges a workload as scripted: an unavailable one never becomes available,
// whatever its kind; a trackable one becomes available WorkloadReadyDelay after its Work's
// generation was first applied.
func (m *simMember) Available(o, _ *unstructured.Unstructured, t agentk8s.Tracking) (agentk8s.Tracking, bool) {
	if m.behaviorFor(o) == WorkloadUnavailable {
		return agentk8s.Trackable, false
	}
	if t != agentk8s.Trackable {
		return t, true
	}
	readyAt := m.appliedAt + m.s.cfg.WorkloadReadyDelay
	if m.s.now >= readyAt {
		return t, true
	}
	if m.nextCheck < 0 || readyAt < m.nextCheck {
		m.nextCheck = readyAt
	}
	return t, false
}

// Backoff is never asked: the simulated member's writes do not conflict.
func (m *simMember) Backoff(int) error {
	return errors.New("the simulated member does not retry writes")
}

// BackReport is one object a Work reports back: the manifest it came from ("Kind/name" or
// "Kind/namespace/name") and its backReportedStatus.observedStatus ({apiVersion, kind,
// status}).
type BackReport struct {
	Object   string
	Reported map[string]any
}

// BackReported returns what the Work of placement on member reports back in its status
// (strategy.reportBackStrategy Mirror), in manifest order; manifests with nothing reported
// are left out.
func (s *Sim) BackReported(placementName, member string) []BackReport {
	var out []BackReport
	for _, b := range s.store.byCRP[placementName] {
		if b.TargetCluster != member {
			continue
		}
		for _, w := range s.store.Works(b.Name) {
			out = append(out, backReports(w, s.store.backReported[b.Name][w.Name])...)
		}
	}
	return out
}

// backReports lists what one Work reports back, in manifest order.
func backReports(w *mhub.Work, reported []map[string]any) []BackReport {
	var out []BackReport
	for i, rep := range reported {
		if rep == nil || i >= len(w.Manifests) {
			continue
		}
		m := w.Manifests[i]
		id := m.GetKind() + "/" + m.GetName()
		if m.GetNamespace() != "" {
			id = m.GetKind() + "/" + m.GetNamespace() + "/" + m.GetName()
		}
		out = append(out, BackReport{Object: id, Reported: rep})
	}
	return out
}

// deliverWorkStatus records a member's report in its Work's status and folds the reports
// of every Work of the binding into the binding, as the hub's status fan-in does (Work
// status → binding conditions). A Work not reported on at gen counts as not applied.
func (s *Sim) deliverWorkStatus(bindingName string, gen int64, work string, res placement.WorkReport) {
	if s.store.work(bindingName, work) == nil {
		return
	}
	if s.store.workReports[bindingName] == nil {
		s.store.workReports[bindingName] = map[string]workReport{}
	}
	s.store.workReports[bindingName][work] = workReport{generation: gen, report: res}
	var all []mhub.WorkStatus
	for _, w := range s.store.Works(bindingName) {
		ws := mhub.WorkStatus{Work: w.Name}
		if r, ok := s.store.workReports[bindingName][w.Name]; ok && r.generation == gen && w.Generation == gen {
			ws.Report = r.report
		}
		all = append(all, ws)
	}
	mhub.ReceiveWorkStatus(s.store, s, bindingName, gen, all)
}

// reapplyWorks makes a member's agent apply all its works again (after it heals).
func (s *Sim) reapplyWorks(member string) {
	s.collectGarbage(member)
	for _, w := range s.store.sortedWorks() {
		if w.Member == member {
			s.scheduleApply(member, w.Binding, w.Name, w.Generation, s.cfg.AgentSyncDelay)
		}
	}
}

// appliedWork is when a member first applied a work generation.
type appliedWork struct {
	generation int64
	at         time.Duration
}

// WorkloadReadyDelay is how long a trackable workload takes to become available after it
// is applied in this simulation (Config.WorkloadReadyDelay with its default): the
// differential test's member stand-ins wait as long on the fleet's clock.
func (s *Sim) WorkloadReadyDelay() time.Duration { return s.cfg.WorkloadReadyDelay }
