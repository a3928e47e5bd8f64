package staged_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
)

// TestStageTiming1 is STAGE-TIMING-1 [Staged Update › Understand ClusterStagedUpdateRun status], driven one reconcile at a time: the last
// cluster of staging succeeds at T, the stage starts waiting and the approval request is
// created at T; the wait elapses at T+1m, the approval comes at T+1m1s; staging succeeds
// then and canary starts at the same instant.
func TestStageTiming1(t *testing.T) {
	s := newStrategy(
		newStage("staging", env("staging"), approvalTask(), timedWait(time.Minute)),
		newStage("canary", env("canary"), approvalTask()),
	)
	w := scheduled(t, s, []*member.Member{newMember("member1", "environment=staging"), newMember("member2", "environment=canary")})
	w.defaultReady = 5 * time.Second

	type step struct {
		at           time.Duration
		approve      bool
		wantRequeue  time.Duration
		wantUpdates  []string // clusters whose bindings the plan writes
		wantCreate   []string // approval requests created
		wantAccepted []string // approval requests accepted
	}
	T := 15 * time.Second
	steps := []step{
		{at: 0, wantRequeue: 15 * time.Second, wantUpdates: []string{"member1"}},
		{at: T, wantRequeue: time.Minute, wantCreate: []string{"example-run-after-staging"}},
		{at: T + 30*time.Second, wantRequeue: 30 * time.Second}, // a spurious reconcile
		{at: T + time.Minute},
		{at: T + time.Minute + time.Second, approve: true, wantRequeue: 15 * time.Second, wantUpdates: []string{"member2"}, wantAccepted: []string{"example-run-after-staging"}},
	}
	for i, st := range steps {
		w.advance(at(st.at))
		if st.approve {
			w.approve("example-run-after-staging")
		}
		p := w.step()
		got := step{at: st.at, approve: st.approve, wantRequeue: p.RequeueAfter}
		for _, c := range p.UpdateBindings {
			got.wantUpdates = append(got.wantUpdates, c.Binding.TargetCluster)
		}
		for _, a := range p.CreateApprovalRequests {
			got.wantCreate = append(got.wantCreate, a.Name)
		}
		for _, a := range p.AcceptApprovalRequests {
			got.wantAccepted = append(got.wantAccepted, a.Name)
		}
		if diff := cmp.Diff(st, got, cmp.AllowUnexported(step{})); diff != "" {
			t.Errorf("Decide(step %d at T0+%s) = %+v, want %+v", i, st.at, got, st)
		}
	}
	want := []string{
		"run Initialized=True/UpdateRunInitializedSuccessfully@0s",
		"run Progressing=True/UpdateRunStarted@0s",
		"stage staging start=0s end=1m16s",
		"stage staging Progressing=False/StageUpdatingWaiting@15s",
		"stage staging Succeeded=True/StageUpdatingSucceeded@1m16s",
		"cluster member1 Started=True/ClusterUpdatingStarted@0s",
		"cluster member1 Succeeded=True/ClusterUpdatingSucceeded@15s",
		"task staging/Approval ApprovalRequestCreated=True/AfterStageTaskApprovalRequestCreated@15s",
		"task staging/Approval ApprovalRequestApproved=True/AfterStageTaskApprovalRequestApproved@1m16s",
		"task staging/TimedWait WaitTimeElapsed=True/AfterStageTaskWaitTimeElapsed@1m15s",
		"stage canary start=1m16s end=-",
		"stage canary Progressing=True/StageUpdatingStarted@1m16s",
		"cluster member2 Started=True/ClusterUpdatingStarted@1m16s",
		"stage kubernetes-fleet.io/deleteStage start=- end=-",
	}
	if diff := cmp.Diff(want, timelineLines(w.run.Status)); diff != "" {
		t.Errorf("Decide(STAGE-TIMING-1) = %v, want %v; diff (-want +got):\n%s", timeline(w.run.Status), strings.Join(want, "\n"), diff)
	}
}

