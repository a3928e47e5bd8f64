package sim

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// runRecord is a ClusterStagedUpdateRun.
type runRecord struct {
	run *staged.ClusterStagedUpdateRun
}

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
			if old.run.Spec != run.Spec {
				return fmt.Errorf("%s %s: spec is immutable", staged.KindRun, run.Name)
			}
			return nil
		}
		run.Status = staged.StagedUpdateRunStatus{}
		s.store.runs[run.Name] = &runRecord{run: &run}
		s.Record("staged-run-created", run.Name, fmt.Sprintf("placement %s, resource snapshot index %s, strategy %s", run.Spec.PlacementName, run.Spec.ResourceSnapshotIndex, run.Spec.StagedRolloutStrategyName))
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

// reconcileStaged runs one reconcile of a staged update run.
func (h *hub) reconcileStaged(name string) {
	s := h.s
	rec := s.store.runs[name]
	if rec == nil {
		return
	}
	run := rec.run
	in := staged.Input{Run: run, Strategy: s.store.strategies[run.Spec.StagedRolloutStrategyName], Now: s.Now()}
	pName := run.Spec.PlacementName
	if p := s.store.placements[pName]; p != nil && !p.deleting {
		snap := s.store.latest(pName)
		pl := &staged.Placement{Name: pName, Strategy: p.crp.Spec.Strategy, SchedulerPending: snap == nil || p.scheduled == nil || p.scheduledGen != p.generation}
		if snap != nil {
			pl.PolicySnapshotIndex = snap.Index
			pl.ObservedClusterCount = p.observedCount
		}
		in.Placement = pl
		in.Bindings = s.store.byCRP[pName]
		in.ResourceSnapshots = map[int]string{}
		for _, r := range p.resourceSnapshots {
			in.ResourceSnapshots[r.Index] = r.Name
		}
		in.Overrides = h.stagedOverrides(pName, p)
	}
	for _, n := range s.store.memberNames() {
		in.Members = append(in.Members, s.store.members[n].m)
	}
	for _, n := range sortedKeys(s.store.approvals) {
		if a := s.store.approvals[n]; a.Labels[staged.LabelTargetUpdateRun] == name {
			in.ApprovalRequests = append(in.ApprovalRequests, a)
		}
	}
	for _, n := range s.store.runNames() {
		if n != name {
			in.OtherRuns = append(in.OtherRuns, s.store.runs[n].run)
		}
	}
	plan := staged.Decide(in)
	for _, c := range plan.UpdateBindings {
		s.store.putBinding(c.Binding)
		s.Record("binding-rolled", c.Binding.Name, fmt.Sprintf("%s to %s by run %s: %s", c.Binding.TargetCluster, c.Binding.ResourceSnapshotName, name, c.Reason))
		h.fire(triggers.BindingChanged, c.Binding.Name, pName, c.Binding.TargetCluster)
	}
	for _, c := range plan.DeleteBindings {
		if b := s.store.deleteBinding(c.Binding.Name); b != nil {
			s.Record("binding-deleted", b.Name, c.Reason)
			h.fire(triggers.BindingDeleted, b.Name, pName, b.TargetCluster)
		}
	}
	for _, a := range plan.CreateApprovalRequests {
		a := a
		s.store.approvals[a.Name] = &a
		s.Record("approval-requested", a.Name, fmt.Sprintf("run %s, stage %s", a.Spec.ParentStageRollout, a.Spec.TargetStage))
	}
	for _, a := range plan.AcceptApprovalRequests {
		a := a
		s.store.approvals[a.Name] = &a
	}
	old := map[string]string{}
	for _, c := range run.Status.Conditions {
		old[c.Type] = string(c.Status) + "/" + c.Reason
	}
	run.Status = plan.Status
	for _, c := range run.Status.Conditions {
		if old[c.Type] != string(c.Status)+"/"+c.Reason {
			s.Record("staged-run-condition", name, conditionText(c.Condition))
		}
	}
	if plan.RequeueAfter > 0 {
		h.requeueAfter(ctrlStaged, name, plan.RequeueAfter)
	}
	h.refreshStatus(pName)
}

// stagedOverrides lists the override snapshots applying to each cluster of a placement.
func (h *hub) stagedOverrides(name string, p *placementRecord) map[string]staged.Overrides {
	out := map[string]staged.Overrides{}
	for cluster, o := range h.applicableOverrides(name, p) {
		out[cluster] = staged.Overrides{ClusterResourceOverrideSnapshots: o.ClusterResourceOverrideSnapshots, ResourceOverrideSnapshots: o.ResourceOverrideSnapshots}
	}
	return out
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
	return UpdateRunStatus{Name: name, Placement: r.run.Spec.PlacementName, Conditions: conditionsOf(r.run.Status.Conditions), Status: r.run.Status}, true
}

// UpdateRuns returns every run's status, by name.
func (s *Sim) UpdateRuns() []UpdateRunStatus {
	var out []UpdateRunStatus
	for _, n := range s.store.runNames() {
		st, _ := s.UpdateRun(n)
		out = append(out, st)
	}
	return out
}
