package staged_test

// Property tests: random strategies, fleets, member delays and approval times.

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
)

// propWorld draws a strategy of 1–4 stages (each selecting tier=<stage>, some empty, some
// sorted by an "order" label, with random after-stage tasks), a fleet whose every scheduled
// member is in exactly one stage, a few Unscheduled clusters, member apply delays and
// approval delays.
func propWorld(rt *rapid.T) *world {
	nStages := rapid.IntRange(1, 4).Draw(rt, "stages")
	var stages []staged.StageConfig
	for i := range nStages {
		name := fmt.Sprintf("s%d", i)
		st := newStage(name, map[string]string{"tier": name})
		if rapid.Bool().Draw(rt, name+"-sorted") {
			st = sortedBy("order", st)
		}
		var tasks []staged.AfterStageTask
		if rapid.Bool().Draw(rt, name+"-wait") {
			tasks = append(tasks, timedWait(time.Duration(rapid.IntRange(0, 180).Draw(rt, name+"-waitSeconds"))*time.Second))
		}
		if rapid.Bool().Draw(rt, name+"-approval") {
			tasks = append(tasks, approvalTask())
		}
		if len(tasks) == 2 && rapid.Bool().Draw(rt, name+"-swap") {
			tasks[0], tasks[1] = tasks[1], tasks[0]
		}
		st.AfterStageTasks = tasks
		stages = append(stages, st)
	}
	nMembers := rapid.IntRange(0, 7).Draw(rt, "members")
	var members []*member.Member
	var bindings []*placement.Binding
	for i := range nMembers {
		name := fmt.Sprintf("m%d", i)
		m := newMember(name, "tier=s"+strconv.Itoa(rapid.IntRange(0, nStages-1).Draw(rt, name+"-stage")))
		if rapid.Bool().Draw(rt, name+"-hasOrder") {
			m.Labels["order"] = strconv.Itoa(rapid.IntRange(-2, 3).Draw(rt, name+"-order"))
		}
		members = append(members, m)
		state := rapid.SampledFrom([]placement.BindingState{placement.Scheduled, placement.Bound, placement.Unscheduled}).Draw(rt, name+"-state")
		b := newBinding(name, state)
		b.Generation = int64(rapid.IntRange(1, 5).Draw(rt, name+"-generation"))
		if state == placement.Bound {
			b.ResourceSnapshotName = crpName + "-0-snapshot"
		}
		bindings = append(bindings, b)
		if rapid.IntRange(0, 3).Draw(rt, name+"-extra") == 0 {
			// An older Unscheduled binding of the same cluster (its name taken by attempt 1):
			// with a live binding it is left alone; with another Unscheduled one both go.
			extra := newBinding(name, placement.Unscheduled)
			extra.Name = placement.BindingName(crpName, name, 1)
			bindings = append(bindings, extra)
		}
	}
	w := newWorld(rt, newStrategy(stages...), members, bindings...)
	for _, m := range members {
		w.readyAfter[m.Name] = time.Duration(rapid.IntRange(0, 40).Draw(rt, m.Name+"-ready")) * time.Second
	}
	w.approveAfter = time.Duration(rapid.IntRange(0, 240).Draw(rt, "approveAfter")) * time.Second
	w.deleteAfter = time.Duration(rapid.IntRange(0, 30).Draw(rt, "deleteAfter")) * time.Second
	return w
}

