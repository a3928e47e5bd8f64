package agentsystemd

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestApply(t *testing.T) {
	boom := errors.New("boom")
	plan := Plan{
		stopTask("a.service", "r1"),
		unloadTask("a.service", "r2"),
		loadTask("b.service", hA, "r3"),
		reloadTask(1, 1),
		startTask("b.service", "r4"),
		startTask("c.service", "r5"),
	}
	tests := []struct {
		name    string
		failAt  int // index of the failing task; -1 for none
		wantErr string
	}{
		{"all succeed", -1, ""},
		{"first task fails", 0, "stop a.service: boom"},
		{"daemon-reload fails", 3, "daemon-reload: boom"},
		{"start fails", 4, "start b.service: boom"},
		{"last task fails", 5, "start c.service: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []Task
			i := 0
			done, err := Apply(plan, func(task Task) error {
				ran = append(ran, task)
				defer func() { i++ }()
				if i == tt.failAt {
					return boom
				}
				return nil
			})
			wantDone, wantRan := plan, plan
			if tt.failAt >= 0 {
				wantDone, wantRan = plan[:tt.failAt], plan[:tt.failAt+1]
			}
			if diff := cmp.Diff([]Task(wantDone), done, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Apply(%v) done = %v, want %v; diff (-want +got):\n%s", plan, done, wantDone, diff)
			}
			if diff := cmp.Diff([]Task(wantRan), ran); diff != "" {
				t.Errorf("Apply(%v) ran (-want +got):\n%s", plan, diff)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Apply(%v) error = %v, want nil", plan, err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Apply(%v) error = %v, want %q", plan, err, tt.wantErr)
			}
			if !errors.Is(err, boom) {
				t.Errorf("errors.Is(%v, boom) = false, want true", err)
			}
			var te *TaskError
			if !errors.As(err, &te) {
				t.Fatalf("errors.As(%v, *TaskError) = false, want true", err)
			}
			if diff := cmp.Diff(plan[tt.failAt], te.Task); diff != "" {
				t.Errorf("TaskError.Task (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyDoneDoesNotAliasPlanCapacity(t *testing.T) {
	plan := Plan{stopTask("a.service", ""), stopTask("b.service", "")}
	done, err := Apply(plan, func(task Task) error {
		if task.Unit == "b.service" {
			return errors.New("no")
		}
		return nil
	})
	if err == nil {
		t.Fatal("Apply: want an error")
	}
	_ = append(done, startTask("x.service", ""))
	if plan[1].Unit != "b.service" {
		t.Errorf("appending to done overwrote the plan: %v", plan)
	}
}

func TestApplyEmptyPlan(t *testing.T) {
	done, err := Apply(nil, func(Task) error { t.Fatal("run called for an empty plan"); return nil })
	if len(done) != 0 || err != nil {
		t.Errorf("Apply(nil) = %v, %v, want [], nil", done, err)
	}
}

// TestStopFailurePreventsUnload checks the fix of upstream issue #1216: a unit whose stop
// fails keeps its file, so it can still be stopped in a later round.
func TestStopFailurePreventsUnload(t *testing.T) {
	sys := NewSimSystemd(running("a.service", hA))
	sys.Inject = func(task Task) error {
		if task.Kind == TaskStop {
			return errors.New("stop job failed")
		}
		return nil
	}
	plan, done, err := Reconcile(nil, sys)
	if err == nil || err.Error() != "stop a.service: stop job failed" {
		t.Fatalf("Reconcile(nil) error = %v, want stop a.service: stop job failed", err)
	}
	if len(done) != 0 {
		t.Errorf("Reconcile(nil) done = %v, want none", done)
	}
	if len(plan) != 3 {
		t.Errorf("Reconcile(nil) plan = %v, want stop, unload, daemon-reload", plan)
	}
	if diff := cmp.Diff([]CurrentUnit{running("a.service", hA)}, sys.CurrentUnits()); diff != "" {
		t.Errorf("units after a failed stop (-want +got):\n%s", diff)
	}

	sys.Inject = nil
	if _, _, err := Reconcile(nil, sys); err != nil {
		t.Fatalf("second Reconcile(nil) error = %v", err)
	}
	if got := sys.CurrentUnits(); len(got) != 0 {
		t.Errorf("units after the second round = %v, want none", got)
	}
}
