package bench

import (
	"testing"
	"time"
)

// BenchmarkSimHeartbeats5k24h simulates 5,000 members heartbeating every 60s for 24 hours
// (7.2 M heartbeats) with the hub evaluating their health. One op is the whole day.
func BenchmarkSimHeartbeats5k24h(b *testing.B) { SimHeartbeats(b, 5000, 24*time.Hour) }

// BenchmarkSimHeartbeats5k1h is the same fleet for one simulated hour: short enough to run
// under valgrind --tool=cachegrind, whose instruction and cache-miss counts do not depend
// on the machine's load.
func BenchmarkSimHeartbeats5k1h(b *testing.B) { SimHeartbeats(b, 5000, time.Hour) }
