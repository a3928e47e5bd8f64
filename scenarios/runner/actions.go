package runner

// Actions: the scenario's member groups and timeline steps turned into simulator calls,
// manifests decoded as the API server would. Separate from the checks (checks.go): these
// change the fleet, the checks only read it.

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
)

func (r *run) scheduleGroup(g scenarios.MemberGroup) error {
	props := map[string]resource.Quantity{}
	for k, v := range g.Properties {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return &Error{Path: r.sc.Path, Line: g.Line, Reason: fmt.Sprintf("property %s: %v", k, err)}
		}
		props[k] = q
	}
	labels := map[string]string{}
	for k, v := range g.Labels {
		labels[k] = v
	}
	if g.Kind == member.KindMachine {
		// Machine metadata doubles as labels, so placement selectors can use it too.
		for k, vs := range g.Metadata {
			if len(vs) > 0 {
				labels[k] = vs[0]
			}
		}
	}
	// One event adds the whole group, in name order: a group of 100,000 members does not
	// hold 100,000 pending closures.
	r.s.At(g.JoinAt, "step-members", func() {
		for _, name := range g.Names {
			spec := sim.MemberSpec{Name: name, Kind: g.Kind, Labels: labels, Taints: g.Taints, Properties: props, Resources: g.Resources, HeartbeatPeriod: g.HeartbeatPeriod}
			if err := r.s.AddMember(spec); err != nil {
				r.fail(g.Line, err.Error())
				return
			}
		}
	})
	return nil
}

func (r *run) step(st *scenarios.Step) {
	s := r.s
	var err error
	switch {
	case st.Action == scenarios.ActionPartition:
		names := []string{st.Partition.Member}
		what := "member " + st.Partition.Member
		if st.Select != nil {
			names, what = s.SelectMembers(st.Select.Matches), st.Select.String()
		}
		err = s.PartitionGroup(what, names, st.Partition.For)
	case st.Select != nil:
		// A group step: the same action on every selected member, in name order.
		names := s.SelectMembers(st.Select.Matches)
		if len(names) == 0 {
			err = fmt.Errorf("%s selects no member", st.Select)
		}
		for _, name := range names {
			if err = r.memberStep(st, name); err != nil {
				err = fmt.Errorf("%s: %w", name, err)
				break
			}
		}
	default:
		err = r.memberStep(st, "")
	}
	if err != nil {
		field := string(st.Action)
		if st.Field != "" {
			field = st.Field + "." + field
		}
		if r.tolerate {
			s.Record("step-failed", field, fmt.Sprintf("line %d: %v", st.Line, err))
			return
		}
		r.fail(st.Line, fmt.Sprintf("%s: the step at %s failed: %v", field, st.At, err))
	}
}

// memberStep runs one step's action; for a member action, on member when it is not ""
// (one member of a group step), else on the member the step names.
func (r *run) memberStep(st *scenarios.Step, member string) error {
	s := r.s
	on := func(named string) string {
		if member != "" {
			return member
		}
		return named
	}
	switch st.Action {
	case scenarios.ActionApply:
		for _, m := range st.Apply {
			if aerr := r.apply(m); aerr != nil {
				s.Record("apply-rejected", resources.ObjectName(m.Object), fmt.Sprintf("line %d: %v", m.Line, aerr))
			}
		}
		return nil
	case scenarios.ActionDelete:
		return r.delete(st.Delete)
	case scenarios.ActionFail:
		return s.Fail(on(st.Fail.Member), sim.FailMode(st.Fail.Mode))
	case scenarios.ActionHeal:
		return s.Heal(on(st.Heal.Member))
	case scenarios.ActionTaint:
		return s.Taint(on(st.Taint.Member), st.Taint.Taint)
	case scenarios.ActionUntaint:
		return s.Untaint(on(st.Untaint.Member), st.Untaint.Key)
	case scenarios.ActionLabel:
		return s.Label(on(st.Label.Member), st.Label.Set, st.Label.Remove)
	case scenarios.ActionRestartHub:
		s.RestartHub()
		return nil
	case scenarios.ActionWorkload:
		w := st.Workload
		return s.SetWorkload(sim.Workload{Member: on(w.Member), Kind: w.Kind, Name: w.Name, Namespace: w.Namespace, Image: w.Image, Behavior: sim.WorkloadBehavior(w.Behavior)})
	case scenarios.ActionApprove:
		return s.Approve(st.Approve.Name)
	case scenarios.ActionSkew:
		return s.SetClockSkew(on(st.Skew.Member), st.Skew.Offset)
	case scenarios.ActionMemberHealth:
		return s.SetMemberHealth(on(st.MemberHealth.Member), st.MemberHealth.Healthy)
	case scenarios.ActionFleetctl:
		return s.Fleetctl(string(st.Fleetctl.Command), st.Fleetctl.Unit, st.Fleetctl.File)
	case scenarios.ActionMemberEdit:
		if st.MemberEdit.FieldManager != "" {
			return s.EditMemberObjectAs(on(st.MemberEdit.Member), st.MemberEdit.FieldManager, st.MemberEdit.Object)
		}
		return s.EditMemberObject(on(st.MemberEdit.Member), st.MemberEdit.Object)
	}
	return fmt.Errorf("unknown action %q", st.Action)
}