// TestConceptSampleTimeline replays the concept's completed run [Staged Update › Understand ClusterStagedUpdateRun status] with the same
// approval times and reproduces every timestamp of its status: 23:21:39 is t0.
func TestConceptSampleTimeline(t *testing.T) {
	s := newStrategy(
		newStage("staging", env("staging"), approvalTask(), timedWait(time.Minute)),
		sortedBy("name", newStage("canary", env("canary"), approvalTask())),
		sortedBy("order", newStage("production", env("production"), timedWait(time.Minute), approvalTask())),
	)
	w := scheduled(t, s, []*member.Member{newMember("member1", "environment=staging"), newMember("member2", "environment=canary")})
	clock := func(hms string) time.Time {
		tm, err := time.Parse(time.DateTime, "2025-03-12 "+hms)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	w.approveAt = map[string]time.Time{
		"example-run-after-staging":    clock("23:22:55"),
		"example-run-after-canary":     clock("23:25:15"),
		"example-run-after-production": clock("23:25:25"),
	}
	w.drive(100)
	want := []string{
		"run Initialized=True/UpdateRunInitializedSuccessfully@0s",                                          // 23:21:39
		"run Progressing=True/UpdateRunStarted@0s",                                                          // 23:21:39
		"run Succeeded=True/UpdateRunSucceeded@4m36s",                                                       // 23:26:15
		"stage staging start=0s end=1m16s",                                                                  // 23:21:39, 23:22:55
		"stage staging Progressing=False/StageUpdatingWaiting@15s",                                          // 23:21:54
		"stage staging Succeeded=True/StageUpdatingSucceeded@1m16s",                                         // 23:22:55
		"cluster member1 Started=True/ClusterUpdatingStarted@0s",                                            // 23:21:39
		"cluster member1 Succeeded=True/ClusterUpdatingSucceeded@15s",                                       // 23:21:54
		"task staging/Approval ApprovalRequestCreated=True/AfterStageTaskApprovalRequestCreated@15s",        // 23:21:54
		"task staging/Approval ApprovalRequestApproved=True/AfterStageTaskApprovalRequestApproved@1m16s",    // 23:22:55
		"task staging/TimedWait WaitTimeElapsed=True/AfterStageTaskWaitTimeElapsed@1m15s",                   // 23:22:54
		"stage canary start=1m16s end=3m36s",                                                                // 23:22:55, 23:25:15
		"stage canary Progressing=False/StageUpdatingWaiting@1m31s",                                         // 23:23:10
		"stage canary Succeeded=True/StageUpdatingSucceeded@3m36s",                                          // 23:25:15
		"cluster member2 Started=True/ClusterUpdatingStarted@1m16s",                                         // 23:22:55
		"cluster member2 Succeeded=True/ClusterUpdatingSucceeded@1m31s",                                     // 23:23:10
		"task canary/Approval ApprovalRequestCreated=True/AfterStageTaskApprovalRequestCreated@1m31s",       // 23:23:10
		"task canary/Approval ApprovalRequestApproved=True/AfterStageTaskApprovalRequestApproved@3m36s",     // 23:25:15
		"stage production start=3m36s end=4m36s",                                                            // 23:25:15, 23:26:15
		"stage production Progressing=False/StageUpdatingWaiting@3m36s",                                     // 23:25:15
		"stage production Succeeded=True/StageUpdatingSucceeded@4m36s",                                      // 23:26:15
		"task production/TimedWait WaitTimeElapsed=True/AfterStageTaskWaitTimeElapsed@4m36s",                // 23:26:15
		"task production/Approval ApprovalRequestCreated=True/AfterStageTaskApprovalRequestCreated@3m36s",   // 23:25:15
		"task production/Approval ApprovalRequestApproved=True/AfterStageTaskApprovalRequestApproved@3m46s", // 23:25:25
		"stage kubernetes-fleet.io/deleteStage start=4m36s end=4m36s",                                       // 23:26:15
		"stage kubernetes-fleet.io/deleteStage Progressing=True/StageUpdatingStarted@4m36s",
		"stage kubernetes-fleet.io/deleteStage Succeeded=True/StageUpdatingSucceeded@4m36s",
	}
	if diff := cmp.Diff(want, timelineLines(w.run.Status)); diff != "" {
		t.Errorf("Decide(concept sample) = %v, want %v; diff (-want +got):\n%s", timeline(w.run.Status), strings.Join(want, "\n"), diff)
	}
	if got := w.order(); !cmp.Equal(got, []string{"member1", "member2"}) {
		t.Errorf("update order = %v, want [member1 member2]", got)
	}
}

// TestEmptyStageRunsItsTasks: a stage without clusters still waits for its TimedWait and its
// Approval before the next stage starts [Staged Update › Understand ClusterStagedUpdateRun status].
func TestEmptyStageRunsItsTasks(t *testing.T) {
	s := newStrategy(
		newStage("staging", env("staging")),
		newStage("production", env("production"), timedWait(10*time.Minute), approvalTask()),
		newStage("canary", env("canary")),
	)
	w := scheduled(t, s, []*member.Member{newMember("member1", "environment=staging"), newMember("member2", "environment=canary")})
	w.approveAt = map[string]time.Time{"example-run-after-production": at(2 * time.Minute)}
	w.drive(100)
	if got := w.order(); !cmp.Equal(got, []string{"member1", "member2"}) {
		t.Errorf("update order = %v, want [member1 member2]", got)
	}
	// staging succeeds at 15s: production waits from 15s; its TimedWait ends at 10m15s, after
	// the approval at 2m; canary starts then.
	if got, want := w.log[1].At, at(10*time.Minute+15*time.Second); !got.Equal(want) {
		t.Errorf("member2 updated at T0+%s, want T0+%s", got.Sub(t0), want.Sub(t0))
	}
	prod := w.run.Status.StagesStatus[1]
	if len(prod.Clusters) != 0 || !statusTrue(prod.Conditions, staged.TypeSucceeded) {
		t.Errorf("production stage = %+v, want no clusters and Succeeded", prod)
	}

	// Without tasks, an empty stage passes at once: Waiting and Succeeded at the same instant.
	s = newStrategy(newStage("staging", env("staging")), newStage("production", env("production")))
	w = scheduled(t, s, []*member.Member{newMember("member1", "environment=staging")})
	w.drive(100)
	want := []string{
		"stage production start=15s end=15s",
		"stage production Progressing=False/StageUpdatingWaiting@15s",
		"stage production Succeeded=True/StageUpdatingSucceeded@15s",
	}
	got := timelineLines(w.run.Status)
	i := 0
	for i < len(got) && !strings.HasPrefix(got[i], "stage production start") {
		i++
	}
	if diff := cmp.Diff(want, got[i:min(i+3, len(got))]); diff != "" {
		t.Errorf("Decide(empty stage without tasks) = %v, want %v", timeline(w.run.Status), want)
	}
}

// TestApprovalFlow: the request is created once with its labels and spec; Approved=False is
// not an approval; Approved=True completes the task and is accepted [Staged Update › An example ClusterStagedUpdateStrategy looks like below; How to Roll Out and Roll Back Changes in Stage › A more detailed look at the status].
func TestApprovalFlow(t *testing.T) {
	s := newStrategy(newStage("canary", env("canary"), approvalTask()), newStage("production", env("production")))
	w := scheduled(t, s, []*member.Member{newMember("member1", "environment=canary"), newMember("member2", "environment=production")})
	w.step()
	w.advance(at(15 * time.Second))
	p := w.step()
	wantReq := staged.ClusterApprovalRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "placement.kubernetes-fleet.io/v1beta1", Kind: "ClusterApprovalRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: "example-run-after-canary", Labels: map[string]string{
			"kubernetes-fleet.io/targetupdaterun":           "example-run",
			"kubernetes-fleet.io/targetUpdatingStage":       "canary",
			"kubernetes-fleet.io/isLatestUpdateRunApproval": "true",
		}},
		Spec: staged.ApprovalRequestSpec{ParentStageRollout: "example-run", TargetStage: "canary"},
	}
	if diff := cmp.Diff([]staged.ClusterApprovalRequest{wantReq}, p.CreateApprovalRequests); diff != "" {
		t.Errorf("Decide(stage done) approval requests = %v, want %v; diff (-want +got):\n%s", p.CreateApprovalRequests, wantReq, diff)
	}
	if p.RequeueAfter != 0 {
		t.Errorf("Decide(waiting for approval) requeue = %s, want 0 (approval requests are watched)", p.RequeueAfter)
	}

	// Reconciles before approval create nothing more.
	for _, d := range []time.Duration{time.Minute, time.Hour} {
		w.advance(at(d))
		if p := w.step(); len(p.CreateApprovalRequests)+len(p.AcceptApprovalRequests)+len(p.UpdateBindings) != 0 {
			t.Errorf("Decide(T0+%s, not approved) = %+v, want nothing written", d, p)
		}
	}
	// Approved=False is no approval.
	req := w.approvals["example-run-after-canary"]
	condition.Set(&req.Status.Conditions, condition.False(staged.TypeApproved, "nope", ""), 1, w.now)
	if p := w.step(); len(p.UpdateBindings) != 0 || len(p.AcceptApprovalRequests) != 0 {
		t.Errorf("Decide(Approved=False) = %+v, want nothing written", p)
	}
	// Approved=True: accepted, the next stage starts.
	w.advance(at(2 * time.Hour))
	w.approve("example-run-after-canary")
	p = w.step()
	if len(p.AcceptApprovalRequests) != 1 {
		t.Fatalf("Decide(approved) accepted %d requests, want 1", len(p.AcceptApprovalRequests))
	}
	wantAcc := condition.True(staged.TypeApprovalAccepted, staged.ReasonApprovalRequestApprovalAccepted, "")
	if got := findCond(p.AcceptApprovalRequests[0].Status.Conditions, staged.TypeApprovalAccepted); got != wantAcc {
		t.Errorf("Decide(approved) ApprovalAccepted = %v, want %v", got, wantAcc)
	}
	if got := findCond(p.AcceptApprovalRequests[0].Status.Conditions, staged.TypeApproved); got.Status != metav1.ConditionTrue {
		t.Errorf("Decide(approved) dropped the user's Approved condition: %v", p.AcceptApprovalRequests[0].Status.Conditions)
	}
	if len(p.UpdateBindings) != 1 || p.UpdateBindings[0].Binding.TargetCluster != "member2" {
		t.Errorf("Decide(approved) updates %v, want member2", p.UpdateBindings)
	}
}

