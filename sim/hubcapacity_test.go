package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/sim/timing"
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
				got = append(got, s.hub.decisionDelay(ctrlWork, "")/time.Millisecond)
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

// TestHubModelDelays: with Config.HubModel, a decision waits for a worker, then takes its CPU
// and its writes on the calibration's cores, first come first served, then a round trip.
func TestHubModelDelays(t *testing.T) {
	cal := timing.Reference()
	for name, v := range map[string]float64{"apiServer.cores": 1, "apiServer.watched": 1, "apiServer.roundTrip": 1,
		"apiServer.heartbeatWrite": 10, "hub.cpuPerDecision": 5, "hub.cpuPerBinding": 0} {
		if err := cal.Set(name, v, "test"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		workers int
		want    []time.Duration // the delays of five membership decisions queued at once, in ms
	}{
		// One core: each decision's 5 ms of CPU and its 10 ms write queue behind the ones
		// before, whatever the workers.
		{"eight workers, one core", 8, []time.Duration{16, 31, 46, 61, 76}},
		{"one worker, one core", 1, []time.Duration{16, 32, 48, 64, 80}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, Config{HubModel: &HubModel{Workers: tc.workers, Calibration: cal}})
			var got []time.Duration
			for range 5 {
				got = append(got, s.hub.decisionDelay(ctrlMembership, "m")/time.Millisecond)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("delays in ms (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHubModelInvalid: a hub model without workers or calibration, or beside a capacity,
// is refused.
func TestHubModelInvalid(t *testing.T) {
	cal := timing.Reference()
	for _, cfg := range []Config{
		{HubModel: &HubModel{Workers: 0, Calibration: cal}},
		{HubModel: &HubModel{Workers: 1}},
		{HubModel: &HubModel{Workers: 1, Calibration: cal}, Hub: &HubCapacity{Workers: 1, QPS: 1, Burst: 1}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error, want an error", cfg)
		}
	}
}
