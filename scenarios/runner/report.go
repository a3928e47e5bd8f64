package runner

import (
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/sim"
)

// Report is the result of one scenario run.
type Report struct {
	Scenario      string              `json:"scenario"`
	File          string              `json:"file"`
	Seed          uint64              `json:"seed"`
	TraceHash     string              `json:"traceHash"`
	SimulatedTime Seconds             `json:"simulatedTime"`
	Events        uint64              `json:"events"`
	Passed        bool                `json:"passed"`
	Expectations  []ExpectationResult `json:"expectations"`
	Invariants    []InvariantResult   `json:"invariants"`
	Placements    []PlacementReport   `json:"placements"`
	Members       []MemberReport      `json:"members"`
	// MemberGroups sums up the members of each `members` entry at the end, for fleets too
	// large to read member by member.
	MemberGroups []MemberGroupSummary `json:"memberGroups"`
	Evictions    []ObjectReport       `json:"evictions,omitempty"`
	UpdateRuns   []ObjectReport       `json:"updateRuns,omitempty"`
	Units        []sim.UnitStatus     `json:"units,omitempty"`
	// Measures are what the run measured whether or not an expectation asks (absent with
	// Options.NoMeasures).
	Measures *Measures       `json:"measures,omitempty"`
	Timeline []TimelineEntry `json:"timeline"`
	// SkippedSteps and SkippedExpectations count the timeline steps and expectations after
	// the end of a run shortened by Options.Until, which were not run or checked.
	SkippedSteps        int `json:"skippedSteps,omitempty"`
	SkippedExpectations int `json:"skippedExpectations,omitempty"`
}

// ExpectationResult is one checked expectation.
type ExpectationResult struct {
	Line        int     `json:"line"`
	At          Seconds `json:"at"`
	Description string  `json:"description"`
	Passed      bool    `json:"passed"`
	Detail      string  `json:"detail"`
	// Measured: a rollout, peakUnavailable or unhealthy expectation, measured over the run
	// and checked at its end (At).
	Measured bool `json:"measured,omitempty"`
}

// InvariantResult says whether an `always` invariant held after every event, and if not,
// when it first broke.
type InvariantResult struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	At     string `json:"at,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Condition is a condition without its timestamp, as reports compare them.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// PlacementReport is a placement at the end of the run.
type PlacementReport struct {
	Name           string `json:"name"`
	PolicySnapshot string `json:"policySnapshot,omitempty"`
	// ResourceSnapshot is the latest resource snapshot (what the rollout rolls out).
	ResourceSnapshot      string                `json:"resourceSnapshot,omitempty"`
	Wanted                int                   `json:"wanted"`
	Clusters              []string              `json:"clusters"`
	Conditions            []Condition           `json:"conditions"`
	ObservedResourceIndex string                `json:"observedResourceIndex,omitempty"`
	PlacementStatuses     []ClusterStatusReport `json:"placementStatuses,omitempty"`
}

// ClusterStatusReport is one entry of a placement's placementStatuses.
type ClusterStatusReport struct {
	ClusterName      string                      `json:"clusterName,omitempty"`
	Conditions       []Condition                 `json:"conditions"`
	FailedPlacements []placement.FailedPlacement `json:"failedPlacements,omitempty"`
}

// MemberGroupSummary counts a group's members at the end of the run: Group is the `members`
// entry (its first and last names), or "other" for members MemberCluster manifests created.
type MemberGroupSummary struct {
	Group   string `json:"group"`
	Members int    `json:"members"`
	Joined  int    `json:"joined"`
	Healthy int    `json:"healthy"`
	Tainted int    `json:"tainted"`
	Failed  int    `json:"failed"`
}

// ObjectReport is an eviction or a staged update run at the end of the run.
type ObjectReport struct {
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions"`
}

// MemberReport is a member at the end of the run.
type MemberReport struct {
	Name             string         `json:"name"`
	Kind             member.Kind    `json:"kind"`
	Conditions       []Condition    `json:"conditions"`
	Taints           []member.Taint `json:"taints"`
	Eligible         bool           `json:"eligible"`
	IneligibleReason string         `json:"ineligibleReason,omitempty"`
	Failure          string         `json:"failure,omitempty"`
	Leaving          bool           `json:"leaving,omitempty"`
}

// TimelineEntry is one notable event, or several of the same kind and detail at the same
// instant (five members joining at once is one entry with five subjects).
type TimelineEntry struct {
	At       Seconds  `json:"at"`
	Kind     string   `json:"kind"`
	Subjects []string `json:"subjects,omitempty"`
	// MoreSubjects counts the subjects beyond MaxSubjects, left out of Subjects.
	MoreSubjects int    `json:"moreSubjects,omitempty"`
	Detail       string `json:"detail,omitempty"`
}

func conditions(cs []sim.Condition) []Condition {
	out := make([]Condition, 0, len(cs))
	for _, c := range cs {
		out = append(out, Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
	}
	return out
}