// TestApprovalRequestDeletedBeforeApproval: a request deleted before it was approved is
// created again.
func TestApprovalRequestDeletedBeforeApproval(t *testing.T) {
	s := newStrategy(newStage("canary", nil, approvalTask()))
	w := scheduled(t, s, []*member.Member{newMember("member1")})
	w.step()
	w.advance(at(15 * time.Second))
	if p := w.step(); len(p.CreateApprovalRequests) != 1 {
		t.Fatalf("Decide(stage done) created %d requests, want 1", len(p.CreateApprovalRequests))
	}
	delete(w.approvals, "example-run-after-canary")
	w.advance(at(time.Minute))
	p := w.step()
	if len(p.CreateApprovalRequests) != 1 {
		t.Errorf("Decide(request deleted) created %d requests, want 1", len(p.CreateApprovalRequests))
	}
	created, _ := condition.Find(w.run.Status.StagesStatus[0].AfterStageTaskStatus[0].Conditions, staged.TypeApprovalRequestCreated)
	if !created.LastTransitionTime.Equal(at(15 * time.Second)) {
		t.Errorf("ApprovalRequestCreated moved to T0+%s, want T0+15s", created.LastTransitionTime.Sub(t0))
	}
}

// TestApprovalRequestOfAnotherRun: a request with the stage's name but another target fails
// the run.
func TestApprovalRequestOfAnotherRun(t *testing.T) {
	s := newStrategy(newStage("canary", nil, approvalTask()))
	w := scheduled(t, s, []*member.Member{newMember("member1")})
	w.approvals["example-run-after-canary"] = &staged.ClusterApprovalRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "example-run-after-canary"},
		Spec:       staged.ApprovalRequestSpec{ParentStageRollout: "example", TargetStage: "run-canary"},
	}
	w.step()
	w.advance(at(15 * time.Second))
	w.step()
	want := condition.False(staged.TypeSucceeded, staged.ReasonUpdateRunFailed, staged.PrefixUnexpected+
		"the clusterApprovalRequest `example-run-after-canary` is for stage `run-canary` of clusterStagedUpdateRun `example`, want stage `canary` of `example-run`")
	if got := findCond(w.run.Status.Conditions, staged.TypeSucceeded); got != want {
		t.Errorf("Decide(foreign approval request) Succeeded = %v, want %v", got, want)
	}
}

