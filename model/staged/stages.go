package staged

// Stage execution (STAGED-EXEC, STAGED-AFTER-STAGE-TASKS): the update stages in order, each
// one's clusters at most MaxConcurrency at a time behind its before-stage approval, then its
// after-stage tasks (TimedWait, Approval through a ClusterApprovalRequest) in parallel; the
// deletion stage last.

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/mutant"
	"github.com/fleetsim/fleetsim/model/placement"
)

// execute moves the run on as far as it can at d.now.
func (d *decision) execute() {
	if c, ok := condition.Find(d.st.Conditions, TypeProgressing); !ok || c.Reason == ReasonUpdateRunStopped {
		d.setRun(condition.True(TypeProgressing, ReasonUpdateRunStarted, ""))
	}
	snap := d.st.StagedUpdateStrategySnapshot
	for i := range d.st.StagesStatus {
		if statusTrue(d.st.StagesStatus[i].Conditions, TypeSucceeded) {
			continue
		}
		if !d.runStage(&snap.Stages[i], &d.st.StagesStatus[i]) {
			if mutant.On("staged.nextStageEarly") {
				continue
			}
			d.settleProgressing()
			return
		}
	}
	if !d.runDeletionStage(d.st.DeletionStageStatus) {
		d.settleProgressing()
		return
	}
	d.setRun(condition.True(TypeSucceeded, ReasonUpdateRunSucceeded, ""))
	d.settleProgressing()
	d.finished = true
}

// runStage moves one update stage on; it reports whether the stage succeeded. Its clusters
// start in order, at most MaxConcurrency of them updating at a time.
func (d *decision) runStage(cfg *StageConfig, ss *StageUpdatingStatus) bool {
	// Before-stage tasks (an Approval) hold the stage's first cluster back.
	for k := range ss.BeforeStageTaskStatus {
		ts := &ss.BeforeStageTaskStatus[k]
		if ts.Type != TaskApproval {
			continue
		}
		ok, msg := d.approval(ss, ts, BeforeStageApprovalRequestName(d.run.Name, ss.StageName))
		if mutant.On("staged.beforeStageApprovalIgnored") {
			ok = true
		}
		if msg != "" {
			d.fail(PrefixUnexpected + msg)
			return false
		}
		if !ok {
			return false
		}
	}
	d.startStage(ss)
	limit := MaxConcurrency(cfg, len(ss.Clusters))
	if mutant.On("staged.maxConcurrencyPlusOne") {
		limit++
	}
	updating, pending := 0, false
	for j := range ss.Clusters {
		cs := &ss.Clusters[j]
		if statusTrue(cs.Conditions, TypeSucceeded) {
			continue
		}
		pending = true
		b := d.live[cs.ClusterName] // revalidate made sure it exists
		if !statusTrue(cs.Conditions, TypeStarted) {
			if updating >= limit {
				break
			}
			d.startCluster(ss, cs, b)
			d.wait(d.timing.ClusterCheckInterval)
			updating++
			continue
		}
		if msg := d.unexpected(ss, cs, b); msg != "" {
			d.set(&cs.Conditions, condition.False(TypeSucceeded, ReasonClusterUpdatingFailed, msg))
			d.fail(PrefixUnexpected + msg)
			return false
		}
		if !d.clusterDone(b) {
			d.waitForCluster(ss, cs)
			updating++
			continue
		}
		d.set(&cs.Conditions, condition.True(TypeSucceeded, ReasonClusterUpdatingSucceeded, ""))
	}
	if pending {
		// the after-stage tasks wait for every cluster (some may have succeeded in this pass)
		for j := range ss.Clusters {
			if !statusTrue(ss.Clusters[j].Conditions, TypeSucceeded) {
				return false
			}
		}
	}

	// Every cluster succeeded: the after-stage tasks run, in parallel, from the moment the
	// stage stops progressing (STAGED-AFTER-STAGE-TASKS, STAGE-TIMING-1).
	d.set(&ss.Conditions, condition.False(TypeProgressing, ReasonStageUpdatingWaiting, ""))
	waiting, _ := condition.Find(ss.Conditions, TypeProgressing)
	done := true
	for k := range ss.AfterStageTaskStatus {
		ts := &ss.AfterStageTaskStatus[k]
		switch ts.Type {
		case TaskTimedWait:
			if !d.timedWait(ts, findTask(cfg.AfterStageTasks, TaskTimedWait), waiting.LastTransitionTime) {
				done = false
			}
		case TaskApproval:
			ok, msg := d.approval(ss, ts, ApprovalRequestName(d.run.Name, ss.StageName))
			if mutant.On("staged.afterStageApprovalIgnored") {
				ok = true
			}
			if msg != "" {
				d.fail(PrefixUnexpected + msg)
				return false
			}
			if !ok {
				done = false
			}
		}
	}
	if !done {
		return false
	}
	d.set(&ss.Conditions, condition.True(TypeSucceeded, ReasonStageUpdatingSucceeded, ""))
	d.setEnd(ss)
	return true
}