func (r *run) apply(m scenarios.Manifest) error {
	o := m.Object
	switch o.GetKind() {
	case placement.KindPlacement:
		var crp placement.ClusterResourcePlacement
		if err := decodeInto(o, &crp); err != nil {
			return err
		}
		return r.s.ApplyPlacement(crp)
	case "MemberCluster":
		return r.applyMemberCluster(o)
	case override.KindClusterResourceOverride:
		var cro override.ClusterResourceOverride
		if err := decodeInto(o, &cro); err != nil {
			return err
		}
		return r.s.ApplyClusterResourceOverride(cro)
	case override.KindResourceOverride:
		var ro override.ResourceOverride
		if err := decodeInto(o, &ro); err != nil {
			return err
		}
		return r.s.ApplyResourceOverride(ro)
	case eviction.KindEviction:
		var e eviction.Eviction
		if err := decodeInto(o, &e); err != nil {
			return err
		}
		return r.s.ApplyEviction(e)
	case eviction.KindDisruptionBudget:
		var b eviction.DisruptionBudget
		if err := decodeInto(o, &b); err != nil {
			return err
		}
		return r.s.ApplyDisruptionBudget(b)
	case staged.KindStrategy, staged.KindRun:
		return r.s.ApplyStaged(o)
	default:
		return r.s.ApplyResource(o)
	}
}

// decodeInto converts an unstructured manifest into a typed object, refusing unknown fields
// as the API server does.
func decodeInto(o *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true)
}

func (r *run) applyMemberCluster(o *unstructured.Unstructured) error {
	var spec struct {
		Spec struct {
			HeartbeatPeriodSeconds int            `json:"heartbeatPeriodSeconds"`
			Taints                 []member.Taint `json:"taints"`
			DeleteOptions          *struct {
				ValidationMode member.DeleteValidationMode `json:"validationMode"`
			} `json:"deleteOptions"`
		} `json:"spec"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &spec); err != nil {
		return err
	}
	name := o.GetName()
	var validation member.DeleteValidationMode
	if d := spec.Spec.DeleteOptions; d != nil {
		validation = d.ValidationMode
	}
	if cur, ok := r.s.Member(name); ok {
		if err := r.s.SetDeleteValidation(name, validation); err != nil {
			return err
		}
		// An update, like kubectl apply: the manifest's labels and taints replace the
		// member's, so ones left out are removed. They are what scheduling sees change.
		var removed []string
		for _, k := range slices.Sorted(maps.Keys(cur.Labels)) {
			if _, keep := o.GetLabels()[k]; !keep {
				removed = append(removed, k)
			}
		}
		if err := r.s.Label(name, o.GetLabels(), removed); err != nil {
			return err
		}
		for _, t := range cur.Taints {
			if !slices.ContainsFunc(spec.Spec.Taints, func(n member.Taint) bool { return n.Key == t.Key }) {
				if err := r.s.Untaint(name, t.Key); err != nil {
					return err
				}
			}
		}
		for _, t := range spec.Spec.Taints {
			if t.Effect == "" {
				t.Effect = member.NoSchedule
			}
			if slices.Contains(cur.Taints, t) {
				continue
			}
			if err := r.s.Taint(name, t); err != nil {
				return err
			}
		}
		return nil
	}
	return r.s.AddMember(sim.MemberSpec{
		Name: name, Kind: member.KindCluster, Labels: o.GetLabels(), Taints: spec.Spec.Taints,
		HeartbeatPeriod:  time.Duration(spec.Spec.HeartbeatPeriodSeconds) * time.Second,
		DeleteValidation: validation,
	})
}

func (r *run) delete(ref *scenarios.ObjectRef) error {
	switch ref.Kind {
	case placement.KindPlacement:
		return r.s.DeletePlacement(ref.Name)
	case "MemberCluster":
		return r.s.DeleteMember(ref.Name)
	case eviction.KindEviction:
		return r.s.DeleteEviction(ref.Name)
	case eviction.KindDisruptionBudget:
		return r.s.DeleteDisruptionBudget(ref.Name)
	}
	return r.s.DeleteResource(ref.Kind, ref.Namespace, ref.Name)
}
