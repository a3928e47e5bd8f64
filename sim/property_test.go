package sim

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/member"
)

// TestRecoveryAfterFaults: after any fault schedule heals (crashes, partitions, hub
// restarts, clock skew within the timeout), every live member is Joined and Healthy again
// within two heartbeat timeouts.
func TestRecoveryAfterFaults(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		cfg := Config{
			Seed:            seed,
			HeartbeatJitter: time.Duration(rapid.IntRange(0, 10).Draw(rt, "jitterSeconds")) * time.Second,
			Network:         Network{Delay: Distribution{Kind: Exponential, Mean: time.Duration(rapid.IntRange(1, 2000).Draw(rt, "delayMillis")) * time.Millisecond, Max: 10 * time.Second}},
		}
		s, err := New(cfg)
		if err != nil {
			rt.Fatal(err)
		}
		n := rapid.IntRange(1, 6).Draw(rt, "members")
		periods := make([]time.Duration, n)
		for i := range n {
			period := time.Duration(rapid.SampledFrom([]int{10, 30, 60, 120}).Draw(rt, "period")) * time.Second
			periods[i] = period
			if err := s.AddMember(MemberSpec{Name: fmt.Sprintf("m%d", i), HeartbeatPeriod: period}); err != nil {
				rt.Fatal(err)
			}
		}
		healBy := time.Duration(rapid.IntRange(10, 120).Draw(rt, "healByMinutes")) * time.Minute
		faults := rapid.IntRange(0, 12).Draw(rt, "faults")
		for range faults {
			idx := rapid.IntRange(0, n-1).Draw(rt, "member")
			name := fmt.Sprintf("m%d", idx)
			start := time.Duration(rapid.Int64Range(0, int64(healBy-time.Second)).Draw(rt, "start"))
			end := start + time.Duration(rapid.Int64Range(int64(time.Second), int64(healBy-start)).Draw(rt, "length"))
			switch rapid.IntRange(0, 3).Draw(rt, "kind") {
			case 0:
				s.At(start, "crash", func() { _ = s.Fail(name, Crash) })
				s.At(end, "heal", func() { _ = s.Heal(name) })
			case 1:
				s.At(start, "partition", func() { _ = s.Fail(name, Partition) })
				s.At(end, "heal", func() { _ = s.Heal(name) })
			case 2:
				s.At(start, "restart", s.RestartHub)
			case 3:
				// A clock running behind by more than the timeout minus the heartbeat period (and
				// the network delay) makes even the newest heartbeat look stale: that member is
				// rightly never healthy again, so skews stay inside that margin.
				slowest := 5*time.Minute - periods[idx] - 11*time.Second
				skew := time.Duration(rapid.Int64Range(int64(-slowest), int64(4*time.Minute)).Draw(rt, "skew"))
				s.At(start, "skew", func() { _ = s.SetClockSkew(name, skew) })
			}
		}
		deadline := healBy + 2*member.DefaultEligibility.HeartbeatTimeout
		s.Barrier(deadline, func() {
			for i := range n {
				name := fmt.Sprintf("m%d", i)
				if got := stateOf(s, name); got != joinedHealthy {
					rt.Errorf("%s at %s, %s after the last heal: %+v, want Joined and Healthy", name, deadline, deadline-healBy, got)
				}
			}
		})
		if _, err := s.Run(deadline + time.Second); err != nil {
			rt.Fatal(err)
		}
	})
}
