package bench

import (
	"testing"
	"time"
)

// BenchmarkSimHeartbeats5k24h simulates 5,000 members heartbeating every 60s for 24 hours
// (7.2 M heartbeats) with the hub evaluating their health. One op is the whole day.
func BenchmarkSimHeartbeats5k24h(b *testing.B) { SimHeartbeats(b, 5000, 24*time.Hour) }
