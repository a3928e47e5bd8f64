package sim

import (
	"fmt"
	"time"
)

// RandomFaults is a seeded random fault schedule: each member fails after exponentially
// distributed up-times and heals after exponentially distributed down-times.
type RandomFaults struct {
	MeanTimeBetweenFailures time.Duration
	MeanDuration            time.Duration
	// Modes to draw from (default crash and partition).
	Modes []FailMode
	// Until: no failure starts at or after it, and every failure heals by it.
	Until time.Duration
	// Members to fail (default: every member present when the schedule is drawn).
	Members []string
}

// RandomFaults draws the whole schedule now, from the faults component's random source, and
// schedules its failures and heals.
func (s *Sim) RandomFaults(f RandomFaults) error {
	if f.MeanTimeBetweenFailures <= 0 || f.MeanDuration <= 0 {
		return fmt.Errorf("random faults: mean time between failures and mean duration must be positive")
	}
	if f.Until <= s.now {
		return fmt.Errorf("random faults: until %s is not after now %s", f.Until, s.now)
	}
	modes := f.Modes
	if len(modes) == 0 {
		modes = []FailMode{Crash, Partition}
	}
	members := f.Members
	if len(members) == 0 {
		members = s.store.MemberClusterNames()
	}
	exp := func(mean time.Duration) time.Duration {
		return time.Duration(s.rngFlt.ExpFloat64() * float64(mean))
	}
	for _, name := range members {
		t := s.now + exp(f.MeanTimeBetweenFailures)
		for t < f.Until {
			mode := modes[s.rngFlt.IntN(len(modes))]
			heal := min(t+max(exp(f.MeanDuration), time.Second), f.Until)
			s.At(t, "fault", func() { _ = s.Fail(name, mode) })
			s.At(heal, "fault-heal", func() { _ = s.Heal(name) })
			t = heal + exp(f.MeanTimeBetweenFailures)
		}
	}
	return nil
}