// timedWait completes once waitTime has passed since start.
func (d *decision) timedWait(ts *AfterStageTaskStatus, cfg *AfterStageTask, start time.Time) bool {
	if statusTrue(ts.Conditions, TypeWaitTimeElapsed) {
		return true
	}
	var wait time.Duration
	if cfg != nil && cfg.WaitTime != nil {
		wait = cfg.WaitTime.Duration
	}
	if mutant.On("staged.timedWaitSkipped") {
		wait = 0
	}
	end := start.Add(wait)
	if d.now.Before(end) {
		d.wait(end.Sub(d.now))
		return false
	}
	d.set(&ts.Conditions, condition.True(TypeWaitTimeElapsed, ReasonAfterStageTaskWaitTimeElapsed, ""))
	return true
}

// approval creates the stage's approval request if it does not exist and completes once a
// user approved it, accepting the approval. A non-empty message is a failure.
func (d *decision) approval(ss *StageUpdatingStatus, ts *AfterStageTaskStatus, defaultName string) (bool, string) {
	if statusTrue(ts.Conditions, TypeApprovalRequestApproved) {
		return true, ""
	}
	name := ts.ApprovalRequestName
	if name == "" {
		name = defaultName
		ts.ApprovalRequestName = name
	}
	req := d.approvals[name]
	if req == nil {
		d.plan.CreateApprovalRequests = append(d.plan.CreateApprovalRequests, d.newApprovalRequest(name, ss.StageName))
		d.set(&ts.Conditions, condition.True(TypeApprovalRequestCreated, ReasonAfterStageTaskApprovalRequestCreated, ""))
		return false, ""
	}
	if want := (ApprovalRequestSpec{ParentStageRollout: d.run.Name, TargetStage: ss.StageName}); req.Spec != want {
		return false, fmt.Sprintf("the clusterApprovalRequest `%s` is for stage `%s` of clusterStagedUpdateRun `%s`, want stage `%s` of `%s`",
			name, req.Spec.TargetStage, req.Spec.ParentStageRollout, want.TargetStage, want.ParentStageRollout)
	}
	d.set(&ts.Conditions, condition.True(TypeApprovalRequestCreated, ReasonAfterStageTaskApprovalRequestCreated, ""))
	if !statusTrue(req.Status.Conditions, TypeApproved) {
		return false, ""
	}
	d.set(&ts.Conditions, condition.True(TypeApprovalRequestApproved, ReasonAfterStageTaskApprovalRequestApproved, ""))
	if !statusTrue(req.Status.Conditions, TypeApprovalAccepted) {
		acc := *req.DeepCopy()
		gen := acc.Generation
		condition.Set(&acc.Status.Conditions, condition.True(TypeApprovalAccepted, ReasonApprovalRequestApprovalAccepted, ""), gen, d.now)
		d.plan.AcceptApprovalRequests = append(d.plan.AcceptApprovalRequests, acc)
	}
	return true, ""
}

