package invariants

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/staged"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func cond(typ string, ok bool, d time.Duration) condition.Timed {
	s := metav1.ConditionTrue
	if !ok {
		s = metav1.ConditionFalse
	}
	return condition.Timed{Condition: condition.Condition{Type: typ, Status: s}, LastTransitionTime: at(d)}
}

// stagedFixture is run "r": stage "a" (clusters c1 and c2, after-stage TimedWait 1m and
// Approval) done by 2m and approved at 2m30s; stage "b" (cluster c3, a before-stage
// Approval approved at 3m) started at 3m30s; the deletion stage not begun.
func stagedFixture() fakeStore {
	a := staged.StageConfig{Name: "a", AfterStageTasks: []staged.AfterStageTask{
		{Type: staged.TaskTimedWait, WaitTime: &metav1.Duration{Duration: time.Minute}}, {Type: staged.TaskApproval}}}
	b := staged.StageConfig{Name: "b", BeforeStageTasks: []staged.AfterStageTask{{Type: staged.TaskApproval}}}
	startA, startB := at(0), at(3*time.Minute+30*time.Second)
	run := &staged.ClusterStagedUpdateRun{}
	run.Name = "r"
	run.Status = staged.StagedUpdateRunStatus{
		StagedUpdateStrategySnapshot: &staged.StagedUpdateStrategySpec{Stages: []staged.StageConfig{a, b}},
		StagesStatus: []staged.StageUpdatingStatus{
			{StageName: "a", StartTime: &startA, Conditions: []condition.Timed{cond(staged.TypeSucceeded, true, 3*time.Minute)},
				AfterStageTaskStatus: []staged.AfterStageTaskStatus{{Type: staged.TaskTimedWait}, {Type: staged.TaskApproval, ApprovalRequestName: "r-a"}},
				Clusters: []staged.ClusterUpdatingStatus{
					{ClusterName: "c1", Conditions: []condition.Timed{cond(staged.TypeStarted, true, 0), cond(staged.TypeSucceeded, true, time.Minute)}},
					{ClusterName: "c2", Conditions: []condition.Timed{cond(staged.TypeStarted, true, time.Minute), cond(staged.TypeSucceeded, true, 2*time.Minute)}},
				}},
			{StageName: "b", StartTime: &startB, BeforeStageTaskStatus: []staged.AfterStageTaskStatus{{Type: staged.TaskApproval}},
				Clusters: []staged.ClusterUpdatingStatus{
					{ClusterName: "c3", Conditions: []condition.Timed{cond(staged.TypeStarted, true, 3*time.Minute+30*time.Second)}},
				}},
		},
		DeletionStageStatus: &staged.StageUpdatingStatus{StageName: staged.DeletionStageName},
	}
	approval := func(name string, d time.Duration) *staged.ClusterApprovalRequest {
		r := &staged.ClusterApprovalRequest{}
		r.Name = name
		r.Status.Conditions = []condition.Timed{cond(staged.TypeApproved, true, d)}
		return r
	}
	return fakeStore{
		runs:      map[string]*staged.ClusterStagedUpdateRun{"r": run},
		approvals: map[string][]*staged.ClusterApprovalRequest{"r": {approval("r-a", 2*time.Minute+30*time.Second), approval("r-before-b", 3*time.Minute)}},
	}
}

