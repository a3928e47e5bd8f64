package bench

import (
	"testing"

	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
)

func benchmarkSchedule(b *testing.B, p *placement.PlacementPolicy, n int32, wantPlaced int) {
	members := Fleet(10_000, 1)
	snap := &placement.PolicySnapshot{Name: "crp-0", Placement: "crp", Policy: p, NumberOfClusters: n}
	in := scheduler.Input{Snapshot: snap, Members: members, Now: Epoch}
	s := scheduler.New(scheduler.Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		plan, err := s.Schedule(in)
		if err != nil {
			b.Fatal(err)
		}
		if wantPlaced >= 0 && plan.Placed != wantPlaced {
			b.Fatalf("placed %d clusters, want %d", plan.Placed, wantPlaced)
		}
	}
}

// BenchmarkSchedulePickN10k is one whole decision reaching all 50 picks of a PickN placement
// over 10,000 members (one required term, two preferred terms, a sorter, a spread constraint).
func BenchmarkSchedulePickN10k(b *testing.B) { benchmarkSchedule(b, PickNPolicy(50), 50, 50) }

// BenchmarkSchedulePickAll10k places a PickAll placement with one required term on 10,000 members.
func BenchmarkSchedulePickAll10k(b *testing.B) { benchmarkSchedule(b, PickAllPolicy(), 0, -1) }
