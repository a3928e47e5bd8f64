package hub

import (
	"fmt"

	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// reconcileStaged runs one reconcile of a staged update run. The plan's binding writes and
// approval requests are written before the run's status, as the decision requires.
func (c *Controllers) reconcileStaged(name string) {
	st, env := c.Store, c.Env
	run := st.UpdateRun(name)
	if run == nil {
		return
	}
	in := staged.Input{Run: run, Strategy: st.Strategy(run.Spec.StagedRolloutStrategyName), Now: env.Now()}
	pName := run.Spec.PlacementName
	if p := st.Placement(pName); p != nil && !p.Deleting {
		snap := p.LatestPolicySnapshot()
		pl := &staged.Placement{Name: pName, Strategy: p.CRP.Spec.Strategy,
			SchedulerPending: snap == nil || p.Scheduled == nil || p.ScheduledGeneration != p.Generation}
		if snap != nil {
			pl.PolicySnapshotIndex = snap.Index
			pl.ObservedClusterCount = p.ObservedClusterCount
		}
		in.Placement = pl
		in.Bindings = st.Bindings(pName)
		in.ResourceSnapshots = map[int]string{}
		for _, r := range p.ResourceSnapshots {
			in.ResourceSnapshots[r.Index] = r.Name
		}
		in.Overrides = map[string]staged.Overrides{}
		for cluster, o := range c.applicableOverrides(pName, p) {
			in.Overrides[cluster] = staged.Overrides{ClusterResourceOverrideSnapshots: o.ClusterResourceOverrideSnapshots, ResourceOverrideSnapshots: o.ResourceOverrideSnapshots}
		}
	}
	for _, n := range st.MemberClusterNames() {
		in.Members = append(in.Members, st.MemberCluster(n).Member)
	}
	in.ApprovalRequests = st.ApprovalRequests(name)
	for _, n := range st.UpdateRunNames() {
		if n != name {
			in.OtherRuns = append(in.OtherRuns, st.UpdateRun(n))
		}
	}
	plan := staged.Decide(in)
	for _, ch := range plan.UpdateBindings {
		st.PutBinding(ch.Binding)
		env.Record("binding-rolled", ch.Binding.Name, fmt.Sprintf("%s to %s by run %s: %s", ch.Binding.TargetCluster, ch.Binding.ResourceSnapshotName, name, ch.Reason))
		env.Fire(triggers.BindingChanged, ch.Binding.Name, pName, ch.Binding.TargetCluster)
	}
	for _, ch := range plan.DeleteBindings {
		if b := st.DeleteBinding(ch.Binding.Name); b != nil {
			env.Record("binding-deleted", b.Name, ch.Reason)
			env.Fire(triggers.BindingDeleted, b.Name, pName, b.TargetCluster)
		}
	}
	for _, a := range plan.CreateApprovalRequests {
		st.PutApprovalRequest(a)
		env.Record("approval-requested", a.Name, fmt.Sprintf("run %s, stage %s", a.Spec.ParentStageRollout, a.Spec.TargetStage))
	}
	for _, a := range plan.AcceptApprovalRequests {
		st.PutApprovalRequest(a)
	}
	recordChanged(env, "staged-run-condition", name, run.Status.Conditions, plan.Status.Conditions)
	run.Status = plan.Status
	st.PutUpdateRun(run)
	if plan.RequeueAfter > 0 {
		env.RequeueAfter(triggers.StagedUpdate, name, plan.RequeueAfter)
	}
	c.refreshStatus(pName)
}
