package staged_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
)

const initFailed = staged.PrefixInitClientError

func TestInitialization(t *testing.T) {
	otherRun := func(s *staged.ClusterStagedUpdateStrategy, finished bool) *staged.ClusterStagedUpdateRun {
		r := newRun("other-run", "0")
		r.Status.StagedUpdateStrategySnapshot = s.Spec.DeepCopy()
		condition.Set(&r.Status.Conditions, condition.True(staged.TypeInitialized, staged.ReasonUpdateRunInitializedSuccessfully, staged.MessageInitialized), 1, t0)
		if finished {
			condition.Set(&r.Status.Conditions, condition.True(staged.TypeSucceeded, staged.ReasonUpdateRunSucceeded, ""), 1, t0)
		}
		return r
	}
	cases := []struct {
		name  string
		setup func(w *world)
		// want is the Initialized condition; wantPlan the stages' clusters when it is True.
		want     condition.Condition
		wantPlan [][]string
	}{
		{
			name:     "success",
			want:     condition.True(staged.TypeInitialized, staged.ReasonUpdateRunInitializedSuccessfully, staged.MessageInitialized),
			wantPlan: [][]string{{"member2"}, {"member3", "member1"}},
		},
		{
			name:  "missing resource snapshot index (TSG-CSUR-INIT-FAIL)",
			setup: func(w *world) { delete(w.snapshots, 1) },
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				"cannot continue the ClusterStagedUpdateRun: failed to initialize the clusterStagedUpdateRun: failed to process the request due to a client error: no clusterResourceSnapshots with index `1` found for clusterResourcePlacement `example-placement`"),
		},
		{
			name:  "resource snapshot index is not an integer",
			setup: func(w *world) { w.run.Spec.ResourceSnapshotIndex = "latest" },
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"invalid resource snapshot index `latest` provided, expected a non-negative integer"),
		},
		{
			name: "a cluster in no stage",
			setup: func(w *world) {
				w.members = append(w.members, newMember("member4", "environment=production"))
				w.bindings["b4"] = newBinding("member4", placement.Scheduled)
				w.bindings["b4"].Name = "b4"
				w.placement.ObservedClusterCount++
			},
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"cluster `member4` is not selected by any stage of clusterStagedUpdateStrategy `example-strategy`"),
		},
		{
			name: "a cluster in two stages",
			setup: func(w *world) {
				w.strategy.Spec.Stages = append(w.strategy.Spec.Stages, newStage("everyone", nil))
			},
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"cluster `member1` is selected by more than one stage of clusterStagedUpdateStrategy `example-strategy`: `canary` and `everyone`"),
		},
		{
			name: "a cluster with no member object is in no stage",
			setup: func(w *world) {
				w.members = w.members[1:] // member1 left the fleet; its binding is still there
			},
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"cluster `member1` is not selected by any stage of clusterStagedUpdateStrategy `example-strategy`"),
		},
		{
			name: "a different strategy than a concurrent run",
			setup: func(w *world) {
				s := howToStrategy()
				s.Spec.Stages[0].AfterStageTasks[0].WaitTime.Duration = 2 * time.Minute
				w.others = []*staged.ClusterStagedUpdateRun{otherRun(s, false)}
			},
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"the strategy of clusterStagedUpdateRun `example-run` differs from that of the concurrent clusterStagedUpdateRun `other-run` of clusterResourcePlacement `example-placement`; all concurrent runs must use an identical strategy"),
		},
		{
			name: "the same strategy as a concurrent run",
			setup: func(w *world) {
				w.others = []*staged.ClusterStagedUpdateRun{otherRun(howToStrategy(), false)}
			},
			want:     condition.True(staged.TypeInitialized, staged.ReasonUpdateRunInitializedSuccessfully, staged.MessageInitialized),
			wantPlan: [][]string{{"member2"}, {"member3", "member1"}},
		},
		{
			name: "a different strategy than a finished run or a run of another placement",
			setup: func(w *world) {
				s := newStrategy(newStage("all", nil))
				other := otherRun(s, false)
				other.Spec.PlacementName = "another-placement"
				w.others = []*staged.ClusterStagedUpdateRun{otherRun(s, true), other}
			},
			want:     condition.True(staged.TypeInitialized, staged.ReasonUpdateRunInitializedSuccessfully, staged.MessageInitialized),
			wantPlan: [][]string{{"member2"}, {"member3", "member1"}},
		},
		{
			name:  "placement not found",
			setup: func(w *world) { w.placement = nil },
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				"cannot continue the ClusterStagedUpdateRun: failed to initialize the clusterStagedUpdateRun: failed to process the request due to a client error: parent clusterResourcePlacement not found"),
		},
		{
			name:  "placement is not External",
			setup: func(w *world) { w.placement.Strategy.Type = "" },
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"parent clusterResourcePlacement `example-placement` does not use the External rollout strategy, got `RollingUpdate`"),
		},
		{
			name:  "strategy not found",
			setup: func(w *world) { w.strategy = nil },
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"referenced clusterStagedUpdateStrategy `example-strategy` not found"),
		},
		{
			name: "invalid strategy",
			setup: func(w *world) {
				w.strategy.Spec.Stages[1].AfterStageTasks = append(w.strategy.Spec.Stages[1].AfterStageTasks, approvalTask())
			},
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"clusterStagedUpdateStrategy `example-strategy` is invalid: spec.stages[1].afterStageTasks[1].type: Duplicate value: \"Approval\""),
		},
		{
			name: "a sorting label that is not an integer",
			setup: func(w *world) {
				w.members[0].Labels["order"] = "two"
			},
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"the sorting label `order` of cluster `member1` in stage `canary` has value `two`, which is not an integer"),
		},
		{
			name:  "invalid run",
			setup: func(w *world) { w.run.Name = "Example_Run" },
			want: condition.False(staged.TypeInitialized, staged.ReasonUpdateRunInitializedFailed,
				initFailed+"invalid clusterStagedUpdateRun: metadata.name: Invalid value: \"Example_Run\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := scheduled(t, howToStrategy(), howToFleet())
			w.placement.ObservedClusterCount = 3
			if tc.setup != nil {
				tc.setup(w)
			}
			got := staged.Decide(w.input())
			if diff := cmp.Diff(tc.want, findCond(got.Status.Conditions, staged.TypeInitialized)); diff != "" {
				t.Errorf("Decide(%s) Initialized = %v, want %v; diff (-want +got):\n%s", tc.name, findCond(got.Status.Conditions, staged.TypeInitialized), tc.want, diff)
			}
			if diff := cmp.Diff(tc.wantPlan, stagePlan(got.Status)); diff != "" {
				t.Errorf("Decide(%s) stage plan = %v, want %v", tc.name, stagePlan(got.Status), tc.wantPlan)
			}
			if tc.want.Status == metav1.ConditionFalse {
				if len(got.UpdateBindings) != 0 || got.RequeueAfter != 0 {
					t.Errorf("Decide(%s) after a failed initialization = %d binding writes, requeue %s; want none", tc.name, len(got.UpdateBindings), got.RequeueAfter)
				}
				if got.Status.DeletionStageStatus == nil || got.Status.DeletionStageStatus.StageName != staged.DeletionStageName {
					t.Errorf("Decide(%s) deletion stage = %+v, want the named deletion stage", tc.name, got.Status.DeletionStageStatus)
				}
				// Failed for good: the next reconcile changes nothing.
				w.run.Status = got.Status
				w.now = w.now.Add(time.Hour)
				again := staged.Decide(w.input())
				if diff := cmp.Diff(got, again); diff != "" {
					t.Errorf("Decide(%s) after failure changed the plan (-first +again):\n%s", tc.name, diff)
				}
			}
		})
	}
}

