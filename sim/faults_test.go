package sim

import (
	"fmt"
	"testing"
	"time"
)

// TestRandomFaultsDrawnAsTheRunAdvances: a schedule of hundreds of thousands of failures
// (a mean time between failures of 1ns over a day) keeps at most one pending fault event
// per member, instead of drawing them all up front, and still fails and heals members.
func TestRandomFaultsDrawnAsTheRunAdvances(t *testing.T) {
	s := newSim(t, Config{Seed: 3})
	const members = 5
	for i := range members {
		if err := s.AddMember(MemberSpec{Name: fmt.Sprintf("m%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RandomFaults(RandomFaults{MeanTimeBetweenFailures: time.Nanosecond, MeanDuration: time.Nanosecond, Until: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if got := s.queue.Len(); got > 2*members+5 {
		t.Fatalf("after RandomFaults the queue holds %d events; want about one per member (the schedule is drawn up front)", got)
	}
	fails, heals, most := 0, 0, 0
	s.Observe(func(_ time.Duration, kind, _, _ string) {
		switch kind {
		case "member-failed":
			fails++
		case "member-healed":
			heals++
		}
	})
	s.AfterEvent(func() { most = max(most, len(s.funcs)-len(s.freeFuncs)) })
	if _, err := s.Run(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if fails < 1000 || heals < 1000 {
		t.Errorf("%d failures and %d heals in 2h with a 1ns mean time between failures; want thousands", fails, heals)
	}
	if most > 10*members {
		t.Errorf("up to %d closures pending at once; want a handful per member", most)
	}
}

// TestSharedLabelsAreCopiedOnChange: members added with equal labels share one map, and a
// label change on one member changes only that member.
func TestSharedLabelsAreCopiedOnChange(t *testing.T) {
	s := newSim(t, Config{Seed: 1})
	group := map[string]string{"group": "g0"}
	for _, n := range []string{"a", "b", "c"} {
		if err := s.AddMember(MemberSpec{Name: n, Labels: group}); err != nil {
			t.Fatal(err)
		}
	}
	group["group"] = "changed by the caller"
	if err := s.Label("b", map[string]string{"env": "prod"}, []string{"group"}); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Member("a")
	b, _ := s.Member("b")
	c, _ := s.Member("c")
	if a.Labels["group"] != "g0" || c.Labels["group"] != "g0" || len(a.Labels) != 1 || len(c.Labels) != 1 {
		t.Errorf("labels of a and c = %v, %v; want {group: g0} each", a.Labels, c.Labels)
	}
	if b.Labels["env"] != "prod" || len(b.Labels) != 1 {
		t.Errorf("labels of b = %v, want {env: prod}", b.Labels)
	}
	ra, rc := s.store.members["a"].Member.Labels, s.store.members["c"].Member.Labels
	ra["probe"] = "x"
	if rc["probe"] != "x" {
		t.Errorf("members a and c with equal labels hold separate maps; want one shared map")
	}
}