// TestDeletionStage: Unscheduled bindings are deleted after every update stage, all at once;
// a binding already being deleted is only waited for [Staged Update › Trigger rollout with ClusterStagedUpdateRun; Staged Update › Stages and clusters status].
func TestDeletionStage(t *testing.T) {
	s := newStrategy(newStage("all", nil, timedWait(time.Minute)))
	members := []*member.Member{newMember("member1"), newMember("member2"), newMember("member3"), newMember("member4")}
	b3 := newBinding("member3", placement.Unscheduled)
	b3.PreviousState = placement.Bound
	b4 := newBinding("member4", placement.Unscheduled)
	b4.Deleting = true
	w := newWorld(t, s, members, newBinding("member1", placement.Scheduled), newBinding("member2", placement.Bound), b3, b4)
	w.schedule(at(3*time.Minute), false, func() { delete(w.bindings, b4.Name) })
	w.deleteAfter = 20 * time.Second
	w.drive(100)

	var deletions []string
	for _, l := range w.log {
		if l.Deleted {
			deletions = append(deletions, l.Cluster)
			if !statusTrue(l.Status.StagesStatus[0].Conditions, staged.TypeSucceeded) {
				t.Errorf("binding of %s deleted before the update stage succeeded", l.Cluster)
			}
		}
	}
	if diff := cmp.Diff([]string{"member3"}, deletions); diff != "" {
		t.Errorf("deleted bindings (-want +got):\n%s", diff)
	}
	if got := sortedKeys(w.bindings); len(got) != 2 {
		t.Errorf("bindings left = %v, want member1's and member2's", got)
	}
	// staging: member1 0s→15s, member2 15s→30s, wait 1m → 1m30s; deletion of member3 takes
	// 20s (gone at 1m50s, seen at the 15 s check of 2m0s) and member4 is gone at 3m (seen at
	// the check of 3m0s).
	want := []string{
		"stage kubernetes-fleet.io/deleteStage start=1m30s end=3m0s",
		"stage kubernetes-fleet.io/deleteStage Progressing=True/StageUpdatingStarted@1m30s",
		"stage kubernetes-fleet.io/deleteStage Succeeded=True/StageUpdatingSucceeded@3m0s",
		"cluster member3 Started=True/ClusterUpdatingStarted@1m30s",
		"cluster member3 Succeeded=True/ClusterUpdatingSucceeded@2m0s",
		"cluster member4 Started=True/ClusterUpdatingStarted@1m30s",
		"cluster member4 Succeeded=True/ClusterUpdatingSucceeded@3m0s",
	}
	got := timelineLines(w.run.Status)
	got = got[len(got)-len(want):]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decide(deletion stage) = %v, want %v; diff (-want +got):\n%s", timeline(w.run.Status), strings.Join(want, "\n"), diff)
	}
	if !statusTrue(w.run.Status.Conditions, staged.TypeSucceeded) {
		t.Errorf("run did not succeed:\n%s", timeline(w.run.Status))
	}
}

// TestDeletionStuck: a binding that is never removed makes the run report itself stuck in
// the deletion stage.
func TestDeletionStuck(t *testing.T) {
	w := newWorld(t, newStrategy(newStage("all", nil)), []*member.Member{newMember("member1"), newMember("member2")},
		newBinding("member1", placement.Scheduled), newBinding("member2", placement.Unscheduled))
	w.deleteAfter = time.Hour
	w.step()
	w.advance(at(15 * time.Second))
	if p := w.step(); len(p.DeleteBindings) != 1 || p.DeleteBindings[0].Binding.TargetCluster != "member2" {
		t.Fatalf("Decide(update stage done) deletes %v, want member2's binding", p.DeleteBindings)
	}
	w.advance(at(15*time.Second + 5*time.Minute))
	p := w.step()
	want := condition.False(staged.TypeProgressing, staged.ReasonUpdateRunStuck,
		"The updateRun is stuck waiting for cluster member2 in stage kubernetes-fleet.io/deleteStage to finish updating, please check crp status for potential errors")
	if got := findCond(p.Status.Conditions, staged.TypeProgressing); got != want {
		t.Errorf("Decide(deletion not done after 5m) Progressing = %v, want %v", got, want)
	}
	if len(p.DeleteBindings) != 0 {
		t.Errorf("Decide(binding being deleted) deletes %v again", p.DeleteBindings)
	}
}