// TestPropStagesInOrder: a run never updates a cluster of stage k+1 before every cluster of
// stage k succeeded and stage k's after-stage tasks completed; within a stage one cluster
// updates at a time, in plan order; deletions come last; every run succeeds.
func TestPropStagesInOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := propWorld(rt)
		w.drive(2000)
		st := w.run.Status
		if !statusTrue(st.Conditions, staged.TypeSucceeded) {
			rt.Fatalf("run did not succeed:\n%s", timeline(st))
		}
		var want []string
		stageOf := map[string]int{}
		for k, ss := range st.StagesStatus {
			for _, c := range ss.Clusters {
				want = append(want, c.ClusterName)
				stageOf[c.ClusterName] = k
			}
		}
		if got := w.order(); !slices.Equal(got, want) {
			rt.Fatalf("update order = %v, want the plan's %v", got, want)
		}
		for _, l := range w.log {
			if l.Deleted {
				for k, ss := range l.Status.StagesStatus {
					if !statusTrue(ss.Conditions, staged.TypeSucceeded) {
						rt.Fatalf("at %s: %s deleted before stage %d succeeded", l.At.Sub(t0), l.Cluster, k)
					}
				}
				continue
			}
			k := stageOf[l.Cluster]
			for j := range k {
				ss := l.Status.StagesStatus[j]
				if !statusTrue(ss.Conditions, staged.TypeSucceeded) {
					rt.Fatalf("at %s: %s (stage %d) updated before stage %d succeeded", l.At.Sub(t0), l.Cluster, k, j)
				}
				for _, c := range ss.Clusters {
					if !statusTrue(c.Conditions, staged.TypeSucceeded) {
						rt.Fatalf("at %s: %s (stage %d) updated before %s (stage %d) succeeded", l.At.Sub(t0), l.Cluster, k, c.ClusterName, j)
					}
				}
				for _, ts := range ss.AfterStageTaskStatus {
					typ := staged.TypeWaitTimeElapsed
					if ts.Type == staged.TaskApproval {
						typ = staged.TypeApprovalRequestApproved
					}
					if !statusTrue(ts.Conditions, typ) {
						rt.Fatalf("at %s: %s (stage %d) updated before the %s task of stage %d completed", l.At.Sub(t0), l.Cluster, k, ts.Type, j)
					}
				}
			}
			// One cluster at a time, in plan order, within the stage.
			for _, c := range l.Status.StagesStatus[k].Clusters {
				if c.ClusterName == l.Cluster {
					break
				}
				if !statusTrue(c.Conditions, staged.TypeSucceeded) {
					rt.Fatalf("at %s: %s updated while %s of the same stage had not succeeded", l.At.Sub(t0), l.Cluster, c.ClusterName)
				}
			}
		}
		// Timing: a stage's TimedWait lasts from its Waiting transition; the next stage
		// starts when the previous one ends.
		for k, ss := range st.StagesStatus {
			waiting, _ := condition.Find(ss.Conditions, staged.TypeProgressing)
			if cfg := st.StagedUpdateStrategySnapshot.Stages[k]; len(cfg.AfterStageTasks) > 0 {
				for _, task := range cfg.AfterStageTasks {
					if task.Type == staged.TaskTimedWait && ss.EndTime.Before(waiting.LastTransitionTime.Add(task.WaitTime.Duration)) {
						rt.Fatalf("stage %s ended at %s, before its wait of %s from %s", ss.StageName, ss.EndTime.Sub(t0), task.WaitTime.Duration, waiting.LastTransitionTime.Sub(t0))
					}
				}
			}
			next := st.DeletionStageStatus
			if k+1 < len(st.StagesStatus) {
				next = &st.StagesStatus[k+1]
			}
			if !next.StartTime.Equal(*ss.EndTime) {
				rt.Fatalf("stage %s started at %s, stage %s ended at %s", next.StageName, next.StartTime.Sub(t0), ss.StageName, ss.EndTime.Sub(t0))
			}
		}
		for _, n := range sortedKeys(w.bindings) {
			b := w.bindings[n]
			if b.State == placement.Unscheduled {
				// Only a cluster that also holds a live binding keeps its old Unscheduled one:
				// the deletion stage is for clusters no longer selected.
				if _, planned := stageOf[b.TargetCluster]; !planned {
					rt.Fatalf("Unscheduled binding %s of an unselected cluster left after the run", n)
				}
				continue
			}
			if b.ResourceSnapshotName != crpName+"-1-snapshot" || !condition.IsTrue(b.Conditions, condition.TypeAvailable, b.Generation) {
				rt.Fatalf("binding %s at %q not available at its generation", n, b.ResourceSnapshotName)
			}
		}
	})
}

// TestPropPermutationInvariance: at every reconcile of a run, Decide gives the same plan for
// any order of bindings, members, approval requests and other runs, and never modifies its
// input.
func TestPropPermutationInvariance(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := propWorld(rt)
		w.others = []*staged.ClusterStagedUpdateRun{newRun("a-run", "0"), newRun("z-run", "0")}
		for i := range 60 {
			in := w.input()
			before := deepCopyInput(in)
			want := staged.Decide(in)
			if diff := cmp.Diff(before, in); diff != "" {
				rt.Fatalf("Decide modified its input (-before +after):\n%s", diff)
			}
			perm := in
			perm.Bindings = rapid.Permutation(in.Bindings).Draw(rt, fmt.Sprintf("bindings%d", i))
			perm.Members = rapid.Permutation(in.Members).Draw(rt, fmt.Sprintf("members%d", i))
			perm.ApprovalRequests = rapid.Permutation(in.ApprovalRequests).Draw(rt, fmt.Sprintf("approvals%d", i))
			perm.OtherRuns = rapid.Permutation(in.OtherRuns).Draw(rt, fmt.Sprintf("others%d", i))
			if got := staged.Decide(perm); !cmp.Equal(want, got) {
				rt.Fatalf("Decide(permuted) = %v, want %v; diff (-want +got):\n%s", got, want, cmp.Diff(want, got))
			}
			p := w.step()
			if done(p.Status) {
				return
			}
			w.advance(w.now.Add(max(p.RequeueAfter, time.Second)))
		}
	})
}

// deepCopyInput copies what Decide could modify: the run, bindings and approval requests.
func deepCopyInput(in staged.Input) staged.Input {
	out := in
	out.Run = in.Run.DeepCopy()
	out.Bindings = nil
	for _, b := range in.Bindings {
		c := *b
		c.Conditions = slices.Clone(b.Conditions)
		c.ClusterResourceOverrideSnapshots = slices.Clone(b.ClusterResourceOverrideSnapshots)
		c.ResourceOverrideSnapshots = slices.Clone(b.ResourceOverrideSnapshots)
		out.Bindings = append(out.Bindings, &c)
	}
	out.ApprovalRequests = nil
	for _, a := range in.ApprovalRequests {
		out.ApprovalRequests = append(out.ApprovalRequests, a.DeepCopy())
	}
	return out
}
