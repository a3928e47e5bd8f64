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
