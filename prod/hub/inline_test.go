package hub

import (
	"testing"

	"github.com/fleetsim/fleetsim/model/triggers"
)

// TestWakes pins which fired changes make a placement-wide decision run the next
// controllers of placementChain inline: those the trigger table sends to the same
// placement.
func TestWakes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fired []firing
		c     triggers.Controller
		want  bool
	}{
		{"a new policy snapshot wakes the scheduler", []firing{{change: triggers.PolicySnapshotNew, key: "p-1", placement: "p"}}, triggers.Scheduler, true},
		{"of another placement it does not", []firing{{change: triggers.PolicySnapshotNew, key: "q-1", placement: "q"}}, triggers.Scheduler, false},
		{"a new binding wakes the rollout", []firing{{change: triggers.BindingChanged, key: "p-east", placement: "p", memberOf: "east"}}, triggers.Rollout, true},
		{"a new binding does not wake the scheduler", []firing{{change: triggers.BindingChanged, key: "p-east", placement: "p"}}, triggers.Scheduler, false},
		{"nothing fired", nil, triggers.Rollout, false},
	} {
		if got := wakes(tc.fired, tc.c, "p"); got != tc.want {
			t.Errorf("wakes(%s, %s, p) = %v, want %v", tc.name, tc.c, got, tc.want)
		}
	}
}

// TestInlinedSkip pins which wakes a decision that ran controllers inline no longer
// queues: those fired before the inline run, for its own placement, and the work generator
// of bindings whose Work it generated, for changes fired before it ran; a change fired
// after the inline run still wakes.
func TestInlinedSkip(t *testing.T) {
	in := &inlined{placement: "p", wide: map[triggers.Controller]int{triggers.Scheduler: 1, triggers.Rollout: 3},
		works: map[string]int{"p-east": 4}}
	for _, tc := range []struct {
		firing int
		c      triggers.Controller
		key    string
		want   bool
	}{
		{0, triggers.Scheduler, "p", true},
		{1, triggers.Scheduler, "p", false},
		{2, triggers.Rollout, "p", true},
		{3, triggers.Rollout, "p", false},
		{0, triggers.Rollout, "q", false},
		{0, triggers.WorkGenerator, "p-east", true},
		{3, triggers.WorkGenerator, "p-east", true},
		{4, triggers.WorkGenerator, "p-east", false}, // changed after its Work was generated
		{5, triggers.WorkGenerator, "p-west", false},
		{0, triggers.PolicySnapshot, "p", false},
	} {
		if got := in.skip(tc.firing)(tc.c, tc.key); got != tc.want {
			t.Errorf("skip(%d)(%s, %s) = %v, want %v", tc.firing, tc.c, tc.key, got, tc.want)
		}
	}
	var none *inlined
	if none.skip(0) != nil {
		t.Errorf("skip of a decision that ran nothing inline is not nil")
	}
}
