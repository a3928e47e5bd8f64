package staged_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/staged"
)

// TestMaxConcurrency: a stage's clusters start maxConcurrency at a time, in their order; a
// percentage is of the stage's clusters, rounded down, at least 1.
func TestMaxConcurrency(t *testing.T) {
	members := []*member.Member{
		newMember("member1", "environment=staging"), newMember("member2", "environment=staging"),
		newMember("member3", "environment=staging"), newMember("member4", "environment=staging"),
		newMember("member5", "environment=staging"),
	}
	for _, tc := range []struct {
		name string
		mc   *intstr.IntOrString
		want []time.Duration // when each member's binding was written, by member order
	}{
		{"default: one at a time", nil, []time.Duration{0, 15 * time.Second, 30 * time.Second, 45 * time.Second, time.Minute}},
		{"two at a time", ptr(intstr.FromInt32(2)), []time.Duration{0, 0, 15 * time.Second, 15 * time.Second, 30 * time.Second}},
		{"50% of 5 is 2", ptr(intstr.FromString("50%")), []time.Duration{0, 0, 15 * time.Second, 15 * time.Second, 30 * time.Second}},
		{"10% of 5 is at least 1", ptr(intstr.FromString("10%")), []time.Duration{0, 15 * time.Second, 30 * time.Second, 45 * time.Second, time.Minute}},
		{"more than the stage: all at once", ptr(intstr.FromInt32(10)), []time.Duration{0, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStage("staging", env("staging"))
			st.MaxConcurrency = tc.mc
			w := scheduled(t, newStrategy(st), members)
			w.drive(200)
			if !statusTrue(w.run.Status.Conditions, staged.TypeSucceeded) {
				t.Fatalf("run did not succeed:\n%s", timeline(w.run.Status))
			}
			var got []time.Duration
			for _, l := range w.log {
				if !l.Deleted {
					got = append(got, l.At.Sub(t0))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("binding writes (-want +got):\n%s", diff)
			}
		})
	}
	if got := staged.MaxConcurrency(&staged.StageConfig{MaxConcurrency: ptr(intstr.FromString("100%"))}, 7); got != 7 {
		t.Errorf("MaxConcurrency(100%% of 7) = %d", got)
	}
}

// TestRunState: a run in state Initialize initializes and waits; Run executes it; Stop
// starts no further cluster and reports Progressing=False/UpdateRunStopped; Run again goes on.
// A run without a state runs, as the documentation's runs do.
func TestRunState(t *testing.T) {
	members := []*member.Member{newMember("member1", "environment=staging"), newMember("member2", "environment=staging")}
	w := scheduled(t, newStrategy(newStage("staging", env("staging"))), members)
	w.run.Spec.State = staged.StateInitialize
	p := w.step()
	if !statusTrue(w.run.Status.Conditions, staged.TypeInitialized) || len(p.UpdateBindings) != 0 || p.RequeueAfter != 0 {
		t.Fatalf("Initialize: initialized %t, %d binding writes, requeue %s; want initialized, nothing written, no requeue",
			statusTrue(w.run.Status.Conditions, staged.TypeInitialized), len(p.UpdateBindings), p.RequeueAfter)
	}
	if _, ok := condition.Find(w.run.Status.Conditions, staged.TypeProgressing); ok {
		t.Errorf("Initialize: Progressing is set, want it absent until the run runs")
	}

	w.run.Spec.State = staged.StateRun
	w.run.Generation++
	if p = w.step(); len(p.UpdateBindings) != 1 {
		t.Fatalf("Run: %d binding writes, want member1's", len(p.UpdateBindings))
	}

	w.run.Spec.State = staged.StateStop
	w.run.Generation++
	w.advance(w.now.Add(time.Minute)) // member1 becomes ready meanwhile
	if p = w.step(); len(p.UpdateBindings) != 0 || p.RequeueAfter != 0 {
		t.Errorf("Stop: %d binding writes, requeue %s; want none", len(p.UpdateBindings), p.RequeueAfter)
	}
	if c, _ := condition.Find(w.run.Status.Conditions, staged.TypeProgressing); c.Reason != staged.ReasonUpdateRunStopped {
		t.Errorf("Stop: Progressing %s/%s, want False/%s", c.Status, c.Reason, staged.ReasonUpdateRunStopped)
	}

	w.run.Spec.State = staged.StateRun
	w.run.Generation++
	w.drive(100)
	if !statusTrue(w.run.Status.Conditions, staged.TypeSucceeded) || !cmp.Equal(w.order(), []string{"member1", "member2"}) {
		t.Errorf("Run again: order %v, status:\n%s", w.order(), timeline(w.run.Status))
	}

	w = scheduled(t, newStrategy(newStage("staging", env("staging"))), members)
	w.drive(100)
	if !statusTrue(w.run.Status.Conditions, staged.TypeSucceeded) {
		t.Errorf("no state: the run did not succeed:\n%s", timeline(w.run.Status))
	}
}

func TestValidateRunState(t *testing.T) {
	r := func(s staged.RunState) *staged.ClusterStagedUpdateRun {
		run := newRun(runName, "1")
		run.Spec.State = s
		return run
	}
	for _, tc := range []struct {
		old, new staged.RunState
		ok       bool
	}{
		{staged.StateInitialize, staged.StateRun, true},
		{staged.StateRun, staged.StateStop, true},
		{staged.StateStop, staged.StateRun, true},
		{"", staged.StateStop, true},
		{staged.StateStop, staged.StateInitialize, false},
		{"", staged.StateInitialize, false},
	} {
		if got := len(staged.ValidateRunUpdate(r(tc.old), r(tc.new))) == 0; got != tc.ok {
			t.Errorf("ValidateRunUpdate(%q -> %q) valid = %t, want %t", tc.old, tc.new, got, tc.ok)
		}
	}
	if errs := staged.ValidateRun(r("Pause")); len(errs) == 0 {
		t.Errorf("ValidateRun(state Pause) = no error")
	}
}

func ptr[T any](v T) *T { return &v }

// TestBeforeStageApproval: a before-stage Approval holds the stage's first cluster back until
// its request, <run>-before-<stage>, is approved; the previous stage is not held.
func TestBeforeStageApproval(t *testing.T) {
	prod := newStage("production", env("production"))
	prod.BeforeStageTasks = []staged.AfterStageTask{approvalTask()}
	s := newStrategy(newStage("canary", env("canary")), prod)
	w := scheduled(t, s, []*member.Member{newMember("member1", "environment=canary"), newMember("member2", "environment=production")})
	w.step()
	w.advance(at(15 * time.Second))
	p := w.step()
	if len(p.CreateApprovalRequests) != 1 || p.CreateApprovalRequests[0].Name != "example-run-before-production" ||
		p.CreateApprovalRequests[0].Spec.TargetStage != "production" {
		t.Fatalf("Decide(canary done) approval requests = %+v, want example-run-before-production", p.CreateApprovalRequests)
	}
	for _, d := range []time.Duration{time.Minute, time.Hour} {
		w.advance(at(d))
		if p := w.step(); len(p.UpdateBindings) != 0 {
			t.Errorf("Decide(T0+%s, not approved) updates %v, want none", d, p.UpdateBindings)
		}
	}
	if got := w.run.Status.StagesStatus[1].StartTime; got != nil {
		t.Errorf("production started at %v before its approval", got)
	}
	w.approve("example-run-before-production")
	p = w.step()
	if len(p.AcceptApprovalRequests) != 1 || len(p.UpdateBindings) != 1 || p.UpdateBindings[0].Binding.TargetCluster != "member2" {
		t.Errorf("Decide(approved) accepted %d, updates %v; want the approval accepted and member2 started", len(p.AcceptApprovalRequests), p.UpdateBindings)
	}
	w.drive(100)
	if !statusTrue(w.run.Status.Conditions, staged.TypeSucceeded) {
		t.Errorf("run did not succeed:\n%s", timeline(w.run.Status))
	}
	// Validation: one Approval at most, nothing else.
	for _, tc := range []struct {
		tasks []staged.AfterStageTask
		want  string
	}{
		{[]staged.AfterStageTask{timedWait(time.Minute)}, "spec.stages[0].beforeStageTasks[0].type: Unsupported value"},
		{[]staged.AfterStageTask{approvalTask(), approvalTask()}, "spec.stages[0].beforeStageTasks: Too many"},
	} {
		st := newStage("a", nil)
		st.BeforeStageTasks = tc.tasks
		errs := staged.ValidateStrategy(newStrategy(st))
		if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("ValidateStrategy(before %v) = %v, want %q", tc.tasks, errs, tc.want)
		}
	}
}