// TestStuck: a cluster not available five minutes after it started makes the run report
// itself stuck; it carries on once the cluster is available (TSG-CSUR-STUCK).
func TestStuck(t *testing.T) {
	s := newStrategy(newStage("staging", env("staging")), newStage("canary", env("canary")))
	w := scheduled(t, s, []*member.Member{newMember("member1", "environment=staging"), newMember("member2", "environment=canary")})
	w.readyAfter["member1"] = -1
	stuck := condition.False(staged.TypeProgressing, staged.ReasonUpdateRunStuck,
		"The updateRun is stuck waiting for cluster member1 in stage staging to finish updating, please check crp status for potential errors")
	started := condition.True(staged.TypeProgressing, staged.ReasonUpdateRunStarted, "")
	for d := time.Duration(0); d <= 5*time.Minute; d += 15 * time.Second {
		w.advance(at(d))
		p := w.step()
		want := started
		if d == 5*time.Minute {
			want = stuck
		}
		if got := findCond(p.Status.Conditions, staged.TypeProgressing); got != want {
			t.Errorf("Decide(T0+%s) Progressing = %v, want %v", d, got, want)
		}
		if p.RequeueAfter != 15*time.Second {
			t.Errorf("Decide(T0+%s) requeue = %s, want 15s", d, p.RequeueAfter)
		}
	}
	w.advance(at(6 * time.Minute))
	if got := findCond(w.step().Status.Conditions, staged.TypeProgressing); got != stuck {
		t.Errorf("Decide(T0+6m) Progressing = %v, want %v", got, stuck)
	}
	b := w.bindings[placement.BindingName(crpName, "member1", 0)]
	w.makeReady(b.Name, b.Generation)
	w.advance(at(6*time.Minute + 15*time.Second))
	p := w.step()
	want := condition.True(staged.TypeProgressing, staged.ReasonUpdateRunProgressing, "")
	if got := findCond(p.Status.Conditions, staged.TypeProgressing); got != want {
		t.Errorf("Decide(available again) Progressing = %v, want %v", got, want)
	}
	if len(p.UpdateBindings) != 1 || p.UpdateBindings[0].Binding.TargetCluster != "member2" {
		t.Errorf("Decide(available again) updates %v, want member2", p.UpdateBindings)
	}

	// A shorter threshold from Timing, and a requeue that lands on it.
	w = scheduled(t, s, []*member.Member{newMember("member1", "environment=staging")})
	w.readyAfter["member1"] = -1
	w.timing = staged.Timing{ClusterCheckInterval: 40 * time.Second, StuckThreshold: time.Minute}
	w.step()
	w.advance(at(40 * time.Second))
	if p := w.step(); p.RequeueAfter != 20*time.Second {
		t.Errorf("Decide(T0+40s, threshold 1m) requeue = %s, want 20s", p.RequeueAfter)
	}
	w.advance(at(time.Minute))
	if got := findCond(w.step().Status.Conditions, staged.TypeProgressing); got.Reason != staged.ReasonUpdateRunStuck {
		t.Errorf("Decide(T0+1m, threshold 1m) Progressing = %v, want stuck", got)
	}
}

