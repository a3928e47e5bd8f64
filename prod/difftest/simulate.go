package difftest

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
)

// Simulate runs the plan in the simulator, as scenarios/runner does (same seed, same
// order of actions, same handling of each manifest kind), and returns one State per phase,
// taken just before the next phase's instant (the last one at the scenario's end). An action
// the simulator refuses is an error: the production API server has no webhook to refuse it
// too, so the two sides would not be doing the same thing.
func Simulate(p *Plan) ([]State, error) {
	sc := p.Scenario
	s, err := sim.New(simConfig(sc))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.Path, err)
	}
	var runErr error
	fail := func(a Action, err error) {
		if runErr == nil {
			runErr = fmt.Errorf("%s: %s: the simulator refused it: %w", sc.Path, a, err)
		}
		s.Stop()
	}
	states := make([]State, len(p.Phases))
	for i, ph := range p.Phases {
		s.At(ph.At, "difftest-phase", func() {
			for _, a := range ph.Actions {
				if err := simulateAction(s, a); err != nil {
					fail(a, err)
					return
				}
			}
		})
		until := sc.Duration
		if i+1 < len(p.Phases) {
			until = p.Phases[i+1].At - time.Nanosecond
		}
		s.Barrier(until, func() { states[i] = simState(s) })
	}
	if _, err := s.Run(sc.Duration); err != nil {
		return nil, fmt.Errorf("%s: %w", sc.Path, err)
	}
	if runErr != nil {
		return nil, runErr
	}
	return states, nil
}

// simConfig is scenarios/runner's configuration of the simulator for sc (start time, seed
// and the hub's capacity; NewPlan refuses a network model).
func simConfig(sc *scenarios.Scenario) sim.Config {
	cfg := sim.Config{Seed: sc.Seed, Start: SimStart, Propagation: sc.Propagation}
	if hc := sc.Hub; hc != nil {
		cfg.Hub = &sim.HubCapacity{Workers: hc.Workers, QPS: hc.QPS, Burst: hc.Burst, CallsPerDecision: hc.CallsPerDecision, DecisionTime: hc.DecisionTime}
	}
	return cfg
}

