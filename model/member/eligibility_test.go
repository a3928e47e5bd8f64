package member

import (
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPropEligibilityCheckerMatchesCheckEligibility: the checker with precomputed cut-offs
// decides exactly as CheckEligibility, code and Since, at the windows' edges, with and
// without monotonic clock readings, and for times centuries apart (where Sub saturates).
func TestPropEligibilityCheckerMatchesCheckEligibility(t *testing.T) {
	wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mono := time.Now()
	rapid.Check(t, func(t *rapid.T) {
		base := rapid.SampledFrom([]time.Time{wall, mono, mono.Round(0), time.Unix(0, 0), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)}).Draw(t, "now")
		cfg := EligibilityConfig{
			HeartbeatTimeout:   time.Duration(rapid.SampledFrom([]int64{0, 1, int64(time.Second), int64(5 * time.Minute)}).Draw(t, "timeout")),
			UnhealthyTolerance: time.Duration(rapid.SampledFrom([]int64{0, 1, int64(time.Minute), int64(5 * time.Minute)}).Draw(t, "tolerance")),
		}
		offset := func(label string, window time.Duration) time.Time {
			d := rapid.SampledFrom([]time.Duration{window, window - 1, window + 1, 0, -window, -1, math.MaxInt64, math.MinInt64 + 1, 200 * 365 * 24 * time.Hour}).Draw(t, label)
			at := rapid.SampledFrom([]time.Time{base, base.Round(0), wall, mono}).Draw(t, label+"Base")
			if rapid.Bool().Draw(t, label+"Twice") {
				at = at.Add(-d) // beyond the range of a Duration from now, sometimes
			}
			return at.Add(-d)
		}
		m := &Member{
			Leaving: rapid.IntRange(0, 9).Draw(t, "leaving") == 0,
			Agent: AgentStatus{
				Present: rapid.IntRange(0, 9).Draw(t, "present") > 0, Joined: rapid.IntRange(0, 9).Draw(t, "joined") > 0,
				HealthKnown: rapid.IntRange(0, 9).Draw(t, "healthKnown") > 0, Healthy: rapid.Bool().Draw(t, "healthy"),
				LastHeartbeat:    offset("heartbeat", cfg.HeartbeatTimeout),
				HealthTransition: offset("transition", cfg.UnhealthyTolerance),
			},
		}
		want := m.CheckEligibility(base, cfg)
		c := NewEligibilityChecker(base, cfg)
		if got := c.Check(m); got != want {
			t.Fatalf("checker at %v with %+v: Check(%+v) = %+v, CheckEligibility = %+v", base, cfg, m.Agent, got, want)
		}
	})
}

// TestPropStatusFeedSince: Since lists exactly the writes after a version, oldest first,
// while the feed remembers them, and refuses otherwise.
func TestPropStatusFeedSince(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		asked := rapid.IntRange(0, 5).Draw(t, "size")
		f := NewStatusFeed(asked)
		size := len(f.ring)
		if size&(size-1) != 0 || size < asked || asked == 0 && size != DefaultStatusFeedSize {
			t.Fatalf("NewStatusFeed(%d) keeps %d writes, want a power of two, at least %d", asked, size, asked)
		}
		ms := []*Member{{Name: "a"}, {Name: "b"}, {Name: "c"}}
		var log []*Member
		for range rapid.IntRange(0, 12).Draw(t, "writes") {
			m := rapid.SampledFrom(ms).Draw(t, "member")
			f.Changed(m)
			log = append(log, m)
		}
		if f.Version() != uint64(len(log)) {
			t.Fatalf("Version() = %d after %d writes", f.Version(), len(log))
		}
		v := uint64(rapid.IntRange(0, len(log)+2).Draw(t, "since"))
		var got []*Member
		ok := f.Since(v, func(m *Member) { got = append(got, m) })
		wantOK := v <= uint64(len(log)) && uint64(len(log))-v <= uint64(size)
		if ok != wantOK {
			t.Fatalf("Since(%d) with %d writes in a feed of %d = %v, want %v", v, len(log), size, ok, wantOK)
		}
		if !ok {
			if len(got) != 0 {
				t.Fatalf("Since(%d) refused but listed %d members", v, len(got))
			}
			return
		}
		if want := log[v:]; !slices.Equal(got, want) {
			t.Fatalf("Since(%d) listed %v, want %v", v, got, want)
		}
	})
}
