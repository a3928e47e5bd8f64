package staged_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetsim/fleetsim/model/staged"
)

// errs renders a field.ErrorList as "field: type" lines.
func errs(l field.ErrorList) []string {
	var out []string
	for _, e := range l {
		out = append(out, fmt.Sprintf("%s: %s", e.Field, e.Type))
	}
	return out
}

func TestValidateStrategy(t *testing.T) {
	many := func(n int) []staged.StageConfig {
		var out []staged.StageConfig
		for i := range n {
			out = append(out, newStage(fmt.Sprintf("s%d", i), nil))
		}
		return out
	}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
	cases := []struct {
		name   string
		stages []staged.StageConfig
		want   []string
	}{
		{name: "how-to strategy", stages: howToStrategy().Spec.Stages},
		{name: "31 stages", stages: many(31)},
		{name: "32 stages", stages: many(32), want: []string{"spec.stages: Too many"}},
		{name: "no stage", want: []string{"spec.stages: Required value"}},
		{name: "63-character name", stages: []staged.StageConfig{newStage(strings.Repeat("a", 63), nil)}},
		{name: "64-character name", stages: []staged.StageConfig{newStage(strings.Repeat("a", 64), nil)}, want: []string{"spec.stages[0].name: Too long"}},
		{name: "name with a dash", stages: []staged.StageConfig{newStage("stage-1", nil)}, want: []string{"spec.stages[0].name: Invalid value"}},
		{name: "upper-case name", stages: []staged.StageConfig{newStage("Staging", nil)}, want: []string{"spec.stages[0].name: Invalid value"}},
		{name: "empty name", stages: []staged.StageConfig{newStage("", nil)}, want: []string{"spec.stages[0].name: Required value"}},
		{name: "duplicate names", stages: []staged.StageConfig{newStage("a", nil), newStage("b", nil), newStage("a", nil)}, want: []string{"spec.stages[2].name: Duplicate value"}},
		{name: "invalid selector", stages: []staged.StageConfig{{Name: "a", LabelSelector: bad}}, want: []string{"spec.stages[0].labelSelector: Invalid value"}},
		{name: "two tasks of different types", stages: []staged.StageConfig{newStage("a", nil, approvalTask(), timedWait(time.Hour))}},
		{name: "two approvals", stages: []staged.StageConfig{newStage("a", nil, approvalTask(), approvalTask())}, want: []string{"spec.stages[0].afterStageTasks[1].type: Duplicate value"}},
		{name: "two timed waits", stages: []staged.StageConfig{newStage("a", nil, timedWait(time.Hour), timedWait(time.Minute))}, want: []string{"spec.stages[0].afterStageTasks[1].type: Duplicate value"}},
		{
			name:   "three tasks",
			stages: []staged.StageConfig{newStage("a", nil, approvalTask(), timedWait(time.Hour), approvalTask())},
			want:   []string{"spec.stages[0].afterStageTasks: Too many", "spec.stages[0].afterStageTasks[2].type: Duplicate value"},
		},
		{name: "timed wait without waitTime", stages: []staged.StageConfig{newStage("a", nil, staged.AfterStageTask{Type: staged.TaskTimedWait})}, want: []string{"spec.stages[0].afterStageTasks[0].waitTime: Required value"}},
		{name: "zero wait", stages: []staged.StageConfig{newStage("a", nil, timedWait(0))}},
		{name: "fractional wait", stages: []staged.StageConfig{newStage("a", nil, timedWait(1500*time.Millisecond))}},
		{name: "millisecond wait", stages: []staged.StageConfig{newStage("a", nil, timedWait(time.Millisecond))}, want: []string{"spec.stages[0].afterStageTasks[0].waitTime: Invalid value"}},
		{name: "negative wait", stages: []staged.StageConfig{newStage("a", nil, timedWait(-time.Minute))}, want: []string{"spec.stages[0].afterStageTasks[0].waitTime: Invalid value"}},
		{name: "approval with waitTime", stages: []staged.StageConfig{newStage("a", nil, staged.AfterStageTask{Type: staged.TaskApproval, WaitTime: &metav1.Duration{Duration: time.Hour}})}, want: []string{"spec.stages[0].afterStageTasks[0].waitTime: Forbidden"}},
		{name: "unknown task type", stages: []staged.StageConfig{newStage("a", nil, staged.AfterStageTask{Type: "Sleep"})}, want: []string{"spec.stages[0].afterStageTasks[0].type: Unsupported value"}},
		{name: "missing task type", stages: []staged.StageConfig{newStage("a", nil, staged.AfterStageTask{})}, want: []string{"spec.stages[0].afterStageTasks[0].type: Required value"}},
	}
	for _, tc := range cases {
		got := errs(staged.ValidateStrategy(newStrategy(tc.stages...)))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ValidateStrategy(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := errs(staged.ValidateStrategy(&staged.ClusterStagedUpdateStrategy{Spec: howToStrategy().Spec})); !cmp.Equal(got, []string{"metadata.name: Required value"}) {
		t.Errorf("ValidateStrategy(no name) = %v, want metadata.name required", got)
	}
}

func TestValidateWaitTime(t *testing.T) {
	for s, ok := range map[string]bool{
		"0": false, "01h": false, "1h01m": false, "1m": true, "1h": true, "30s": true, "1.5h": true, "1h30m": true, "1m0s": true, "0s": true,
		"": false, "10": false, "1ms": false, "-1m": false, "01x": false, "1d": false, "m": false, "1.m": false, " 1m": false,
	} {
		if got := len(staged.ValidateWaitTime(s, field.NewPath("waitTime"))) == 0; got != ok {
			t.Errorf("ValidateWaitTime(%q) valid = %t, want %t", s, got, ok)
		}
	}
}

func TestValidateRun(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(r *staged.ClusterStagedUpdateRun)
		want   []string
	}{
		{name: "how-to run", mutate: func(*staged.ClusterStagedUpdateRun) {}},
		{name: "dotted name", mutate: func(r *staged.ClusterStagedUpdateRun) { r.Name = "release.v2" }},
		{name: "63-character name", mutate: func(r *staged.ClusterStagedUpdateRun) { r.Name = strings.Repeat("r", 63) }},
		{name: "64-character name", mutate: func(r *staged.ClusterStagedUpdateRun) { r.Name = strings.Repeat("r", 64) }, want: []string{"metadata.name: Too long"}},
		{name: "not RFC 1123", mutate: func(r *staged.ClusterStagedUpdateRun) { r.Name = "Example_Run" }, want: []string{"metadata.name: Invalid value"}},
		{name: "no name", mutate: func(r *staged.ClusterStagedUpdateRun) { r.Name = "" }, want: []string{"metadata.name: Required value"}},
		{name: "255-character placement", mutate: func(r *staged.ClusterStagedUpdateRun) { r.Spec.PlacementName = strings.Repeat("p", 255) }},
		{name: "256-character placement", mutate: func(r *staged.ClusterStagedUpdateRun) { r.Spec.PlacementName = strings.Repeat("p", 256) }, want: []string{"spec.placementName: Too long"}},
		{
			name:   "empty spec",
			mutate: func(r *staged.ClusterStagedUpdateRun) { r.Spec = staged.StagedUpdateRunSpec{} },
			want:   []string{"spec.placementName: Required value", "spec.stagedRolloutStrategyName: Required value"},
		},
	}
	for _, tc := range cases {
		r := newRun(runName, "1")
		tc.mutate(r)
		if got := errs(staged.ValidateRun(r)); !cmp.Equal(got, tc.want) {
			t.Errorf("ValidateRun(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	old, upd := newRun(runName, "1"), newRun(runName, "2")
	if got := errs(staged.ValidateRunUpdate(old, upd)); !cmp.Equal(got, []string{"spec: Forbidden"}) {
		t.Errorf("ValidateRunUpdate(new index) = %v, want spec forbidden", got)
	}
	upd = newRun(runName, "1")
	upd.Status.PolicySnapshotIndexUsed = "3"
	if got := errs(staged.ValidateRunUpdate(old, upd)); got != nil {
		t.Errorf("ValidateRunUpdate(status only) = %v, want none", got)
	}
}

func TestValidateApprovalRequest(t *testing.T) {
	a := &staged.ClusterApprovalRequest{Spec: staged.ApprovalRequestSpec{ParentStageRollout: runName, TargetStage: "canary"}}
	if got := errs(staged.ValidateApprovalRequest(a)); got != nil {
		t.Errorf("ValidateApprovalRequest(complete) = %v, want none", got)
	}
	if got, want := errs(staged.ValidateApprovalRequest(&staged.ClusterApprovalRequest{})), []string{"spec.parentStageRollout: Required value", "spec.targetStage: Required value"}; !cmp.Equal(got, want) {
		t.Errorf("ValidateApprovalRequest(empty) = %v, want %v", got, want)
	}
	b := a.DeepCopy()
	b.Spec.TargetStage = "production"
	if got := errs(staged.ValidateApprovalRequestUpdate(a, b)); !cmp.Equal(got, []string{"spec: Forbidden"}) {
		t.Errorf("ValidateApprovalRequestUpdate(new stage) = %v, want spec forbidden", got)
	}
}