func (d *decision) newApprovalRequest(name, stage string) ClusterApprovalRequest {
	return ClusterApprovalRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: placement.GroupVersion, Kind: KindApprovalRequest},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			LabelTargetUpdateRun:           d.run.Name,
			LabelTargetUpdatingStage:       stage,
			LabelIsLatestUpdateRunApproval: "true",
		}},
		Spec: ApprovalRequestSpec{ParentStageRollout: d.run.Name, TargetStage: stage},
	}
}

// runDeletionStage deletes the bindings of clusters no longer selected, all at once, and
// succeeds once they are gone (STAGED-EXEC).
func (d *decision) runDeletionStage(ds *StageUpdatingStatus) bool {
	d.startStage(ds)
	pending := false
	for j := range ds.Clusters {
		cs := &ds.Clusters[j]
		if statusTrue(cs.Conditions, TypeSucceeded) {
			continue
		}
		if b := d.live[cs.ClusterName]; b != nil {
			// revalidate fails first when a cluster is picked again; this guards a status
			// edited by hand.
			msg := fmt.Sprintf("the clusterResourceBinding `%s` of the deleting cluster `%s` is %s again", b.Name, cs.ClusterName, b.State)
			d.set(&cs.Conditions, condition.False(TypeSucceeded, ReasonClusterUpdatingFailed, msg))
			d.fail(PrefixUnexpected + msg)
			return false
		}
		d.set(&cs.Conditions, condition.True(TypeStarted, ReasonClusterUpdatingStarted, ""))
		bs := d.others[cs.ClusterName]
		if len(bs) == 0 {
			d.set(&cs.Conditions, condition.True(TypeSucceeded, ReasonClusterUpdatingSucceeded, ""))
			continue
		}
		for _, b := range bs {
			if !b.Deleting {
				d.plan.DeleteBindings = append(d.plan.DeleteBindings, Change{
					Binding: b.Copy(),
					Reason:  fmt.Sprintf("cluster %s is no longer selected; deleted by the deletion stage of clusterStagedUpdateRun %s", cs.ClusterName, d.run.Name),
				})
			}
		}
		if !pending {
			d.waitForCluster(ds, cs)
		}
		pending = true
	}
	if pending {
		return false
	}
	d.set(&ds.Conditions, condition.True(TypeSucceeded, ReasonStageUpdatingSucceeded, ""))
	d.setEnd(ds)
	return true
}

func (d *decision) startStage(ss *StageUpdatingStatus) {
	if ss.StartTime != nil {
		return
	}
	t := d.now
	ss.StartTime = &t
	d.set(&ss.Conditions, condition.True(TypeProgressing, ReasonStageUpdatingStarted, ""))
}

func (d *decision) setEnd(ss *StageUpdatingStatus) {
	t := d.now
	ss.EndTime = &t
}

// MaxConcurrency resolves a stage's maxConcurrency for n clusters: a number, or a
// percentage of n rounded down; never below 1. nil (or a value that does not parse) is 1.
func MaxConcurrency(cfg *StageConfig, n int) int {
	if cfg == nil || cfg.MaxConcurrency == nil {
		return 1
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(cfg.MaxConcurrency, n, false)
	if mutant.On("staged.maxConcurrencyRoundsUp") {
		v, err = intstr.GetScaledValueFromIntOrPercent(cfg.MaxConcurrency, n, true)
	}
	if err != nil || v < 1 {
		return 1
	}
	return v
}

func findTask(ts []AfterStageTask, typ AfterStageTaskType) *AfterStageTask {
	for i := range ts {
		if ts[i].Type == typ {
			return &ts[i]
		}
	}
	return nil
}