// TestFailures: each cause of STAGED-FAIL aborts the run for good, with Progressing=False
// "The stages are aborted due to a non-recoverable error" and Succeeded=False carrying the
// cause; the stage under way fails with it.
func TestFailures(t *testing.T) {
	changed := staged.PrefixSchedulingChanged
	cases := []struct {
		name  string
		setup func(w *world)
		want  string
	}{
		{
			name:  "placement deleted (TSG-CSUR-CRP-DELETED)",
			setup: func(w *world) { w.placement = nil },
			want:  "cannot continue the ClusterStagedUpdateRun: failed to initialize the clusterStagedUpdateRun: failed to process the request due to a client error: parent clusterResourcePlacement not found",
		},
		{
			name:  "placement no longer External",
			setup: func(w *world) { w.placement.Strategy.Type = placement.RollingUpdateStrategy },
			want:  initFailed + "parent clusterResourcePlacement `example-placement` does not use the External rollout strategy, got `RollingUpdate`",
		},
		{
			name:  "a new policy snapshot",
			setup: func(w *world) { w.placement.PolicySnapshotIndex = 1 },
			want:  changed + "the latest policy snapshot index is `1`, but the run uses `0`",
		},
		{
			name:  "observed cluster count changed",
			setup: func(w *world) { w.placement.ObservedClusterCount = 4 },
			want:  changed + "the policy snapshot now observes 4 cluster(s), but the run observed 3",
		},
		{
			name: "a planned cluster unscheduled",
			setup: func(w *world) {
				b := *w.bindings[placement.BindingName(crpName, "member1", 0)]
				b.State = placement.Unscheduled
				w.bindings[b.Name] = &b
			},
			want: changed + "cluster `member1` is no longer selected",
		},
		{
			name: "a planned cluster's binding evicted",
			setup: func(w *world) {
				delete(w.bindings, placement.BindingName(crpName, "member3", 0))
			},
			want: changed + "cluster `member3` is no longer selected",
		},
		{
			name: "a cluster newly selected",
			setup: func(w *world) {
				b := newBinding("member5", placement.Scheduled)
				w.bindings[b.Name] = b
			},
			want: changed + "cluster `member5` is newly selected",
		},
		{
			name:  "resource snapshot gone",
			setup: func(w *world) { delete(w.snapshots, 1) },
			want:  initFailed + "no clusterResourceSnapshots with index `1` found for clusterResourcePlacement `example-placement`",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := scheduled(t, howToStrategy(), howToFleet())
			w.step()
			w.advance(at(15 * time.Second))
			w.step() // member2 succeeded; staging waits 1m
			w.advance(at(30 * time.Second))
			tc.setup(w)
			p := w.step()
			want := []condition.Condition{
				condition.True(staged.TypeInitialized, staged.ReasonUpdateRunInitializedSuccessfully, staged.MessageInitialized),
				condition.False(staged.TypeProgressing, staged.ReasonUpdateRunFailed, "The stages are aborted due to a non-recoverable error"),
				condition.False(staged.TypeSucceeded, staged.ReasonUpdateRunFailed, tc.want),
			}
			var got []condition.Condition
			for _, c := range p.Status.Conditions {
				got = append(got, c.Condition)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decide(%s) = %v, want %v; diff (-want +got):\n%s", tc.name, got, want, diff)
			}
			stage := findCond(p.Status.StagesStatus[0].Conditions, staged.TypeSucceeded)
			if wantStage := condition.False(staged.TypeSucceeded, staged.ReasonStageUpdatingFailed, tc.want); stage != wantStage {
				t.Errorf("Decide(%s) stage Succeeded = %v, want %v", tc.name, stage, wantStage)
			}
			if p.RequeueAfter != 0 || len(p.UpdateBindings)+len(p.DeleteBindings)+len(p.CreateApprovalRequests) != 0 {
				t.Errorf("Decide(%s) = %+v, want nothing written and no requeue", tc.name, p)
			}
			// Terminal: later reconciles change nothing, even once the cause is gone.
			w.placement = &staged.Placement{Name: crpName, Strategy: placement.RolloutStrategy{Type: placement.ExternalStrategy}, ObservedClusterCount: 3}
			w.advance(at(time.Hour))
			if again := w.step(); !cmp.Equal(again, p) {
				t.Errorf("Decide(%s, later) = %+v, want the failed run unchanged", tc.name, again)
			}
		})
	}
}

// TestPreemption is TSG-CSUR-PREEMPTED [ClusterStagedUpdateRun TSG › Investigate ClusterStagedUpdateRun execution failure]: run example-run rolls index 0 to
// member1; within the 15 s wait, the concurrent run example-run-1 rolls index 1 to it;
// example-run fails with the sample's message.
func TestPreemption(t *testing.T) {
	s := newStrategy(newStage("staging", env("staging")), newStage("canary", env("canary")))
	w := scheduled(t, s, []*member.Member{newMember("member1", "environment=staging"), newMember("member2", "environment=canary")})
	w.run = newRun("example-run", "0")
	w.step()

	other := newRun("example-run-1", "1")
	w.advance(at(7 * time.Second))
	in := w.input()
	in.Run, in.OtherRuns = other, []*staged.ClusterStagedUpdateRun{w.run}
	op := staged.Decide(in)
	if len(op.UpdateBindings) != 1 {
		t.Fatalf("Decide(example-run-1) updates %v, want member1", op.UpdateBindings)
	}
	b := op.UpdateBindings[0].Binding
	w.bindings[b.Name] = &b
	if want := "Detected the new changes on the resources and started the rollout process, resourceSnapshotIndex: 1, clusterStagedUpdateRun: example-run-1"; findCond(b.Conditions, condition.TypeRolloutStarted).Message != want {
		t.Errorf("binding RolloutStarted = %v, want message %q", b.Conditions, want)
	}
	w.makeReady(b.Name, b.Generation)

	w.advance(at(15 * time.Second))
	p := w.step()
	msg := "the clusterResourceBinding of the updating cluster `member1` in the stage `staging` does not have expected status: binding spec diff: binding has different resourceSnapshotName, want: example-placement-0-snapshot, got: example-placement-1-snapshot; binding state (want Bound): Bound; binding RolloutStarted (want true): true, please check if there is concurrent clusterStagedUpdateRun"
	want := condition.False(staged.TypeSucceeded, staged.ReasonUpdateRunFailed, "cannot continue the ClusterStagedUpdateRun: unexpected behavior which cannot be handled by the controller: "+msg)
	if got := findCond(p.Status.Conditions, staged.TypeSucceeded); got != want {
		t.Errorf("Decide(preempted) Succeeded = %v, want %v", got, want)
	}
	if got, want := findCond(p.Status.StagesStatus[0].Clusters[0].Conditions, staged.TypeSucceeded), condition.False(staged.TypeSucceeded, staged.ReasonClusterUpdatingFailed, msg); got != want {
		t.Errorf("Decide(preempted) cluster Succeeded = %v, want %v", got, want)
	}
	if len(p.UpdateBindings) != 0 {
		t.Errorf("Decide(preempted) writes %v, want nothing", p.UpdateBindings)
	}

	// Other changes to the binding are reported the same way.
	cases := []struct {
		name   string
		mutate func(b *placement.Binding)
		want   string
	}{
		{
			name: "overrides and apply strategy changed",
			mutate: func(b *placement.Binding) {
				b.ClusterResourceOverrideSnapshots = []string{"cro-0"}
				b.ApplyStrategy = &placement.ApplyStrategy{Type: placement.ReportDiff}
			},
			want: "binding spec diff: binding has different clusterResourceOverrideSnapshots, want: [], got: [cro-0]; binding has different applyStrategy, want: <nil>, got: {type: ReportDiff, comparisonOption: , whenToApply: , whenToTakeOver: , allowCoOwnership: false}; binding state (want Bound): Bound; binding RolloutStarted (want true): true,",
		},
		{
			name:   "spec bumped without RolloutStarted",
			mutate: func(b *placement.Binding) { b.Generation++ },
			want:   "binding spec diff: no difference; binding state (want Bound): Bound; binding RolloutStarted (want true): false,",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := scheduled(t, s, []*member.Member{newMember("member1", "environment=staging"), newMember("member2", "environment=canary")})
			w.readyAfter["member1"] = -1
			w.step()
			name := placement.BindingName(crpName, "member1", 0)
			nb := *w.bindings[name]
			tc.mutate(&nb)
			w.bindings[name] = &nb
			w.advance(at(15 * time.Second))
			got := findCond(w.step().Status.Conditions, staged.TypeSucceeded)
			if got.Reason != staged.ReasonUpdateRunFailed || !strings.Contains(got.Message, tc.want) {
				t.Errorf("Decide(%s) Succeeded = %v, want UpdateRunFailed containing %q", tc.name, got, tc.want)
			}
		})
	}
}

