package sim

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/units"
	"github.com/fleetsim/fleetsim/sim/timing"
)

// Config tunes a simulation. Zero fields take the defaults documented on each.
type Config struct {
	Seed uint64
	// Start is the virtual wall-clock time at t=0 (default 2026-01-01T00:00:00Z).
	Start time.Time
	// HubDelay is how long a hub controller takes to process a queued key (default 100ms).
	HubDelay time.Duration
	// AgentSyncDelay is how long a member agent takes to see a hub change (default 1s).
	AgentSyncDelay time.Duration
	// HeartbeatJitter: each heartbeat interval is the period plus a uniform draw from
	// [0, HeartbeatJitter) (default 0).
	HeartbeatJitter time.Duration
	// Network describes member-to-hub messages (default: a constant 50ms, no loss).
	Network Network
	// Eligibility: heartbeat and health windows (default 5m and 5m).
	Eligibility member.EligibilityConfig
	// Propagation is the hub's propagation filter (a scenario's propagation: section).
	Propagation *resources.Filter
	// HubRestartDelay is how long a restarting hub is down (default 10s).
	HubRestartDelay time.Duration
	// MachineTTL is fleet's agent_ttl: a machine silent this long is gone and its units
	// move (default 30s). EngineLeaseTTL is the engine lease's TTL (default 10s).
	MachineTTL     time.Duration
	EngineLeaseTTL time.Duration
	// WorkloadReadyDelay is how long a trackable workload (a deployment, a job) takes to
	// become available after it is applied (default 30s).
	WorkloadReadyDelay time.Duration
	// DriftCheckDelay is how long after an object is edited on a member the member agent's
	// periodic drift check sees it (default 15s).
	DriftCheckDelay time.Duration
	// Hub, when set, models the production hub's decision capacity instead of HubDelay.
	Hub *HubCapacity
	// HubModel, when set, is the calibrated model of the production hub (sim/timing)
	// instead of HubDelay or Hub.
	HubModel *HubModel
	// Trace receives the JSONL event log when non-nil.
	Trace io.Writer
}

// HubCapacity models the production hub (`fleet hub --workers --kube-api-qps
// --kube-api-burst`): a queued decision waits for one of Workers, then for its
// CallsPerDecision API requests from a token bucket of QPS per second holding Burst, then
// takes DecisionTime; its effects land when it ends. Without it every decision takes
// HubDelay, however many run at once.
type HubCapacity struct {
	Workers          int
	QPS              float64
	Burst            int
	CallsPerDecision int
	DecisionTime     time.Duration
}

// Validate checks a capacity.
func (h *HubCapacity) Validate() error {
	switch {
	case h.Workers < 1:
		return fmt.Errorf("hub: workers %d must be 1 or more", h.Workers)
	case h.QPS <= 0 || math.IsNaN(h.QPS) || math.IsInf(h.QPS, 0):
		return fmt.Errorf("hub: qps %v must be positive", h.QPS)
	case h.Burst < 1:
		return fmt.Errorf("hub: burst %d must be 1 or more", h.Burst)
	case h.CallsPerDecision < 0 || h.CallsPerDecision > h.Burst:
		return fmt.Errorf("hub: callsPerDecision %d must be from 0 to burst (%d)", h.CallsPerDecision, h.Burst)
	case h.DecisionTime < 0:
		return fmt.Errorf("hub: decisionTime %s must not be negative", h.DecisionTime)
	}
	return nil
}

// HubModel is the production hub as sim/timing measures it: a queued decision waits for one
// of Workers, then takes the hub's CPU for the bindings it handles and the API server's CPU
// for the writes the hub's decision of that controller makes (timing.DecisionWrites), both
// on the calibration's cores, which every decision shares first come first served, plus a
// write's round trip; its effects land when it ends.
type HubModel struct {
	Workers     int
	Calibration *timing.Calibration
}

// Validate checks a hub model.
func (h *HubModel) Validate() error {
	if h.Workers < 1 {
		return fmt.Errorf("hub model: workers %d must be 1 or more", h.Workers)
	}
	if h.Calibration == nil {
		return fmt.Errorf("hub model: no calibration")
	}
	if err := h.Calibration.Validate(); err != nil {
		return fmt.Errorf("hub model: calibration: %w", err)
	}
	return nil
}

