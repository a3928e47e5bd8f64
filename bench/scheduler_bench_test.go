package bench

import "testing"

// BenchmarkSchedulePickN10k is one whole decision reaching all 50 picks of a PickN placement
// over 10,000 members (one required term, two preferred terms, a sorter, a spread constraint).
func BenchmarkSchedulePickN10k(b *testing.B) { Schedule(b, 10_000, PickNPolicy(50), 50, 50) }

// BenchmarkSchedulePickN10kHeartbeats is the same decision made once a simulated second
// while 10,000 members heartbeat once a minute (167 heartbeats between decisions, told to
// the store's status feed).
func BenchmarkSchedulePickN10kHeartbeats(b *testing.B) {
	ScheduleHeartbeats(b, 10_000, PickNPolicy(50), 50, 50, 167, true)
}

// BenchmarkSchedulePickN10kHeartbeatsNoFeed is the same from a store that keeps no status
// feed: every decision reads the status of every member the required term selects.
func BenchmarkSchedulePickN10kHeartbeatsNoFeed(b *testing.B) {
	ScheduleHeartbeats(b, 10_000, PickNPolicy(50), 50, 50, 167, false)
}

// BenchmarkSchedulePickN10kChurn is the same decision with one member relabelled before
// each (the store's version moves): nothing kept per policy survives between decisions.
func BenchmarkSchedulePickN10kChurn(b *testing.B) { ScheduleChurn(b, 10_000, PickNPolicy(50), 50, 50) }

// BenchmarkSchedulePickAll10k re-runs a PickAll placement with one required term on 10,000
// members once all its bindings (about 6,700) are present: a steady decision.
func BenchmarkSchedulePickAll10k(b *testing.B) { ScheduleSteady(b, 10_000, PickAllPolicy(), 0) }

// BenchmarkSchedulePickAll10kUnversioned is the same steady re-run from a store that keeps
// no versions of its members and bindings.
func BenchmarkSchedulePickAll10kUnversioned(b *testing.B) {
	ScheduleSteadyUnversioned(b, 10_000, PickAllPolicy(), 0)
}

// BenchmarkSchedulePickAllFirst10k is the same placement's first decision, which creates
// its 6,700 bindings. (Before issue 14, BenchmarkSchedulePickAll10k measured this.)
func BenchmarkSchedulePickAllFirst10k(b *testing.B) { Schedule(b, 10_000, PickAllPolicy(), 0, -1) }
