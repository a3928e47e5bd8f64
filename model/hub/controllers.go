package hub

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// Controllers are the hub's reconcilers over one Store and Env.
type Controllers struct {
	Store       Store
	Env         Env
	Scheduler   *scheduler.Scheduler
	Eligibility member.EligibilityConfig
	// Propagation is the hub's propagation filter (nil: none beyond the built-in one).
	Propagation *resources.Filter
}

// Reconcile runs one controller for one key.
func (c *Controllers) Reconcile(ctrl triggers.Controller, key string) {
	switch ctrl {
	case triggers.Membership:
		c.reconcileMember(key)
	case triggers.PolicySnapshot:
		c.reconcilePlacement(key)
	case triggers.Scheduler:
		c.reconcileScheduler(key)
	case triggers.Rollout:
		c.reconcileRollout(key)
	case triggers.WorkGenerator:
		c.reconcileWork(key)
	case triggers.Eviction:
		c.reconcileEviction(key)
	case triggers.StagedUpdate:
		c.reconcileStaged(key)
	}
}

// livePlacement returns a placement that is not being deleted and its latest policy
// snapshot, or nils when there is nothing to decide for yet.
func (c *Controllers) livePlacement(name string) (*Placement, *placement.PolicySnapshot) {
	p := c.Store.Placement(name)
	if p == nil || p.Deleting {
		return nil, nil
	}
	snap := p.LatestPolicySnapshot()
	if snap == nil {
		return nil, nil
	}
	return p, snap
}

// recordChanged records the conditions of next whose status or reason differs from old.
func recordChanged(env Env, kind, name string, old, next []condition.Timed) {
	for _, cd := range next {
		if o, ok := condition.Find(old, cd.Type); !ok || o.Status != cd.Status || o.Reason != cd.Reason {
			env.Record(kind, name, ConditionText(cd.Condition))
		}
	}
}

// ConditionText renders a condition for events.
func ConditionText(c condition.Condition) string {
	return fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
}

// setConditions merges decided conditions and returns those whose status changed.
func (c *Controllers) setConditions(stored *[]condition.Timed, decided []condition.Condition, gen int64) []condition.Condition {
	return setConditions(c.Env, stored, decided, gen)
}

func setConditions(env Env, stored *[]condition.Timed, decided []condition.Condition, gen int64) []condition.Condition {
	var changed []condition.Condition
	for _, d := range decided {
		if condition.Set(stored, d, gen, env.Now()) {
			changed = append(changed, d)
		}
	}
	return changed
}

func (c *Controllers) reconcileMember(name string) {
	ReconcileMember(c.Store, c.Env, c.Eligibility, name)
}

// ReconcileMember is the membership controller: join, health and leave of one member.
func ReconcileMember(st MemberStore, env Env, elig member.EligibilityConfig, name string) {
	r := st.MemberCluster(name)
	if r == nil {
		return
	}
	plan := membership.Decide(membership.Input{
		Member: r.Member, NamespaceExists: r.NamespaceExists, IMC: r.IMC,
		BindingsOnMember: st.BindingsOnMember(name), Now: env.Now(), Eligibility: elig,
	})
	if plan.CreateNamespace {
		r.NamespaceExists = true
		env.Record("namespace-created", membership.Namespace(name), "with Role and RoleBinding for the member identity")
	}
	if plan.CreateIMC {
		s := membership.StateJoin
		r.IMC = &s
		env.Record("imc-created", name, "state Join")
	}
	if plan.SetIMCLeave {
		s := membership.StateLeave
		r.IMC = &s
		env.Record("imc-leave", name, "state Leave")
	}
	if plan.DeleteIMC {
		r.IMC = nil
	}
	if plan.DeleteNamespace {
		r.NamespaceExists = false
		env.Record("namespace-deleted", membership.Namespace(name), "")
	}
	for _, cd := range setConditions(env, &r.Conditions, plan.Conditions, 0) {
		env.Record("member-condition", name, ConditionText(cd))
		if cd.Type == membership.TypeHealthy && cd.Status != metav1.ConditionTrue {
			// Losing a member changes no binding, but a PickFixed placement naming it is no
			// longer fulfilled: let placements re-decide.
			env.Fire(triggers.MemberHealthLost, name, "", name)
		}
	}
	hc, _ := condition.Find(r.Conditions, membership.TypeHealthy)
	r.HealthyReported = hc.Reason == membership.ReasonHealthy
	if plan.Remove {
		st.RemoveMemberCluster(name)
		env.Record("member-left", name, "")
		return
	}
	st.PutMemberCluster(r)
	if plan.CreateIMC || plan.SetIMCLeave {
		env.MemberNotified(name)
	}
	if plan.RequeueAfter > 0 {
		env.RequeueAfter(triggers.Membership, name, plan.RequeueAfter)
	}
}

