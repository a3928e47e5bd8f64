package invariants

// Staged-run invariants, written from STAGED-STRATEGY, STAGED-AFTER-STAGE-TASKS and
// STAGED-EXEC (and the before-stage approvals and maxConcurrency of upstream's newer API),
// reading only a run's status, its strategy snapshot and the approval requests in the
// store; never model/staged's decision.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
)

// timeSlack absorbs the API's one-second precision of condition times, so a production
// hub's objects (read back from the API server) compare as the simulator's do.
const timeSlack = time.Second

// StagedRunOrder: the stages of a staged update run go strictly in order. No cluster of a
// stage starts (and no stage, the deletion stage included, begins) before every earlier
// stage succeeded: all its clusters succeeded and all its after-stage tasks completed. A
// TimedWait completes no sooner than its waitTime after the stage's last cluster
// succeeded (or after the stage began, when it has no cluster); an Approval only once its
// ClusterApprovalRequest carries Approved=True, set before the next stage began.
func StagedRunOrder(st Reader, _ []placement.Binding) error {
	for _, name := range st.UpdateRunNames() {
		run := st.UpdateRun(name)
		snap, stages := runShape(run)
		if snap == nil {
			continue
		}
		approvals := approvalsByName(st, name)
		for k := 1; k <= len(stages); k++ {
			var next *staged.StageUpdatingStatus
			if k < len(stages) {
				next = &stages[k]
			} else {
				next = run.Status.DeletionStageStatus
			}
			at, ok := entered(next)
			if !ok {
				continue
			}
			prev := &stages[k-1]
			if !isTrue(prev.Conditions, staged.TypeSucceeded) {
				return fmt.Errorf("invariant stagedRunOrder: run %s: stage %s began at %s before stage %s succeeded", name, stageName(next), stamp(at), prev.StageName)
			}
			for _, c := range prev.Clusters {
				if !isTrue(c.Conditions, staged.TypeSucceeded) {
					return fmt.Errorf("invariant stagedRunOrder: run %s: stage %s began at %s while cluster %s of stage %s has not succeeded", name, stageName(next), stamp(at), c.ClusterName, prev.StageName)
				}
			}
			cfg := snap.Stages[k-1]
			for _, task := range cfg.AfterStageTasks {
				switch task.Type {
				case staged.TaskTimedWait:
					var wait time.Duration
					if task.WaitTime != nil {
						wait = task.WaitTime.Duration
					}
					if done := doneAt(prev); at.Add(timeSlack).Before(done.Add(wait)) {
						return fmt.Errorf("invariant stagedRunOrder: run %s: stage %s began at %s, before the TimedWait of %s after stage %s finished its clusters at %s", name, stageName(next), stamp(at), wait, prev.StageName, stamp(done))
					}
				case staged.TaskApproval:
					req := taskRequest(prev.AfterStageTaskStatus, staged.ApprovalRequestName(name, prev.StageName))
					if err := approvedBy(approvals, req, at); err != nil {
						return fmt.Errorf("invariant stagedRunOrder: run %s: stage %s began at %s, but the after-stage approval of stage %s %w", name, stageName(next), stamp(at), prev.StageName, err)
					}
				}
			}
		}
	}
	return nil
}

// StagedRunApprovals: no cluster of a stage with a before-stage Approval starts before the
// stage's ClusterApprovalRequest (<run>-before-<stage>) carries Approved=True.
func StagedRunApprovals(st Reader, _ []placement.Binding) error {
	for _, name := range st.UpdateRunNames() {
		run := st.UpdateRun(name)
		snap, stages := runShape(run)
		if snap == nil {
			continue
		}
		approvals := approvalsByName(st, name)
		for k := range stages {
			at, ok := firstStarted(&stages[k])
			if !ok {
				continue
			}
			for _, task := range snap.Stages[k].BeforeStageTasks {
				if task.Type != staged.TaskApproval {
					continue
				}
				req := taskRequest(stages[k].BeforeStageTaskStatus, staged.BeforeStageApprovalRequestName(name, stages[k].StageName))
				if err := approvedBy(approvals, req, at); err != nil {
					return fmt.Errorf("invariant stagedRunApprovals: run %s: a cluster of stage %s started at %s, but its before-stage approval %w", name, stages[k].StageName, stamp(at), err)
				}
			}
		}
	}
	return nil
}

// StagedMaxConcurrency: at no time do more clusters of a stage update at once (Started,
// not yet Succeeded nor failed) than its maxConcurrency allows: an integer, or a
// percentage of the stage's clusters rounded down; at least 1; unset is 1.
func StagedMaxConcurrency(st Reader, _ []placement.Binding) error {
	for _, name := range st.UpdateRunNames() {
		run := st.UpdateRun(name)
		snap, stages := runShape(run)
		if snap == nil {
			continue
		}
		for k := range stages {
			var updating []string
			for _, c := range stages[k].Clusters {
				if _, decided := condition.Find(c.Conditions, staged.TypeSucceeded); isTrue(c.Conditions, staged.TypeStarted) && !decided {
					updating = append(updating, c.ClusterName)
				}
			}
			if limit := concurrencyLimit(snap.Stages[k].MaxConcurrency, len(stages[k].Clusters)); len(updating) > limit {
				return fmt.Errorf("invariant stagedMaxConcurrency: run %s: stage %s updates %d clusters at once %v, more than its maxConcurrency %d", name, stages[k].StageName, len(updating), updating, limit)
			}
		}
	}
	return nil
}

