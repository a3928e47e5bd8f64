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

// RandomFaults starts a random fault schedule. Failures are drawn as the run advances, from
// the faults component's random source: each member has at most one pending fault event
// (its next failure, or the heal of its current one), and the next is drawn when it fires.
// So memory stays one event per member, however many failures the schedule holds.
func (s *Sim) RandomFaults(f RandomFaults) error {
	if f.MeanTimeBetweenFailures <= 0 || f.MeanDuration <= 0 {
		return fmt.Errorf("random faults: mean time between failures and mean duration must be positive")
	}
	if f.Until <= s.now {
		return fmt.Errorf("random faults: until %s is not after now %s", f.Until, s.now)
	}
	if len(f.Modes) == 0 {
		f.Modes = []FailMode{Crash, Partition}
	}
	members := f.Members
	if len(members) == 0 {
		members = s.store.MemberClusterNames()
	}
	for _, name := range members {
		s.nextFault(&f, name)
	}
	return nil
}

// exp draws an exponentially distributed duration of the given mean.
func (s *Sim) exp(mean time.Duration) time.Duration {
	return time.Duration(s.rngFlt.ExpFloat64() * float64(mean))
}

// nextFault draws the member's next failure after an up-time; none starts at or after Until.
func (s *Sim) nextFault(f *RandomFaults, name string) {
	t := s.now + s.exp(f.MeanTimeBetweenFailures)
	if t >= f.Until || t < s.now { // t < now: the draw overflowed
		return
	}
	s.At(t, "fault", func() {
		mode := f.Modes[s.rngFlt.IntN(len(f.Modes))]
		_ = s.Fail(name, mode)
		heal := min(s.now+max(s.exp(f.MeanDuration), time.Second), f.Until)
		if heal < s.now {
			heal = f.Until
		}
		s.At(heal, "fault-heal", func() {
			_ = s.Heal(name)
			s.nextFault(f, name)
		})
	})
}