// reconcilePlacement is the placement controller: deletion, resource snapshots and policy
// snapshots.
func (c *Controllers) reconcilePlacement(name string) {
	st, env := c.Store, c.Env
	p := st.Placement(name)
	if p == nil {
		return
	}
	if p.Deleting {
		for _, b := range slices.Clone(st.Bindings(name)) {
			st.DeleteBinding(b.Name)
			env.Record("binding-deleted", b.Name, "placement deleted")
			env.Fire(triggers.BindingDeleted, b.Name, name, b.TargetCluster)
		}
		st.RemovePlacement(name)
		env.Record("placement-deleted", name, "")
		return
	}
	c.snapshotResources(name, p)
	latest := p.LatestPolicySnapshot()
	dec := placement.DecidePolicySnapshot(name, p.Generation, p.CRP.Spec.Policy, latest)
	switch {
	case dec.Create != nil:
		p.PolicySnapshots = append(p.PolicySnapshots, dec.Create)
		if extra := len(p.PolicySnapshots) - 1 - p.HistoryLimit(); extra > 0 {
			p.PolicySnapshots = slices.Delete(p.PolicySnapshots, 0, extra)
		}
		env.Record("policy-snapshot-created", name, dec.Create.Name)
	case dec.SetNumberOfClusters != nil:
		latest.NumberOfClusters = *dec.SetNumberOfClusters
		env.Record("policy-snapshot-scaled", name, fmt.Sprintf("%s numberOfClusters=%d", latest.Name, latest.NumberOfClusters))
	default:
		st.PutPlacement(p)
		return
	}
	st.PutPlacement(p)
	env.Fire(triggers.PolicySnapshotNew, p.LatestPolicySnapshot().Name, name, "")
}

// snapshotResources takes a new resource snapshot when the selected content changed;
// resource-only changes never reschedule (CRP-SEL-CHANGES).
func (c *Controllers) snapshotResources(name string, p *Placement) {
	env := c.Env
	selected, err := c.Propagation.Select(p.CRP.Spec.ResourceSelectors, c.Store.HubObjects())
	if err != nil {
		if p.SelectionError == nil || p.SelectionError.Error() != err.Error() {
			env.Record("placement-selection-failed", name, err.Error())
		}
		p.SelectionError = err
		return
	}
	p.SelectionError = nil
	p.Selected = selected
	snap := resources.DecideSnapshot(name, selected, p.LatestResources())
	if snap == nil {
		return
	}
	p.ResourceSnapshots = append(p.ResourceSnapshots, snap)
	if extra := len(p.ResourceSnapshots) - 1 - p.HistoryLimit(); extra > 0 {
		p.ResourceSnapshots = slices.Delete(p.ResourceSnapshots, 0, extra)
	}
	env.Record("resource-snapshot-created", name, fmt.Sprintf("%s (%d resources)", snap.Name, len(snap.Manifests)))
	env.Fire(triggers.ResourceSnapshotNew, snap.Name, name, "")
}

func (c *Controllers) reconcileScheduler(name string) {
	st, env := c.Store, c.Env
	p, snap := c.livePlacement(name)
	if p == nil {
		return
	}
	in := scheduler.Input{Snapshot: snap, Members: st.Clusters(), Bindings: st.Bindings(name), Now: env.Now()}
	if vs, ok := st.(VersionedStore); ok {
		in.MembersVersion, in.BindingsVersion = vs.ClustersVersion(), vs.BindingsVersion(name)
	}
	if fs, ok := st.(StatusFeedStore); ok {
		in.Status = fs.StatusFeed()
	}
	plan, err := c.Scheduler.Schedule(in)
	if err != nil {
		cd := condition.False(condition.TypeScheduled, "InvalidSchedulingPolicy", err.Error())
		for _, cd := range c.setConditions(&p.Conditions, []condition.Condition{cd}, p.Generation) {
			env.Record("placement-condition", name, ConditionText(cd))
		}
		st.PutPlacement(p)
		return
	}
	for _, ch := range plan.Create {
		st.PutBinding(ch.Binding)
		env.Record("binding-scheduled", ch.Binding.Name, scoreText(ch))
	}
	for _, ch := range plan.Update {
		st.PutBinding(ch.Binding)
		env.Record("binding-repicked", ch.Binding.Name, ch.Reason)
	}
	for _, ch := range plan.Unschedule {
		st.PutBinding(ch.Binding)
		env.Record("binding-unscheduled", ch.Binding.Name, ch.Reason)
	}
	p.Decisions = plan.Decisions
	p.Scheduled, p.ScheduledGeneration, p.ObservedClusterCount = &plan.Scheduled, p.Generation, plan.Placed
	for _, cd := range c.setConditions(&p.Conditions, []condition.Condition{plan.Scheduled}, p.Generation) {
		detail := ConditionText(cd)
		if plan.Wanted >= 0 {
			detail += fmt.Sprintf(" (%d cluster(s) placed, %d wanted)", plan.Placed, plan.Wanted)
		}
		env.Record("placement-condition", name, detail)
	}
	st.PutPlacement(p)
	for _, cs := range [][]scheduler.Change{plan.Create, plan.Update, plan.Unschedule} {
		for _, ch := range cs {
			env.Fire(triggers.BindingChanged, ch.Binding.Name, name, ch.Binding.TargetCluster)
		}
	}
	c.refreshStatus(name)
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
