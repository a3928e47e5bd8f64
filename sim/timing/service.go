package timing

import (
	"math"
	"time"
)

// Cores are the machine's cores as the model serves work on them: each piece of work (a
// write's CPU in the API server and etcd, a decision's CPU in the hub) goes, in the order it
// is handed over, to the core that is free first. With a fractional number of cores each of
// the ceil(cores) servers runs at cores/ceil(cores) of a core.
type Cores struct {
	free    []time.Duration
	stretch float64
}

// NewCores are c's apiServer.cores, all free from the start.
func NewCores(c *Calibration) *Cores {
	k := max(1, int(math.Ceil(c.APIServer.Cores.Value)))
	return &Cores{free: make([]time.Duration, k), stretch: float64(k) / c.APIServer.Cores.Value}
}

// Serve hands cpu of work over at time at and returns when it is done.
func (k *Cores) Serve(at, cpu time.Duration) time.Duration {
	s := 0
	for i, f := range k.free {
		if f < k.free[s] {
			s = i
		}
	}
	end := max(at, k.free[s]) + time.Duration(float64(cpu)*k.stretch)
	k.free[s] = end
	return end
}

// Reset frees every core from at (a simulator's hub restart keeps the API server, but a new
// run starts empty).
func (k *Cores) Reset(at time.Duration) {
	for i := range k.free {
		k.free[i] = at
	}
}

// WriteCPU is the API server's CPU for one write of cost, with everything watching.
func (c *Calibration) WriteCPU(cost Constant) time.Duration {
	return time.Duration(float64(ms(cost)) * c.APIServer.Watched.Value)
}

// RoundTrip is a write's time beyond its CPU.
func (c *Calibration) RoundTrip() time.Duration { return ms(c.APIServer.RoundTrip) }

// DecisionCPU is the hub's CPU for a decision handling n bindings.
func (c *Calibration) DecisionCPU(n int) time.Duration {
	return ms(c.Hub.CPUPerDecision) + time.Duration(n)*ms(c.Hub.CPUPerBinding)
}

// HubCPUPerWrite is the hub's CPU per binding of a decision that handles bindings and writes
// writes, spread over its writes: the hub spends it beside them (building each object, its
// informers decoding each watch event, the expectations), not before the first, which would
// delay one placement's first binding by the CPU of all of them (reports/accuracy.md). The
// bench's model and the simulator's hub both charge it this way.
func (c *Calibration) HubCPUPerWrite(bindings, writes int) time.Duration {
	if writes <= 0 {
		return 0
	}
	return time.Duration(bindings) * ms(c.Hub.CPUPerBinding) / time.Duration(writes)
}

// Write is one write a decision makes: its kind (as the hub's metrics name it) and cost.
type Write struct {
	Kind string
	Cost Constant
}

// DecisionWrites is what a decision of the named controller writes when it handles n
// bindings, as prod/hub's decisions of that controller do when the change is new: the
// simulator's controllers are split as the hub's controllers are, so it charges each
// decision the writes of its part of the hub's flush.
func (c *Calibration) DecisionWrites(controller string, n int) []Write {
	a := c.APIServer
	rep := func(w Write, n int) []Write {
		out := make([]Write, n)
		for i := range out {
			out[i] = w
		}
		return out
	}
	switch controller {
	case "membership":
		return []Write{{"MemberCluster update-status", a.HeartbeatWrite}}
	case ctrlPlacementWide:
		return []Write{{writePlacement, a.SnapshotCreate}, {writePolicySnapshot, a.SnapshotCreate},
			{writePolicyStatus, a.PlacementStatus}, {writeResourceSnapshot, a.SnapshotCreate}}
	case "scheduler":
		return rep(Write{writeBindingCreate, a.BindingCreate}, n)
	case ctrlRollout:
		return append(rep(Write{writeBindingStatus, a.BindingStatus}, n), Write{writePlacementStatus, a.PlacementStatus})
	case "work-generator":
		return []Write{{writeWorkCreate, a.WorkCreate}, {writeBindingStatus, a.BindingStatus}}
	default: // eviction, staged update: their object's status
		return []Write{{"status", a.PlacementStatus}}
	}
}
