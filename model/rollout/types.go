package rollout

import (
	"time"

	"github.com/fleetsim/fleetsim/model/placement"
)

// Input is everything one rollout decision reads.
type Input struct {
	// Placement names the placement; it only appears in explanations.
	Placement string
	// PlacementType is the policy's type; empty means PickAll (the API default).
	PlacementType placement.PlacementType
	// NumberOfClusters is the PickN target (policy numberOfClusters). Ignored otherwise.
	NumberOfClusters int32
	// ClusterNames is the PickFixed list; its length is the target. Ignored otherwise.
	ClusterNames []string
	// Strategy is the placement's spec.strategy: its RollingUpdate settings (nil fields take
	// the defaults 25%, 25%, 60 s) and its ApplyStrategy, which every bound binding must carry.
	Strategy placement.RolloutStrategy
	// Bindings are the placement's bindings, in any state and any order. They are not modified.
	Bindings []*placement.Binding
	// LatestResourceSnapshot names the leading snapshot of the latest resource snapshot
	// group; empty when the placement has none yet.
	LatestResourceSnapshot string
	// Overrides holds, per cluster, the override snapshots a binding on it must carry. A
	// cluster missing from the map gets none. Order within the lists does not matter.
	Overrides map[string]OverrideSnapshots
	Now       time.Time
}

// OverrideSnapshots names the override snapshots that apply to one cluster.
type OverrideSnapshots struct {
	ClusterResourceOverrideSnapshots []string
	ResourceOverrideSnapshots        []placement.NamespacedName
}

// Change is one binding write: the binding as it must be afterwards, and why.
type Change struct {
	Binding placement.Binding
	Reason  string
}

// Hold is a binding that needs a write the decision did not allow yet, and why.
type Hold struct {
	Binding string
	Cluster string
	State   placement.BindingState
	Reason  string
}

// Plan is the outcome of one decision. Every list is sorted by target cluster, then binding
// name. Drivers apply Bind before Delete.
type Plan struct {
	// Bind holds Scheduled bindings to bind and stale Bound bindings to update: State Bound,
	// the latest resource snapshot, the cluster's override snapshots, the placement's apply
	// strategy, Generation+1 and RolloutStarted=True.
	Bind []Change
	// Delete holds Unscheduled bindings to delete, as they are.
	Delete []Change
	// Wait holds bindings left as they are whose RolloutStarted condition must be written:
	// False/RolloutNotStartedYet when the rollout strategy blocks them, Unknown while they
	// cannot be decided yet (no resource snapshot, or their cluster's previous binding is
	// still being deleted). A binding whose condition already says so is not listed, so
	// applying a plan and deciding again yields no Wait change.
	Wait []Change
	// Refresh holds up-to-date Bound bindings whose RolloutStarted condition is not True at
	// their generation (for instance after the latest snapshot went back to theirs); only
	// that condition changes.
	Refresh []Change
	// Held lists every binding that needs a write this plan does not make (stale Scheduled
	// or Bound bindings not rolled, Unscheduled bindings not deleted), whether or not its
	// condition changes. It is stable across repeated decisions, for explanations.
	Held []Hold
	// RequeueAfter, when positive, is how long until a binding whose availability is not
	// trackable becomes ready, set only when some binding is held by maxUnavailable and
	// that readiness could free it.
	RequeueAfter time.Duration
	// Budget holds the numbers behind the decision.
	Budget Budget
}

// Budget is the arithmetic of one decision (ROLL-ALGORITHM).
type Budget struct {
	// Target is N (ROLL-TARGET-N).
	Target int
	// MaxUnavailable and MaxSurge are the strategy's values scaled to Target, rounded up.
	MaxUnavailable int
	MaxSurge       int
	// MinAvailable is Target − MaxUnavailable; negative when maxUnavailable exceeds the target.
	MinAvailable int
	// ReadyCount counts ready Bound and Unscheduled bindings, including ready ones being deleted.
	ReadyCount int
	// Leaving counts ready bindings already being deleted (upstream's canBeUnavailable).
	Leaving int
	// CanBeReady counts Bound and Unscheduled bindings whose apply has not failed.
	CanBeReady int
	// MaxToRemove = ReadyCount − Leaving − MinAvailable bounds deletions plus in-place updates.
	// With a target of 0 it is raised to cover every candidate.
	MaxToRemove int
	// MaxToAdd = Target + MaxSurge − CanBeReady bounds Scheduled bindings bound.
	MaxToAdd int
}

// Empty reports whether the plan writes nothing.
func (p *Plan) Empty() bool {
	return len(p.Bind) == 0 && len(p.Delete) == 0 && len(p.Wait) == 0 && len(p.Refresh) == 0
}

// Defaults of spec.strategy.rollingUpdate (ROLL-API).
const (
	DefaultMaxUnavailable           = "25%"
	DefaultMaxSurge                 = "25%"
	DefaultUnavailablePeriodSeconds = 60
)

// RolloutStarted condition texts (STATUS-PER-CLUSTER-REASONS, Appendix A).
const (
	MessageRolloutStarted       = "Detected the new changes on the resources and started the rollout process"
	MessageRolloutNotStartedYet = "The rollout is being blocked by the rollout strategy"
	ReasonRolloutStartedUnknown = "RolloutStartedUnknown"
	MessageRolloutUnknown       = "In the process of deciding whether to roll out the latest resources or not"
)