// TestInitializedStatus checks every field initialization records, against the how-to's
// sample [How to Roll Out and Roll Back Changes in Stage › A more detailed look at the status] and the concept's plan pre-population [Staged Update › Stages and clusters status].
func TestInitializedStatus(t *testing.T) {
	w := scheduled(t, howToStrategy(), howToFleet())
	w.placement.ObservedClusterCount = 3
	w.placement.Strategy.ApplyStrategy = &placement.ApplyStrategy{Type: placement.ServerSideApply, WhenToTakeOver: "IfNoDiff"}
	w.bindings["gone"] = &placement.Binding{Name: "gone", Placement: crpName, TargetCluster: "member9", State: placement.Unscheduled, Generation: 3}
	w.overrides = map[string]staged.Overrides{
		"member3": {ClusterResourceOverrideSnapshots: []string{"cro-1"}, ResourceOverrideSnapshots: []placement.NamespacedName{{Namespace: "ns", Name: "ro-0"}}},
	}
	got := staged.Decide(w.input())

	now := t0
	tc := func(typ string, s metav1.ConditionStatus, reason, msg string) condition.Timed {
		return condition.Timed{Condition: condition.Condition{Type: typ, Status: s, Reason: reason, Message: msg}, ObservedGeneration: 1, LastTransitionTime: now}
	}
	want := staged.StagedUpdateRunStatus{
		PolicySnapshotIndexUsed:      "0",
		PolicyObservedClusterCount:   3,
		ResourceSnapshotIndexUsed:    "1",
		AppliedStrategy:              &placement.ApplyStrategy{Type: placement.ServerSideApply, WhenToTakeOver: "IfNoDiff"},
		StagedUpdateStrategySnapshot: howToStrategy().Spec.DeepCopy(),
		StagesStatus: []staged.StageUpdatingStatus{
			{
				StageName: "staging",
				Clusters: []staged.ClusterUpdatingStatus{{ClusterName: "member2", Conditions: []condition.Timed{
					tc(staged.TypeStarted, metav1.ConditionTrue, staged.ReasonClusterUpdatingStarted, ""),
				}}},
				AfterStageTaskStatus: []staged.AfterStageTaskStatus{{Type: staged.TaskTimedWait}},
				StartTime:            &now,
				Conditions:           []condition.Timed{tc(staged.TypeProgressing, metav1.ConditionTrue, staged.ReasonStageUpdatingStarted, "")},
			},
			{
				StageName: "canary",
				Clusters: []staged.ClusterUpdatingStatus{
					{ClusterName: "member3", ClusterResourceOverrideSnapshots: []string{"cro-1"}, ResourceOverrideSnapshots: []placement.NamespacedName{{Namespace: "ns", Name: "ro-0"}}},
					{ClusterName: "member1"},
				},
				AfterStageTaskStatus: []staged.AfterStageTaskStatus{{Type: staged.TaskApproval, ApprovalRequestName: "example-run-after-canary"}},
			},
		},
		DeletionStageStatus: &staged.StageUpdatingStatus{StageName: staged.DeletionStageName, Clusters: []staged.ClusterUpdatingStatus{{ClusterName: "member9"}}},
		Conditions: []condition.Timed{
			tc(staged.TypeInitialized, metav1.ConditionTrue, staged.ReasonUpdateRunInitializedSuccessfully, staged.MessageInitialized),
			tc(staged.TypeProgressing, metav1.ConditionTrue, staged.ReasonUpdateRunStarted, ""),
		},
	}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("Decide(initial) status = %v, want %v; diff (-want +got):\n%s", got.Status, want, diff)
	}

	old := w.bindings[placement.BindingName(crpName, "member2", 0)]
	wantBinding := *old
	wantBinding.State = placement.Bound
	wantBinding.ResourceSnapshotName = "example-placement-1-snapshot"
	wantBinding.ApplyStrategy = &placement.ApplyStrategy{Type: placement.ServerSideApply, WhenToTakeOver: "IfNoDiff"}
	wantBinding.Generation = 2
	wantBinding.Conditions = []condition.Timed{{
		Condition: condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted,
			"Detected the new changes on the resources and started the rollout process, resourceSnapshotIndex: 1, clusterStagedUpdateRun: example-run"),
		ObservedGeneration: 2, LastTransitionTime: t0,
	}}
	wantPlan := staged.Plan{
		Status: want,
		UpdateBindings: []staged.Change{{Binding: wantBinding,
			Reason: "rolling out resource snapshot example-placement-1-snapshot to cluster member2 in stage staging of clusterStagedUpdateRun example-run"}},
		RequeueAfter: 15 * time.Second,
	}
	if diff := cmp.Diff(wantPlan, got); diff != "" {
		t.Errorf("Decide(initial) = %v, want %v; diff (-want +got):\n%s", got, wantPlan, diff)
	}
}