// Network is the path from member agents to the hub.
type Network struct {
	Delay Distribution
	// Loss is the probability that a message is lost.
	Loss float64
}

// DistributionKind names a delay distribution.
type DistributionKind string

const (
	Constant    DistributionKind = "constant"
	Uniform     DistributionKind = "uniform"
	Exponential DistributionKind = "exponential"
)

// Distribution draws delays: constant (Mean), uniform in [Min, Max], or exponential with
// mean Mean, capped at Max when Max > 0.
type Distribution struct {
	Kind           DistributionKind
	Mean, Min, Max time.Duration
}

// Sample draws one delay.
func (d Distribution) Sample(r *rand.Rand) time.Duration {
	switch d.Kind {
	case Uniform:
		if d.Max <= d.Min {
			return d.Min
		}
		return d.Min + time.Duration(r.Int64N(int64(d.Max-d.Min)+1))
	case Exponential:
		v := time.Duration(r.ExpFloat64() * float64(d.Mean))
		if d.Max > 0 && v > d.Max {
			v = d.Max
		}
		return v
	default:
		return d.Mean
	}
}

// Validate rejects distributions that make no sense.
func (d Distribution) Validate() error {
	switch d.Kind {
	case "", Constant, Exponential:
		if d.Mean < 0 {
			return fmt.Errorf("%s delay: mean %s is negative", d.kindName(), d.Mean)
		}
	case Uniform:
		if d.Min < 0 || d.Max < d.Min {
			return fmt.Errorf("uniform delay: need 0 <= min <= max, got [%s, %s]", d.Min, d.Max)
		}
	default:
		return fmt.Errorf("delay distribution %q is not one of constant, uniform, exponential", d.Kind)
	}
	return nil
}

func (d Distribution) kindName() string {
	if d.Kind == "" {
		return string(Constant)
	}
	return string(d.Kind)
}

func (c Config) withDefaults() (Config, error) {
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.HubDelay == 0 {
		c.HubDelay = 100 * time.Millisecond
	}
	if c.AgentSyncDelay == 0 {
		c.AgentSyncDelay = time.Second
	}
	if c.Network.Delay == (Distribution{}) {
		c.Network.Delay = Distribution{Kind: Constant, Mean: 50 * time.Millisecond}
	}
	if c.Eligibility == (member.EligibilityConfig{}) {
		c.Eligibility = member.DefaultEligibility
	}
	if c.HubRestartDelay == 0 {
		c.HubRestartDelay = 10 * time.Second
	}
	if c.MachineTTL == 0 {
		c.MachineTTL = units.DefaultMachineTTL
	}
	if c.EngineLeaseTTL == 0 {
		c.EngineLeaseTTL = 10 * time.Second
	}
	if c.WorkloadReadyDelay == 0 {
		c.WorkloadReadyDelay = 30 * time.Second
	}
	if c.DriftCheckDelay == 0 {
		c.DriftCheckDelay = 15 * time.Second
	}
	if err := c.Network.Delay.Validate(); err != nil {
		return c, fmt.Errorf("network: %w", err)
	}
	if c.Network.Loss < 0 || c.Network.Loss >= 1 || math.IsNaN(c.Network.Loss) {
		return c, fmt.Errorf("network: loss %v must be in [0, 1)", c.Network.Loss)
	}
	if c.HubDelay < 0 || c.AgentSyncDelay < 0 || c.HeartbeatJitter < 0 || c.HubRestartDelay < 0 {
		return c, fmt.Errorf("delays must not be negative")
	}
	if c.Hub != nil {
		if err := c.Hub.Validate(); err != nil {
			return c, err
		}
	}
	if c.HubModel != nil {
		if c.Hub != nil {
			return c, fmt.Errorf("hub: a capacity and a calibrated model are two models of the hub: give one")
		}
		if err := c.HubModel.Validate(); err != nil {
			return c, err
		}
	}
	return c, nil
}
