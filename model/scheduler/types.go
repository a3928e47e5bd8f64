// types.go holds the package's API: a decision's Input and Plan, the Options, and the
// framework's decision reasons (the plugins' names and reasons are in plugins.go).

package scheduler

import (
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Input is everything one scheduling decision reads.
type Input struct {
	// Snapshot is the placement's latest policy snapshot. Its Placement field names the placement.
	Snapshot *placement.PolicySnapshot
	// Members is the whole fleet; members of another kind than TargetKind are ignored.
	Members []*member.Member
	// Bindings are the placement's bindings, in any state.
	Bindings []*placement.Binding
	Now      time.Time
	// TargetKind is the kind of member the placement targets; empty means clusters.
	TargetKind member.Kind
	// MembersVersion, when not zero, is the store's version of Members: a number it changes
	// whenever the list changes (a member added, removed or replaced) or a member in it
	// changes in anything but its agent status: its name, kind, labels, properties,
	// resources, taints or Leaving. Agent status (heartbeats, joined, health) is read at
	// every decision and need not change it. Zero means the store keeps no version: the
	// Scheduler then looks at every member to find what changed.
	MembersVersion uint64
	// BindingsVersion, when not zero, is the store's version of Bindings: a number it
	// changes whenever a binding of the placement is created, deleted or changed in any
	// way. Zero means the store keeps no version.
	BindingsVersion uint64
	// Status, when not nil, is the store's feed of agent status writes: the store calls
	// Status.Changed(m) after every write of a member's Agent. The Scheduler then keeps each
	// member's status (and Leaving) as a column of its index, re-reading a member only when
	// the feed names it, the index was brought up to date (MembersVersion moved, or no
	// versions), or the feed forgot too much. Nil means status is read from every member
	// the decision needs, at every decision.
	Status *member.StatusFeed
}

// Options tune a Scheduler. The zero value means upstream's defaults.
type Options struct {
	Eligibility member.EligibilityConfig
	// MaxDecisions caps the cluster decisions reported (the policy snapshot's targetClusters
	// holds at most 1000). Every selected cluster is always reported.
	MaxDecisions int
}

// DefaultMaxDecisions is the API limit on a policy snapshot's targetClusters.
const DefaultMaxDecisions = 1000

// Change is one binding write the plan asks for: the binding as it must be afterwards, and why.
type Change struct {
	Binding placement.Binding
	Reason  string
}

// Plan is the outcome of one decision. It is read-only: a later decision of the same
// placement may return the same slices (a steady re-run, see Input.BindingsVersion).
type Plan struct {
	// Create holds new bindings, in state Scheduled, sorted by cluster.
	Create []Change
	// Update holds existing bindings picked again: obsolete ones moved to the latest policy
	// snapshot, and Unscheduled ones restored to their previous state. Sorted by cluster.
	Update []Change
	// Unschedule holds bindings to mark Unscheduled, sorted by cluster.
	Unschedule []Change
	// Decisions lists every selected cluster (by name), then unselected ones, most insightful
	// first (scored but not picked by rank, then filtered by name), up to MaxDecisions.
	Decisions []placement.ClusterDecision
	// Scheduled is the condition for the policy snapshot and the placement.
	Scheduled condition.Condition
	// Wanted is the number of clusters the policy asks for, or -1 for PickAll.
	Wanted int
	// Placed is the number of clusters holding a Scheduled or Bound binding once the plan is applied.
	Placed int
}

// Empty reports whether the plan writes no binding.
func (p *Plan) Empty() bool {
	return len(p.Create) == 0 && len(p.Update) == 0 && len(p.Unschedule) == 0
}

// Decision reasons (Appendix A of the KubeFleet spec).
const (
	ReasonPicked        = "picked by scheduling policy"
	ReasonNotHighEnough = "cluster does not score high enough"
	ReasonNotFound      = "specified cluster is not found"
)