// TestInitializationWaitsForTheScheduler: no plan is made while the scheduler has not acted
// on the latest policy snapshot.
func TestInitializationWaitsForTheScheduler(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world)
	}{
		{"scheduler pending", func(w *world) { w.placement.SchedulerPending = true }},
		{"a binding of an older policy snapshot", func(w *world) { w.placement.PolicySnapshotIndex = 1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := scheduled(t, howToStrategy(), howToFleet())
			tc.setup(w)
			got := staged.Decide(w.input())
			want := staged.Plan{RequeueAfter: staged.DefaultClusterCheckInterval}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decide(%s) = %v, want %v; diff (-want +got):\n%s", tc.name, got, want, diff)
			}
		})
	}
}

// TestStrategyEditsAfterInitializationAreIgnored: the run follows its snapshot [Staged Update › Trigger rollout with ClusterStagedUpdateRun].
func TestStrategyEditsAfterInitializationAreIgnored(t *testing.T) {
	w := scheduled(t, howToStrategy(), howToFleet())
	w.approveAfter = time.Minute
	w.step()
	w.strategy = newStrategy(newStage("all", nil)) // would put every cluster in one stage
	w.drive(100)
	if diff := cmp.Diff([]string{"member2", "member3", "member1"}, w.order()); diff != "" {
		t.Errorf("update order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(howToStrategy().Spec.DeepCopy(), w.run.Status.StagedUpdateStrategySnapshot); diff != "" {
		t.Errorf("strategy snapshot changed (-want +got):\n%s", diff)
	}
}

// TestStageSort is STAGE-SORT-1 [How to Roll Out and Roll Back Changes in Stage › Prerequisite; How to Roll Out and Roll Back Changes in Stage › A more detailed look at the status; Staged Update › An example ClusterStagedUpdateStrategy looks like below] plus the edges of the
// sorting rule [API Reference › StageConfig].
func TestStageSort(t *testing.T) {
	cases := []struct {
		name    string
		members []*member.Member
		key     string
		want    []string
	}{
		{
			name:    "STAGE-SORT-1: by order",
			members: []*member.Member{newMember("member1", "order=2"), newMember("member3", "order=1")},
			key:     "order",
			want:    []string{"member3", "member1"},
		},
		{
			name:    "STAGE-SORT-1: without a key, alphabetical",
			members: []*member.Member{newMember("member3", "order=1"), newMember("member1", "order=2")},
			want:    []string{"member1", "member3"},
		},
		{
			name:    "integer, not lexical, order",
			members: []*member.Member{newMember("a", "order=10"), newMember("b", "order=9"), newMember("c", "order=-1")},
			key:     "order",
			want:    []string{"c", "b", "a"},
		},
		{
			name:    "equal values by name",
			members: []*member.Member{newMember("d", "order=1"), newMember("b", "order=1"), newMember("c", "order=0")},
			key:     "order",
			want:    []string{"c", "b", "d"},
		},
		{
			name:    "clusters without the label after those with it, by name",
			members: []*member.Member{newMember("z", "order=5"), newMember("b"), newMember("a"), newMember("y", "order=7")},
			key:     "order",
			want:    []string{"z", "y", "a", "b"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newStage("canary", nil)
			if tc.key != "" {
				st = sortedBy(tc.key, st)
			}
			w := scheduled(t, newStrategy(st), tc.members)
			got := staged.Decide(w.input())
			if diff := cmp.Diff([][]string{tc.want}, stagePlan(got.Status)); diff != "" {
				t.Errorf("Decide(%s) stage plan = %v, want %v", tc.name, stagePlan(got.Status), [][]string{tc.want})
			}
		})
	}
}