func TestStagedChecks(t *testing.T) {
	tests := []struct {
		name   string
		change func(st fakeStore)
		want   map[string]bool
	}{
		{name: "in order, waited and approved", change: func(fakeStore) {}, want: map[string]bool{}},
		{
			name: "the deletion stage begins after every stage",
			change: func(st fakeStore) {
				r := st.runs["r"]
				r.Status.StagesStatus[1].Conditions = []condition.Timed{cond(staged.TypeSucceeded, true, 5*time.Minute)}
				r.Status.StagesStatus[1].Clusters[0].Conditions = append(r.Status.StagesStatus[1].Clusters[0].Conditions, cond(staged.TypeSucceeded, true, 5*time.Minute))
				r.Status.DeletionStageStatus.Conditions = []condition.Timed{cond(staged.TypeProgressing, true, 5*time.Minute)}
			},
			want: map[string]bool{},
		},
		{
			name:   "the next stage starts before the stage succeeded",
			change: func(st fakeStore) { st.runs["r"].Status.StagesStatus[0].Conditions = nil },
			want:   map[string]bool{"stagedRunOrder": true},
		},
		{
			name: "the deletion stage begins while a stage is still updating",
			change: func(st fakeStore) {
				st.runs["r"].Status.DeletionStageStatus.Conditions = []condition.Timed{cond(staged.TypeProgressing, true, 4*time.Minute)}
			},
			want: map[string]bool{"stagedRunOrder": true},
		},
		{
			name: "a cluster of the stage has not succeeded",
			change: func(st fakeStore) {
				st.runs["r"].Status.StagesStatus[0].Clusters[1].Conditions = []condition.Timed{cond(staged.TypeStarted, true, time.Minute)}
			},
			want: map[string]bool{"stagedRunOrder": true},
		},
		{
			name: "the next stage starts before the TimedWait elapsed",
			change: func(st fakeStore) {
				st.runs["r"].Status.StagesStatus[1].Clusters[0].Conditions = []condition.Timed{cond(staged.TypeStarted, true, 2*time.Minute+40*time.Second)}
				st.runs["r"].Status.StagesStatus[1].StartTime = nil
			},
			want: map[string]bool{"stagedRunOrder": true, "stagedRunApprovals": true},
		},
		{
			name: "the after-stage approval came after the next stage began",
			change: func(st fakeStore) {
				st.approvals["r"][0].Status.Conditions = []condition.Timed{cond(staged.TypeApproved, true, 4*time.Minute)}
			},
			want: map[string]bool{"stagedRunOrder": true},
		},
		{
			name:   "the after-stage approval request is missing",
			change: func(st fakeStore) { st.approvals["r"] = st.approvals["r"][1:] },
			want:   map[string]bool{"stagedRunOrder": true},
		},
		{
			name: "an approval withdrawn after the next stage began still counted",
			change: func(st fakeStore) {
				st.approvals["r"][0].Status.Conditions = []condition.Timed{cond(staged.TypeApproved, false, 10*time.Minute)}
			},
			want: map[string]bool{},
		},
		{
			name: "the before-stage approval is not approved",
			change: func(st fakeStore) {
				st.approvals["r"][1].Status.Conditions = []condition.Timed{cond(staged.TypeApproved, false, time.Minute)}
			},
			want: map[string]bool{"stagedRunApprovals": true},
		},
		{
			name: "two clusters update at once, maxConcurrency unset",
			change: func(st fakeStore) {
				for i := range st.runs["r"].Status.StagesStatus[0].Clusters {
					st.runs["r"].Status.StagesStatus[0].Clusters[i].Conditions = []condition.Timed{cond(staged.TypeStarted, true, 0)}
				}
				st.runs["r"].Status.StagesStatus[1] = staged.StageUpdatingStatus{StageName: "b", Clusters: []staged.ClusterUpdatingStatus{{ClusterName: "c3"}}}
				st.runs["r"].Status.StagesStatus[0].Conditions = nil
			},
			want: map[string]bool{"stagedMaxConcurrency": true},
		},
		{
			name: "two clusters update at once, maxConcurrency 100%",
			change: func(st fakeStore) {
				pct := intstr.FromString("100%")
				st.runs["r"].Status.StagedUpdateStrategySnapshot.Stages[0].MaxConcurrency = &pct
				for i := range st.runs["r"].Status.StagesStatus[0].Clusters {
					st.runs["r"].Status.StagesStatus[0].Clusters[i].Conditions = []condition.Timed{cond(staged.TypeStarted, true, 0)}
				}
				st.runs["r"].Status.StagesStatus[1] = staged.StageUpdatingStatus{StageName: "b", Clusters: []staged.ClusterUpdatingStatus{{ClusterName: "c3"}}}
				st.runs["r"].Status.StagesStatus[0].Conditions = nil
			},
			want: map[string]bool{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := stagedFixture()
			tc.change(st)
			got := map[string]bool{}
			for _, name := range []string{"stagedRunOrder", "stagedRunApprovals", "stagedMaxConcurrency"} {
				if err := Checks[name](st, nil); err != nil {
					got[name] = true
					t.Logf("%s: %v", name, err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violated invariants (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	i := func(v int) *intstr.IntOrString { x := intstr.FromInt32(int32(v)); return &x }
	s := func(v string) *intstr.IntOrString { x := intstr.FromString(v); return &x }
	tests := []struct {
		v    *intstr.IntOrString
		n    int
		want int
	}{
		{nil, 5, 1}, {i(3), 5, 3}, {i(0), 5, 1}, {s("50%"), 5, 2}, {s("10%"), 5, 1}, {s("100%"), 4, 4}, {s("2"), 5, 2},
	}
	for _, tc := range tests {
		if got := concurrencyLimit(tc.v, tc.n); got != tc.want {
			t.Errorf("concurrencyLimit(%v, %d) = %d, want %d", tc.v, tc.n, got, tc.want)
		}
	}
}
