package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
)

// Limits bound the work a scenario may ask for, so that a typo (a mean time between
// failures of 1ns, a duration of 2562047h, 100,000 members beating every second for a day)
// is refused by validation with a message instead of running for hours or exhausting
// memory. A zero field takes its default from [DefaultLimits]; `fleetsim run` and
// `fleetsim validate` raise them with --max-members, --max-events and --max-expected-faults.
type Limits struct {
	// MaxMembers is the most members `members` may define.
	MaxMembers int
	// MaxEvents is the most events the run is estimated to process ([Work.Events]).
	MaxEvents float64
	// MaxFaults is the most random failures `faults` is expected to draw ([Work.Faults]).
	MaxFaults float64
}

// DefaultLimits: a million members (about 2 KiB each), a hundred million events (about a
// minute of simulation at the ~1.8 million events a second of reports/benchmarks.md) and a
// million random failures.
var DefaultLimits = Limits{MaxMembers: 1_000_000, MaxEvents: 100_000_000, MaxFaults: 1_000_000}

func (l Limits) withDefaults() Limits {
	if l.MaxMembers <= 0 {
		l.MaxMembers = DefaultLimits.MaxMembers
	}
	if l.MaxEvents <= 0 {
		l.MaxEvents = DefaultLimits.MaxEvents
	}
	if l.MaxFaults <= 0 {
		l.MaxFaults = DefaultLimits.MaxFaults
	}
	return l
}

// Options change how a scenario is checked.
type Options struct {
	Limits Limits
	// Until, when positive, is how long the run will last instead of the file's duration
	// (`fleetsim run --until`); the work is estimated for it.
	Until time.Duration
}

// Work is an estimate of what running a scenario costs. It counts what grows with the
// fleet and the duration; the hub's reconciles and the scheduler's decisions come on top,
// so it is a lower bound of the events a run processes, close to them for large fleets.
type Work struct {
	Members int
	// Heartbeats: each member beats every heartbeat period from its join to the end.
	Heartbeats float64
	// Faults is the expected number of random failures: per member, one every
	// meanTimeBetweenFailures + max(meanDuration, 1s) from the last join to faults.until.
	Faults float64
	// Events: heartbeats, eventsPerMember per member (joining), eventsPerFault per failure
	// and one per timeline step.
	Events float64
}

// Events counted per member (created, prepared, agent joins, first heartbeat, conditions)
// and per random failure (the failure, the heal, the agent's rejoin and the hub's look).
const (
	eventsPerMember = 5
	eventsPerFault  = 4
)

// Estimate returns the work of running s until the given time (0: its duration).
func (s *Scenario) Estimate(until time.Duration) Work {
	if until <= 0 {
		until = s.Duration
	}
	var w Work
	beats := func(n int, from, period time.Duration) float64 {
		if from >= until || period <= 0 {
			return 0
		}
		return float64(n) * math.Ceil(float64(until-from)/float64(period))
	}
	lastJoin := time.Duration(0)
	for _, g := range s.Members {
		w.Members += len(g.Names)
		w.Heartbeats += beats(len(g.Names), g.JoinAt, g.HeartbeatPeriod)
		lastJoin = max(lastJoin, g.JoinAt)
	}
	// Members created by MemberCluster manifests, once each, from their first apply.
	seen := map[string]bool{}
	for _, st := range s.Timeline {
		for _, m := range st.Apply {
			o := m.Object
			if o.GetKind() != KindMemberCluster || o.GetAPIVersion() != ClusterGroupVersion || seen[o.GetName()] {
				continue
			}
			seen[o.GetName()] = true
			w.Members++
			period := member.DefaultHeartbeatPeriod
			if spec, ok := o.Object["spec"].(map[string]any); ok {
				if hb, ok := spec["heartbeatPeriodSeconds"].(int64); ok && hb > 0 {
					period = time.Duration(hb) * time.Second
				}
			}
			w.Heartbeats += beats(1, st.At, period)
		}
	}
	if f := s.Faults; f != nil && f.Until > lastJoin {
		cycle := f.MeanTimeBetweenFailures + max(f.MeanDuration, time.Second)
		w.Faults = float64(w.Members) * float64(f.Until-lastJoin) / float64(cycle)
	}
	w.Events = w.Heartbeats + eventsPerMember*float64(w.Members) + eventsPerFault*w.Faults + float64(len(s.Timeline))
	return w
}

// checkWork refuses a scenario whose estimated work exceeds the limits, naming the field
// that asks for it and the estimate.
func (p *parser) checkWork(s *Scenario) error {
	until := s.Duration
	if p.opts.Until > 0 {
		until = p.opts.Until
	}
	w := s.Estimate(until)
	lim := p.opts.Limits
	if s.Faults != nil && w.Faults > lim.MaxFaults {
		f := s.Faults
		return p.errorf(f.Line, "faults", "asks for about %s random failures (%s members, each failing every %s + %s on average until %s); the limit is %s (raise it with --max-expected-faults, or lengthen meanTimeBetweenFailures)",
			count(w.Faults), count(float64(w.Members)), f.MeanTimeBetweenFailures, max(f.MeanDuration, time.Second), f.Until, count(lim.MaxFaults))
	}
	if w.Events > lim.MaxEvents {
		over := "duration " + s.Duration.String()
		if p.opts.Until > 0 {
			over = "--until " + until.String()
		}
		line, field := p.durationLine, "duration"
		detail := fmt.Sprintf("%s heartbeats of %s members over %s", count(w.Heartbeats), count(float64(w.Members)), over)
		if eventsPerFault*w.Faults > w.Heartbeats {
			line, field = s.Faults.Line, "faults"
			detail = fmt.Sprintf("%s random failures of %s members", count(w.Faults), count(float64(w.Members)))
		}
		return p.errorf(line, field, "the run would process about %s events (%s); the limit is %s, about a minute of simulation (raise it with --max-events)",
			count(w.Events), detail, count(lim.MaxEvents))
	}
	return nil
}

// count prints a whole number with thousands separators: 153722820 → 153,722,820, or in
// scientific notation from 10^18. Capacity plans print their counts with it too.
func count(v float64) string { return FormatCount(v) }

// FormatCount prints a whole number with thousands separators: 153722820 → 153,722,820, or
// in scientific notation from 10^18.
func FormatCount(v float64) string {
	if v >= 1e18 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
