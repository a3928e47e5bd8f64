package timing

import (
	"math"
	"slices"
	"time"
)

// Result is what `fleet bench hub` measured or `fleetsim bench hub` predicted: one JSON shape
// for both, so that the two can be compared field by field. A prediction leaves the fields
// the model has no part in (CPU and memory of the processes, the hub's waits) at zero.
type Result struct {
	// Source says where the figures come from: "measured" or "predicted".
	Source     string `json:"source"`
	Members    int    `json:"members"`
	Placements int    `json:"placements"`
	Pick       int    `json:"pick"`
	Concurrent int    `json:"concurrent"`
	// JoinSeconds: from starting the hub to every member Joined and Healthy (measured only).
	JoinSeconds float64 `json:"joinSeconds"`
	// FirstJoinSeconds: from starting the hub to the first member Joined and Healthy
	// (measured only; the calibration's hub.joinBase).
	FirstJoinSeconds float64 `json:"firstJoinSeconds,omitempty"`
	// Available: per placement, creation to ClusterResourcePlacementAvailable.
	Available Percentiles `json:"availableSeconds"`
	// Steps split Available: per step (StepNames, in order), when after its creation a
	// placement had all its bindings made, all bound (Scheduled), all Works made, all Works
	// reported available by the agents (Applied).
	Steps []Step `json:"steps,omitempty"`
	// PlacementPhaseSeconds: from the first creation to the last placement available.
	PlacementPhaseSeconds float64 `json:"placementPhaseSeconds"`
	// Decisions and APICalls the hub made during the placement phase.
	Decisions float64 `json:"decisions"`
	// ServedInline: queued decisions skipped because a placement-wide decision had run
	// their controller for their key already (not in Decisions).
	ServedInline float64 `json:"servedInline,omitempty"`
	// DecisionsByController splits Decisions by the controller that made them.
	DecisionsByController map[string]float64 `json:"decisionsByController,omitempty"`
	// Retries: decisions taken again after a Conflict, AlreadyExists or NotFound.
	Retries float64 `json:"retries"`
	// WaitSeconds: the decisions' total wait for the cache to hold the hub's own writes.
	WaitSeconds float64 `json:"expectationWaitSeconds"`
	// MeanDecisionSeconds: a placement decision's mean time from reading to written.
	MeanDecisionSeconds float64 `json:"meanDecisionSeconds"`
	// MeanDecisionSecondsByController splits MeanDecisionSeconds by controller.
	MeanDecisionSecondsByController map[string]float64 `json:"meanDecisionSecondsByController,omitempty"`
	// MeanWaitSecondsByController: how long a decision waited before reading (the cache,
	// its lock, a worker slot), by controller.
	MeanWaitSecondsByController map[string]float64 `json:"meanWaitSecondsByController,omitempty"`
	APICalls                    float64            `json:"apiCalls"`
	APICallsPerDecision         float64            `json:"apiCallsPerDecision"`
	// Writes: the hub's successful writes during the placement phase, by "Kind verb".
	Writes map[string]float64 `json:"writes,omitempty"`
	// WritesPerBinding: all of Writes over the bindings the placements made (pick, or
	// members for PickAll, times placements).
	WritesPerBinding float64 `json:"writesPerBinding,omitempty"`
	Hub              Usage   `json:"hub"`
	APIServer        *Usage  `json:"apiserver,omitempty"`
	Etcd             *Usage  `json:"etcd,omitempty"`
	// SteadyHubCPUPercent: the hub's CPU once everything is done, members heartbeating.
	SteadyHubCPUPercent float64 `json:"steadyHubCPUPercent,omitempty"`
	// RestartSeconds: from a new hub's start (the old one SIGKILLed) until it had decided
	// every placement again and nothing changed for the bench's quiet period.
	RestartSeconds   float64 `json:"restartSeconds,omitempty"`
	RestartDecisions float64 `json:"restartDecisions,omitempty"`
	// RestartServedInline: the restarted hub's queued decisions that placement-wide
	// decisions served inline (not in RestartDecisions).
	RestartServedInline float64 `json:"restartServedInline,omitempty"`
	// RestartFirstDecisionSeconds: from the new hub's start to its first decision about a
	// placement, binding or Work: its informers listing what is stored.
	RestartFirstDecisionSeconds float64 `json:"restartFirstDecisionSeconds,omitempty"`
}

// Usage is a process's CPU and memory over a phase.
type Usage struct {
	CPUSeconds float64 `json:"cpuSeconds"`
	CPUPercent float64 `json:"cpuPercentOfOneCore"`
	RSSMiB     float64 `json:"rssMiB"`
}

// Percentiles of durations, in seconds.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Step is one step of the placements' way to Available.
type Step struct {
	Name    string      `json:"name"`
	Seconds Percentiles `json:"seconds"`
}

// The steps of a placement's way to Available, in order, as both commands name them.
const (
	StepBindingsMade  = "all bindings made"
	StepBindingsBound = "all bindings bound"
	StepWorksMade     = "all Works made"
	StepReported      = "all Works reported available"
)

// StepNames lists the steps in order.
var StepNames = []string{StepBindingsMade, StepBindingsBound, StepWorksMade, StepReported}

// Round2 rounds seconds to hundredths, as the results print them.
func Round2(f float64) float64 { return math.Round(f*100) / 100 }

// PercentilesOf returns the nearest-rank percentiles of ds (all zero for none).
func PercentilesOf(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	s := make([]float64, len(ds))
	sum := 0.0
	for i, d := range ds {
		s[i] = d.Seconds()
		sum += s[i]
	}
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return Round2(s[max(i, 0)])
	}
	return Percentiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: Round2(s[len(s)-1]), Mean: Round2(sum / float64(len(s)))}
}