// concurrencyLimit resolves maxConcurrency against the stage's n clusters.
func concurrencyLimit(v *intstr.IntOrString, n int) int {
	limit := 1
	switch {
	case v == nil:
	case v.Type == intstr.Int:
		limit = int(v.IntVal)
	case strings.HasSuffix(v.StrVal, "%"):
		p, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
		limit = p * n / 100
	default:
		limit, _ = strconv.Atoi(v.StrVal)
	}
	return max(limit, 1)
}

// runShape returns an initialized run's strategy snapshot and stage statuses, or nil when
// the run has none (or they do not match, which the run reports itself).
func runShape(run *staged.ClusterStagedUpdateRun) (*staged.StagedUpdateStrategySpec, []staged.StageUpdatingStatus) {
	if run == nil {
		return nil, nil
	}
	snap := run.Status.StagedUpdateStrategySnapshot
	if snap == nil || len(snap.Stages) != len(run.Status.StagesStatus) {
		return nil, nil
	}
	return snap, run.Status.StagesStatus
}

func isTrue(cs []condition.Timed, typ string) bool {
	c, ok := condition.Find(cs, typ)
	return ok && c.Status == metav1.ConditionTrue
}

// firstStarted is when the stage's first cluster started.
func firstStarted(ss *staged.StageUpdatingStatus) (time.Time, bool) {
	var at time.Time
	found := false
	for _, c := range ss.Clusters {
		if s, ok := condition.Find(c.Conditions, staged.TypeStarted); ok && s.Status == metav1.ConditionTrue {
			if !found || s.LastTransitionTime.Before(at) {
				at, found = s.LastTransitionTime, true
			}
		}
	}
	return at, found
}

// entered reports whether a stage began (it has a start time, a cluster started or a
// condition) and when (the earliest of those times).
func entered(ss *staged.StageUpdatingStatus) (time.Time, bool) {
	if ss == nil {
		return time.Time{}, false
	}
	at, found := firstStarted(ss)
	consider := func(t time.Time) {
		if !found || t.Before(at) {
			at, found = t, true
		}
	}
	if ss.StartTime != nil {
		consider(*ss.StartTime)
	}
	for _, c := range ss.Conditions {
		consider(c.LastTransitionTime)
	}
	return at, found
}

// doneAt is when the stage's last cluster succeeded, or when the stage began if it has none.
func doneAt(ss *staged.StageUpdatingStatus) time.Time {
	var at time.Time
	if ss.StartTime != nil {
		at = *ss.StartTime
	}
	for _, c := range ss.Clusters {
		if s, ok := condition.Find(c.Conditions, staged.TypeSucceeded); ok && s.LastTransitionTime.After(at) {
			at = s.LastTransitionTime
		}
	}
	return at
}

func stageName(ss *staged.StageUpdatingStatus) string { return ss.StageName }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func approvalsByName(st Reader, run string) map[string]*staged.ClusterApprovalRequest {
	out := map[string]*staged.ClusterApprovalRequest{}
	for _, a := range st.ApprovalRequests(run) {
		out[a.Name] = a
	}
	return out
}

// taskRequest is the approval request a task status names, or def.
func taskRequest(tasks []staged.AfterStageTaskStatus, def string) string {
	for _, t := range tasks {
		if t.Type == staged.TaskApproval && t.ApprovalRequestName != "" {
			return t.ApprovalRequestName
		}
	}
	return def
}

// approvedBy: the request exists and a user approved it no later than at. An approval
// withdrawn after at (Approved no longer True, changed after at) still counted.
func approvedBy(approvals map[string]*staged.ClusterApprovalRequest, name string, at time.Time) error {
	req := approvals[name]
	if req == nil {
		return fmt.Errorf("request %s does not exist", name)
	}
	c, ok := condition.Find(req.Status.Conditions, staged.TypeApproved)
	switch {
	case !ok:
		return fmt.Errorf("request %s was never approved", name)
	case c.Status == metav1.ConditionTrue && c.LastTransitionTime.After(at.Add(timeSlack)):
		return fmt.Errorf("request %s was approved only at %s", name, stamp(c.LastTransitionTime))
	case c.Status != metav1.ConditionTrue && !c.LastTransitionTime.After(at):
		return fmt.Errorf("request %s is not approved (Approved=%s since %s)", name, c.Status, stamp(c.LastTransitionTime))
	}
	return nil
}
