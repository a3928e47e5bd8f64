package bench

import "testing"

// BenchmarkSchedulePickN10k is one whole decision reaching all 50 picks of a PickN placement
// over 10,000 members (one required term, two preferred terms, a sorter, a spread constraint).
func BenchmarkSchedulePickN10k(b *testing.B) { Schedule(b, 10_000, PickNPolicy(50), 50, 50) }

// BenchmarkSchedulePickAll10k places a PickAll placement with one required term on 10,000 members.
func BenchmarkSchedulePickAll10k(b *testing.B) { Schedule(b, 10_000, PickAllPolicy(), 0, -1) }
