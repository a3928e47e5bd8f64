package hub

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/triggers"
)

// TestWakeLedger pins when a queued decision counts as served by another: only a decision
// that read after the wake (its mark came later) and, for a timed wake, was taken at or
// after the time it is due. A wake fired after the serving decision read stays queued.
func TestWakeLedger(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	wg, fanIn := triggers.WorkGenerator, WorkStatus
	type step struct {
		do   string // "woke", "wokeAt", "mark", "served"
		c    triggers.Controller
		key  string
		at   time.Time
		mark int // index into the marks taken so far
	}
	for _, tc := range []struct {
		name  string
		steps []step
		// want: does each controller/key pair still wait after the steps?
		want map[string]bool
	}{
		{
			name: "served by a decision that read after the wake",
			steps: []step{
				{do: "woke", c: wg, key: "b1"},
				{do: "mark", at: t0},
				{do: "served", c: wg, key: "b1", mark: 0},
			},
			want: map[string]bool{"work-generator/b1": false},
		},
		{
			name: "a wake after the decision read stays queued",
			steps: []step{
				{do: "woke", c: wg, key: "b1"},
				{do: "mark", at: t0},
				{do: "woke", c: wg, key: "b1"},
				{do: "served", c: wg, key: "b1", mark: 0},
			},
			want: map[string]bool{"work-generator/b1": true},
		},
		{
			name: "serving one key leaves the others",
			steps: []step{
				{do: "woke", c: wg, key: "b1"},
				{do: "woke", c: fanIn, key: "b1"},
				{do: "woke", c: wg, key: "b2"},
				{do: "mark", at: t0},
				{do: "served", c: wg, key: "b1", mark: 0},
			},
			want: map[string]bool{"work-generator/b1": false, "work-status/b1": true, "work-generator/b2": true},
		},
		{
			name: "a timed wake is served only by a decision taken when it is due",
			steps: []step{
				{do: "wokeAt", c: triggers.Rollout, key: "p", at: t0.Add(time.Minute)},
				{do: "mark", at: t0},
				{do: "served", c: triggers.Rollout, key: "p", mark: 0},
			},
			want: map[string]bool{"rollout/p": true},
		},
		{
			name: "and is by one taken then",
			steps: []step{
				{do: "wokeAt", c: triggers.Rollout, key: "p", at: t0.Add(time.Minute)},
				{do: "woke", c: triggers.Rollout, key: "p"},
				{do: "mark", at: t0.Add(time.Minute)},
				{do: "served", c: triggers.Rollout, key: "p", mark: 0},
			},
			want: map[string]bool{"rollout/p": false},
		},
		{
			name: "an early decision serves the wake but not the timed one",
			steps: []step{
				{do: "wokeAt", c: triggers.Rollout, key: "p", at: t0.Add(time.Minute)},
				{do: "woke", c: triggers.Rollout, key: "p"},
				{do: "mark", at: t0},
				{do: "served", c: triggers.Rollout, key: "p", mark: 0},
				{do: "mark", at: t0.Add(2 * time.Minute)},
				{do: "served", c: triggers.Rollout, key: "p", mark: 1},
			},
			want: map[string]bool{"rollout/p": false},
		},
		{
			name:  "never woken: nothing waits",
			steps: nil,
			want:  map[string]bool{"work-generator/b1": false},
		},
	} {
		var l wakeLedger
		var marks []mark
		for _, s := range tc.steps {
			switch s.do {
			case "woke":
				l.woke(s.c, s.key)
			case "wokeAt":
				l.wokeAt(s.c, s.key, s.at)
			case "mark":
				marks = append(marks, l.mark(s.at))
			case "served":
				l.served(s.c, s.key, marks[s.mark])
			}
		}
		got := map[string]bool{}
		for k := range tc.want {
			c, key, _ := strings.Cut(k, "/")
			got[k] = l.waiting(triggers.Controller(c), key)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: waiting after the steps (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestWakeLedgerDue pins which wakes a placement-wide decision serves besides its own:
// those fired before it read, and timed ones due by then.
func TestWakeLedgerDue(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var l wakeLedger
	l.woke(triggers.WorkGenerator, "b1")
	l.wokeAt(triggers.Rollout, "p", t0.Add(time.Second))
	m := l.mark(t0)
	l.woke(WorkStatus, "b1")
	for _, tc := range []struct {
		c    triggers.Controller
		key  string
		m    mark
		want bool
	}{
		{triggers.WorkGenerator, "b1", m, true},
		{WorkStatus, "b1", m, false}, // fired after the decision read
		{triggers.Rollout, "p", m, false},
		{triggers.Rollout, "p", mark{seq: m.seq, at: t0.Add(time.Second)}, true},
		{triggers.Scheduler, "p", m, false},
	} {
		if got := l.due(tc.c, tc.key, tc.m); got != tc.want {
			t.Errorf("due(%s, %s, %v) = %v, want %v", tc.c, tc.key, tc.m, got, tc.want)
		}
	}
}
