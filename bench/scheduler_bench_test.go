package bench

import "testing"

// BenchmarkSchedulePickN10k is one whole decision reaching all 50 picks of a PickN placement
// over 10,000 members (one required term, two preferred terms, a sorter, a spread constraint).
func BenchmarkSchedulePickN10k(b *testing.B) { Schedule(b, 10_000, PickNPolicy(50), 50, 50) }

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
