package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHubCapacityDelays: with Config.Hub, queued decisions wait for a worker and for their
// API calls from the token bucket, then take DecisionTime.
func TestHubCapacityDelays(t *testing.T) {
	for _, tc := range []struct {
		name string
		hc   HubCapacity
		want []time.Duration // the delays of five decisions queued at once
	}{
		{"workers and tokens to spare", HubCapacity{Workers: 8, QPS: 100, Burst: 100, CallsPerDecision: 10, DecisionTime: 5 * time.Millisecond},
			[]time.Duration{5, 5, 5, 5, 5}},
		{"one worker", HubCapacity{Workers: 1, QPS: 100, Burst: 100, CallsPerDecision: 10, DecisionTime: 5 * time.Millisecond},
			[]time.Duration{5, 10, 15, 20, 25}},
		// 20 tokens: two decisions at once, then one every 10 calls / 100 qps = 100ms.
		{"rate limited", HubCapacity{Workers: 8, QPS: 100, Burst: 20, CallsPerDecision: 10, DecisionTime: 5 * time.Millisecond},
			[]time.Duration{5, 5, 105, 205, 305}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := tc.hc
			s := newSim(t, Config{Hub: &hc})
			var got []time.Duration
			for range 5 {
				got = append(got, s.hub.decisionDelay()/time.Millisecond)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("delays in ms (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHubCapacityInvalid: a capacity no decision could run under is refused.
func TestHubCapacityInvalid(t *testing.T) {
	for _, hc := range []HubCapacity{
		{Workers: 0, QPS: 1, Burst: 1},
		{Workers: 1, QPS: 0, Burst: 1},
		{Workers: 1, QPS: 1, Burst: 1, CallsPerDecision: 2},
		{Workers: 1, QPS: 1, Burst: 1, DecisionTime: -time.Second},
	} {
		if _, err := New(Config{Hub: &hc}); err == nil {
			t.Errorf("New(Hub %+v) = nil error, want an error", hc)
		}
	}
}