// TestReportDiffClusterDone: under the ReportDiff apply strategy a cluster is done once
// DiffReported is True at its generation.
func TestReportDiffClusterDone(t *testing.T) {
	w := scheduled(t, newStrategy(newStage("all", nil)), []*member.Member{newMember("member1"), newMember("member2")})
	w.placement.Strategy.ApplyStrategy = &placement.ApplyStrategy{Type: placement.ReportDiff}
	w.readyAfter["member1"] = -1
	w.step()
	name := placement.BindingName(crpName, "member1", 0)
	b := *w.bindings[name]
	condition.Set(&b.Conditions, condition.True(condition.TypeDiffReported, "AllWorkHaveDiffReported", ""), b.Generation, w.now)
	w.bindings[name] = &b
	w.advance(at(15 * time.Second))
	p := w.step()
	if len(p.UpdateBindings) != 1 || p.UpdateBindings[0].Binding.TargetCluster != "member2" {
		t.Errorf("Decide(DiffReported) updates %v, want member2", p.UpdateBindings)
	}
	if got := p.UpdateBindings[0].Binding.ApplyStrategy; got == nil || got.Type != placement.ReportDiff {
		t.Errorf("Decide(DiffReported) binding apply strategy = %v, want ReportDiff", got)
	}
}

// TestRestartedClusterNotRewritten: a cluster whose binding already holds this run's write
// (the status write was lost) is not written again.
func TestRestartedClusterNotRewritten(t *testing.T) {
	w := scheduled(t, newStrategy(newStage("all", nil)), []*member.Member{newMember("member1")})
	w.readyAfter["member1"] = -1
	initial := w.run.DeepCopy()
	w.step()
	w.run = initial // the status write was lost
	w.advance(at(time.Second))
	if p := w.step(); len(p.UpdateBindings) != 0 || !statusTrue(p.Status.StagesStatus[0].Clusters[0].Conditions, staged.TypeStarted) {
		t.Errorf("Decide(binding already written) = %+v, want the cluster started and no write", p)
	}
}

// TestRollback is STAGED-ROLLBACK [How to Roll Out and Roll Back Changes in Stage › Then verify it’s approved]: after example-run rolled index 1, a second
// run with index 0 and the same strategy rolls the old content back stage by stage.
func TestRollback(t *testing.T) {
	w := scheduled(t, howToStrategy(), howToFleet())
	w.approveAfter = 30 * time.Second
	w.drive(200)
	first := w.run
	for _, b := range w.bindings {
		if b.ResourceSnapshotName != "example-placement-1-snapshot" {
			t.Fatalf("after example-run, binding %s is at %q", b.Name, b.ResourceSnapshotName)
		}
	}

	w.run = newRun("example-run-2", "0")
	w.others = []*staged.ClusterStagedUpdateRun{first}
	w.log = nil
	w.advance(w.now.Add(time.Hour))
	w.drive(200)
	if !statusTrue(w.run.Status.Conditions, staged.TypeSucceeded) {
		t.Fatalf("example-run-2 did not succeed:\n%s", timeline(w.run.Status))
	}
	if diff := cmp.Diff([]string{"member2", "member3", "member1"}, w.order()); diff != "" {
		t.Errorf("rollback order (-want +got):\n%s", diff)
	}
	for _, n := range sortedKeys(w.bindings) {
		b := w.bindings[n]
		want := "Detected the new changes on the resources and started the rollout process, resourceSnapshotIndex: 0, clusterStagedUpdateRun: example-run-2"
		if b.ResourceSnapshotName != "example-placement-0-snapshot" || b.Generation != 3 || findCond(b.Conditions, condition.TypeRolloutStarted).Message != want {
			t.Errorf("after rollback, binding %s = %s gen %d %v", b.Name, b.ResourceSnapshotName, b.Generation, b.Conditions)
		}
	}
	if _, ok := w.approvals["example-run-2-after-canary"]; !ok {
		t.Errorf("rollback did not create example-run-2-after-canary")
	}
}

