package sim

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// ApplyStaged creates or updates a ClusterStagedUpdateStrategy, or creates a
// ClusterStagedUpdateRun (whose spec is immutable).
func (s *Sim) ApplyStaged(o *unstructured.Unstructured) error {
	switch o.GetKind() {
	case staged.KindStrategy:
		var st staged.ClusterStagedUpdateStrategy
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &st, true); err != nil {
			return err
		}
		if errs := staged.ValidateStrategy(&st); len(errs) > 0 {
			return fmt.Errorf("%s %s is invalid: %w", staged.KindStrategy, st.Name, errs.ToAggregate())
		}
		s.store.strategies[st.Name] = &st
		s.Record("staged-strategy-applied", st.Name, fmt.Sprintf("%d stage(s)", len(st.Spec.Stages)))
		return nil
	case staged.KindRun:
		var run staged.ClusterStagedUpdateRun
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &run, true); err != nil {
			return err
		}
		if errs := staged.ValidateRun(&run); len(errs) > 0 {
			return fmt.Errorf("%s %s is invalid: %w", staged.KindRun, run.Name, errs.ToAggregate())
		}
		if old, ok := s.store.runs[run.Name]; ok {
			if errs := staged.ValidateRunUpdate(old, &run); len(errs) > 0 {
				return fmt.Errorf("%s %s: %w", staged.KindRun, run.Name, errs.ToAggregate())
			}
			if old.Spec.State != run.Spec.State {
				// spec.state is the one field that changes: the run stops or goes on
				old.Spec.State = run.Spec.State
				old.Generation++
				s.Record("staged-run-state", run.Name, fmt.Sprintf("state %s", run.Spec.State))
				s.hub.fire(triggers.UpdateRunChanged, run.Name, run.Spec.PlacementName, "")
			}
			return nil
		}
		run.Status = staged.StagedUpdateRunStatus{}
		s.store.runs[run.Name] = &run
		index := run.Spec.ResourceSnapshotIndex
		if index == "" {
			index = "latest at initialization"
		}
		s.Record("staged-run-created", run.Name, fmt.Sprintf("placement %s, resource snapshot index %s, strategy %s", run.Spec.PlacementName, index, run.Spec.StagedRolloutStrategyName))
		s.hub.fire(triggers.UpdateRunChanged, run.Name, run.Spec.PlacementName, "")
		return nil
	}
	return fmt.Errorf("unsupported kind %s", o.GetKind())
}

// Approve approves a ClusterApprovalRequest, as a user patching its status with
// Approved=True does.
func (s *Sim) Approve(name string) error {
	a := s.store.approvals[name]
	if a == nil {
		return fmt.Errorf("approval request %s does not exist", name)
	}
	if condition.Set(&a.Status.Conditions, condition.True(staged.TypeApproved, "Approved", "approved by the scenario"), a.Generation, s.Now()) {
		s.Record("approval-approved", name, "")
		s.hub.fire(triggers.ApprovalChanged, name, "", "")
	}
	return nil
}

// UpdateRunStatus is a staged update run as users read it.
type UpdateRunStatus struct {
	Name       string                       `json:"name"`
	Placement  string                       `json:"placement"`
	Conditions []Condition                  `json:"conditions"`
	Status     staged.StagedUpdateRunStatus `json:"status"`
}

// UpdateRun returns one staged update run's status.
func (s *Sim) UpdateRun(name string) (UpdateRunStatus, bool) {
	r := s.store.runs[name]
	if r == nil {
		return UpdateRunStatus{}, false
	}
	return UpdateRunStatus{Name: name, Placement: r.Spec.PlacementName, Conditions: conditionsOf(r.Status.Conditions), Status: r.Status}, true
}

// UpdateRuns returns every run's status, by name.
func (s *Sim) UpdateRuns() []UpdateRunStatus {
	var out []UpdateRunStatus
	for _, n := range s.store.UpdateRunNames() {
		st, _ := s.UpdateRun(n)
		out = append(out, st)
	}
	return out
}
