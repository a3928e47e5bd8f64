package bench

import (
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/sim"
)

// BenchmarkSimHeartbeats5k24h simulates 5,000 members heartbeating every 60s for 24 hours
// (7.2 M heartbeats) with the hub evaluating their health. One op is the whole day.
func BenchmarkSimHeartbeats5k24h(b *testing.B) {
	const members, day = 5000, 24 * time.Hour
	fleet := Fleet(members, 1)
	b.ReportAllocs()
	var events uint64
	for b.Loop() {
		s, err := sim.New(sim.Config{Seed: 1, HeartbeatJitter: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range fleet {
			if err := s.AddMember(sim.MemberSpec{Name: m.Name, Labels: m.Labels, Properties: m.Properties, Resources: m.Resources}); err != nil {
				b.Fatal(err)
			}
		}
		res, err := s.Run(day)
		if err != nil {
			b.Fatal(err)
		}
		events = res.Events
		if got := len(s.Members()); got != members {
			b.Fatalf("%d members at the end, want %d", got, members)
		}
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(events), "events/op")
	b.ReportMetric(float64(events)/perOp, "events/s")
	b.ReportMetric(day.Seconds()/perOp, "x-realtime")
}