// SimStart is the simulator's time at a scenario's start (sim.Config.Start's default),
// where the production side's mock clock starts too.
var SimStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func simulateAction(s *sim.Sim, a Action) error {
	switch {
	case a.Partition != nil:
		// As scenarios/runner: one group fault, healed `for` later by the simulator itself.
		names, what := []string{a.Partition.Member}, "member "+a.Partition.Member
		if a.Group != nil {
			names, what = s.SelectMembers(a.Group.Matches), a.Group.String()
		}
		*a.Picked = names
		return s.PartitionGroup(what, names, a.Partition.For)
	case a.PartitionEnd:
		return nil // the simulator heals the partition on its own (PartitionGroup)
	case a.Group != nil:
		names := s.SelectMembers(a.Group.Matches)
		if len(names) == 0 {
			return fmt.Errorf("%s selects no member", a.Group)
		}
		*a.Picked = names
		for _, name := range names {
			if err := simulateAction(s, a.On(name)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	case a.Join != nil:
		m := a.Join
		return s.AddMember(sim.MemberSpec{Name: m.Name, Kind: member.KindCluster, Labels: m.Labels, Taints: m.Taints, HeartbeatPeriod: m.HeartbeatPeriod})
	case a.Apply != nil:
		for _, m := range a.Apply {
			if err := simulateApply(s, m.Object); err != nil {
				return fmt.Errorf("line %d: %s %s: %w", m.Line, m.Object.GetKind(), m.Object.GetName(), err)
			}
		}
		return nil
	case a.Delete != nil:
		return simulateDelete(s, a.Delete)
	case a.Label != nil:
		return s.Label(a.Label.Member, a.Label.Set, a.Label.Remove)
	case a.Taint != nil:
		return s.Taint(a.Taint.Member, a.Taint.Taint)
	case a.Untaint != nil:
		return s.Untaint(a.Untaint.Member, a.Untaint.Key)
	case a.Workload != nil:
		w := a.Workload
		return s.SetWorkload(simWorkload(w))
	case a.Fail != nil:
		return s.Fail(a.Fail.Member, sim.FailMode(a.Fail.Mode))
	case a.Heal != nil:
		return s.Heal(a.Heal.Member)
	case a.Approve != nil:
		return s.Approve(a.Approve.Name)
	case a.MemberEdit != nil:
		return s.EditMemberObject(a.MemberEdit.Member, a.MemberEdit.Object)
	}
	return fmt.Errorf("empty action")
}

func simWorkload(w *scenarios.WorkloadStep) sim.Workload {
	return sim.Workload{Member: w.Member, Kind: w.Kind, Name: w.Name, Namespace: w.Namespace, Image: w.Image, Behavior: sim.WorkloadBehavior(w.Behavior)}
}

// simulateApply is scenarios/runner's apply.
func simulateApply(s *sim.Sim, o *unstructured.Unstructured) error {
	switch o.GetKind() {
	case placement.KindPlacement:
		var crp placement.ClusterResourcePlacement
		if err := decodeInto(o, &crp); err != nil {
			return err
		}
		return s.ApplyPlacement(crp)
	case "MemberCluster":
		return simulateMemberCluster(s, o)
	case override.KindClusterResourceOverride:
		var cro override.ClusterResourceOverride
		if err := decodeInto(o, &cro); err != nil {
			return err
		}
		return s.ApplyClusterResourceOverride(cro)
	case override.KindResourceOverride:
		var ro override.ResourceOverride
		if err := decodeInto(o, &ro); err != nil {
			return err
		}
		return s.ApplyResourceOverride(ro)
	case eviction.KindEviction:
		var e eviction.Eviction
		if err := decodeInto(o, &e); err != nil {
			return err
		}
		return s.ApplyEviction(e)
	case eviction.KindDisruptionBudget:
		var b eviction.DisruptionBudget
		if err := decodeInto(o, &b); err != nil {
			return err
		}
		return s.ApplyDisruptionBudget(b)
	case staged.KindStrategy, staged.KindRun:
		return s.ApplyStaged(o.DeepCopy())
	default:
		return s.ApplyResource(o.DeepCopy())
	}
}

func decodeInto(o *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.DeepCopy().Object, into, true)
}

// simulateMemberCluster is scenarios/runner's applyMemberCluster: a new member joins; for an
// existing one the manifest's labels and taints replace the member's.
func simulateMemberCluster(s *sim.Sim, o *unstructured.Unstructured) error {
	spec, err := memberClusterSpec(o)
	if err != nil {
		return err
	}
	name := o.GetName()
	cur, ok := s.Member(name)
	if !ok {
		return s.AddMember(sim.MemberSpec{Name: name, Kind: member.KindCluster, Labels: o.GetLabels(), Taints: spec.Taints,
			HeartbeatPeriod: time.Duration(spec.HeartbeatPeriodSeconds) * time.Second})
	}
	var removed []string
	for _, k := range slices.Sorted(maps.Keys(cur.Labels)) {
		if _, keep := o.GetLabels()[k]; !keep {
			removed = append(removed, k)
		}
	}
	if err := s.Label(name, o.GetLabels(), removed); err != nil {
		return err
	}
	for _, t := range cur.Taints {
		if !slices.ContainsFunc(spec.Taints, func(n member.Taint) bool { return n.Key == t.Key }) {
			if err := s.Untaint(name, t.Key); err != nil {
				return err
			}
		}
	}
	for _, t := range spec.Taints {
		if slices.Contains(cur.Taints, t) {
			continue
		}
		if err := s.Taint(name, t); err != nil {
			return err
		}
	}
	return nil
}

// mcSpec is what a MemberCluster manifest says that both sides use.
type mcSpec struct {
	HeartbeatPeriodSeconds int
	Taints                 []member.Taint // effects defaulted to NoSchedule
}

func memberClusterSpec(o *unstructured.Unstructured) (mcSpec, error) {
	var m struct {
		Spec struct {
			HeartbeatPeriodSeconds int            `json:"heartbeatPeriodSeconds"`
			Taints                 []member.Taint `json:"taints"`
		} `json:"spec"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.DeepCopy().Object, &m); err != nil {
		return mcSpec{}, err
	}
	for i := range m.Spec.Taints {
		if m.Spec.Taints[i].Effect == "" {
			m.Spec.Taints[i].Effect = member.NoSchedule
		}
	}
	return mcSpec{HeartbeatPeriodSeconds: m.Spec.HeartbeatPeriodSeconds, Taints: m.Spec.Taints}, nil
}

// simulateDelete is scenarios/runner's delete.
func simulateDelete(s *sim.Sim, ref *scenarios.ObjectRef) error {
	switch ref.Kind {
	case placement.KindPlacement:
		return s.DeletePlacement(ref.Name)
	case "MemberCluster":
		return s.DeleteMember(ref.Name)
	case eviction.KindEviction:
		return s.DeleteEviction(ref.Name)
	case eviction.KindDisruptionBudget:
		return s.DeleteDisruptionBudget(ref.Name)
	}
	return s.DeleteResource(ref.Kind, ref.Namespace, ref.Name)
}

// simState reads the simulator's current state.
func simState(s *sim.Sim) State {
	st := newState()
	for _, w := range s.Works() {
		name, x := workState(&w)
		st.Works[name] = x
	}
	for _, r := range s.UpdateRuns() {
		st.Runs[r.Name] = runState(r.Placement, r.Status)
	}
	for _, a := range s.ApprovalRequests() {
		st.Approvals[a.Name] = timedConditions(a.Status.Conditions)
	}
	for _, e := range s.Evictions() {
		cs := Conditions{}
		for _, c := range e.Conditions {
			cs[c.Type] = condition(c.Status, c.Reason)
		}
		st.Evictions[e.Name] = cs
	}
	for _, p := range s.ClusterProfiles() {
		cs := Conditions{}
		for _, c := range p.Conditions {
			cs[c.Type] = condition(c.Status, c.Reason)
		}
		st.Profiles[p.Name] = cs
	}
	for _, p := range s.Placements() {
		// PlacementStatus.Clusters lists the clusters of live bindings (Scheduled or Bound
		// and not being deleted); a Scheduled or Bound binding beyond them is being deleted.
		live := map[string]int{}
		for _, c := range p.Clusters {
			live[c]++
		}
		for _, b := range p.Bindings {
			x := Binding{Placement: p.Name, Cluster: b.Cluster, State: string(b.State)}
			if b.State == placement.Scheduled || b.State == placement.Bound {
				if live[b.Cluster] > 0 {
					live[b.Cluster]--
				} else {
					x.Deleting = true
				}
			}
			st.Bindings = append(st.Bindings, x)
		}
		conds := Conditions{}
		for _, c := range p.Conditions {
			conds[c.Type] = condition(c.Status, c.Reason)
		}
		pl := placementState(conds, p.Status)
		st.Placements[p.Name] = pl
	}
	for _, m := range s.Members() {
		cs := Conditions{}
		for _, c := range m.Conditions {
			cs[c.Type] = condition(c.Status, c.Reason)
		}
		st.Members[m.Name] = cs
	}
	st.normalize()
	return st
}
