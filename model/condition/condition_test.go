package condition

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSet(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	var cs []Timed
	if !Set(&cs, False(TypeApplied, "ApplyPending", "waiting"), 1, t0) {
		t.Errorf("Set on an empty list should report a change")
	}
	if Set(&cs, False(TypeApplied, "Other", "still waiting"), 2, t1) {
		t.Errorf("same status should not be a change")
	}
	want := []Timed{{Condition: False(TypeApplied, "Other", "still waiting"), ObservedGeneration: 2, LastTransitionTime: t0}}
	if diff := cmp.Diff(want, cs); diff != "" {
		t.Errorf("after a reason change (-want +got):\n%s", diff)
	}
	if !Set(&cs, True(TypeApplied, ReasonAllWorkApplied, "done"), 2, t1) || cs[0].LastTransitionTime != t1 {
		t.Errorf("status change must move the transition time: %+v", cs)
	}
	if !IsTrue(cs, TypeApplied, 2) || IsTrue(cs, TypeApplied, 3) || IsTrue(cs, TypeAvailable, 2) {
		t.Errorf("IsTrue must check type, status and generation: %+v", cs)
	}
	Remove(&cs, TypeApplied)
	if _, ok := Find(cs, TypeApplied); ok || len(cs) != 0 {
		t.Errorf("Remove left %+v", cs)
	}
	if c := True("X", "R", "m"); c.Status != metav1.ConditionTrue {
		t.Errorf("True() = %+v", c)
	}
}