// TestEndToEnd drives the how-to's rollout [How to Roll Out and Roll Back Changes in Stage] until it succeeds: member2
// (staging), then member3 and member1 (canary, by order), with members taking different
// times to apply.
func TestEndToEnd(t *testing.T) {
	w := scheduled(t, howToStrategy(), howToFleet())
	w.readyAfter = map[string]time.Duration{"member1": 50 * time.Second, "member2": 3 * time.Second, "member3": 20 * time.Second}
	w.approveAfter = 2 * time.Minute
	w.drive(200)

	type upd struct {
		At      time.Duration
		Cluster string
	}
	var got []upd
	for _, l := range w.log {
		got = append(got, upd{l.At.Sub(t0), l.Cluster})
	}
	// member2 0s, ready 3s, seen 15s; wait 1m → 1m15s member3, ready at 1m35s, seen 1m45s →
	// member1 at 1m45s, ready 2m35s, seen 2m45s; approval at 4m45s.
	want := []upd{{0, "member2"}, {75 * time.Second, "member3"}, {105 * time.Second, "member1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decide(end to end) updates = %v, want %v; diff (-want +got):\n%s", got, want, diff)
	}
	if !statusTrue(w.run.Status.Conditions, staged.TypeSucceeded) {
		t.Fatalf("run did not succeed:\n%s", timeline(w.run.Status))
	}
	if got, want := findCond(w.run.Status.Conditions, staged.TypeSucceeded), condition.True(staged.TypeSucceeded, staged.ReasonUpdateRunSucceeded, ""); got != want {
		t.Errorf("Succeeded = %v, want %v", got, want)
	}
	if s, _ := condition.Find(w.run.Status.Conditions, staged.TypeSucceeded); !s.LastTransitionTime.Equal(at(4*time.Minute + 45*time.Second)) {
		t.Errorf("run succeeded at T0+%s, want T0+4m45s", s.LastTransitionTime.Sub(t0))
	}
	for _, n := range sortedKeys(w.bindings) {
		b := w.bindings[n]
		if b.State != placement.Bound || b.ResourceSnapshotName != "example-placement-1-snapshot" ||
			!condition.IsTrue(b.Conditions, condition.TypeAvailable, b.Generation) {
			t.Errorf("binding %s = %s %s, not available at generation %d", b.Name, b.State, b.ResourceSnapshotName, b.Generation)
		}
	}
	a := w.approvals["example-run-after-canary"]
	if a == nil || !statusTrue(a.Status.Conditions, staged.TypeApprovalAccepted) {
		t.Errorf("example-run-after-canary = %+v, want ApprovalAccepted", a)
	}
	// Once finished, a run is left alone.
	w.advance(w.now.Add(time.Hour))
	if p := w.step(); p.RequeueAfter != 0 || len(p.UpdateBindings) != 0 {
		t.Errorf("Decide(finished) = %+v, want nothing", p)
	}
}

func TestPlacementRolloutCondition(t *testing.T) {
	unknown := condition.Condition{Type: condition.TypeRolloutStarted, Status: metav1.ConditionUnknown, Reason: "RolloutStartedUnknown",
		Message: "In the process of deciding whether to roll out the latest resources or not"}
	msg := "Detected the new changes on the resources and started the rollout process, resourceSnapshotIndex: 5, clusterStagedUpdateRun: example-run"
	rolled := func(gen, condGen int64) *placement.Binding {
		b := newBinding("member1", placement.Bound)
		b.Generation = gen
		b.ResourceSnapshotName = "example-placement-5-snapshot"
		b.Conditions = []condition.Timed{{Condition: condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, msg), ObservedGeneration: condGen}}
		return b
	}
	cases := []struct {
		name     string
		b        *placement.Binding
		snapshot string
		want     condition.Condition
	}{
		{"no binding", nil, "", unknown},
		{"scheduled, not rolled", newBinding("member1", placement.Scheduled), "", unknown},
		{"rolled by a run", rolled(2, 2), "", condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, msg)},
		{"rolled to the reported snapshot", rolled(2, 2), "example-placement-5-snapshot", condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, msg)},
		{"rolled to another snapshot", rolled(2, 2), "example-placement-6-snapshot", unknown},
		{"stale condition", rolled(3, 2), "", unknown},
	}
	for _, tc := range cases {
		if got := staged.PlacementRolloutCondition(tc.b, tc.snapshot); got != tc.want {
			t.Errorf("PlacementRolloutCondition(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
