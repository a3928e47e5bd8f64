package status

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Input is everything one status aggregation reads.
type Input struct {
	// Generation is the placement's metadata.generation; every condition written names it.
	Generation int64
	// RolloutStrategy is spec.strategy.type; empty means RollingUpdate.
	RolloutStrategy placement.RolloutStrategyType
	// ApplyStrategy is spec.strategy.applyStrategy.type (empty means the default). It picks
	// the condition chain.
	ApplyStrategy placement.ApplyType
	// PlacementType is the policy's type; empty means PickAll.
	PlacementType placement.PlacementType
	// Wanted is the number of clusters the policy asks for: numberOfClusters for PickN,
	// len(clusterNames) for PickFixed. Ignored for PickAll (scheduler.Plan.Wanted is -1).
	Wanted int
	// Scheduling is what the scheduler recorded on the latest policy snapshot.
	Scheduling Scheduling
	// Bindings are the placement's bindings, in any state and any order. Not modified.
	Bindings []*placement.Binding
	// LatestResourceSnapshot names the leading snapshot of the latest resource snapshot
	// group. A binding naming another one has not rolled out the latest resources. Empty
	// disables that check.
	LatestResourceSnapshot string
	// ResourceIndex is the latest resource snapshot's index, reported as
	// observedResourceIndex; negative when the placement has no resource snapshot yet.
	ResourceIndex int
	// SelectedResources is reported as is (CRP-SEL-STATUS).
	SelectedResources []placement.ResourceIdentifier
	// ResourceSnapshots maps the leading snapshot name of each kept resource snapshot index
	// to its index and the resources it selects. Under External, a cluster's
	// observedResourceIndex is the index of its binding's snapshot, and when every cluster
	// holds one older index the placement reports that index's resources. A name missing
	// here counts as no index.
	ResourceSnapshots map[string]SnapshotRef
	// Previous is the placement's current status; a condition whose status does not change
	// keeps its lastTransitionTime. The zero Status means none.
	Previous Status
	Now      time.Time
}

// SnapshotRef is one kept resource snapshot index.
type SnapshotRef struct {
	Index    int
	Selected []placement.ResourceIdentifier
}

// Scheduling is the latest policy snapshot's status.
type Scheduling struct {
	// Condition is the snapshot's Scheduled condition; nil until the scheduler has decided.
	Condition *condition.Condition
	// ObservedPlacementGeneration is the placement generation the scheduler decided for
	// (the snapshot's observedCRPGeneration). A decision for an older generation (for
	// instance before a numberOfClusters change) is pending.
	ObservedPlacementGeneration int64
	// Decisions are the snapshot's targetClusters: selected clusters and, after them or not,
	// unselected ones with their reasons, most insightful first (scheduler.Plan.Decisions).
	Decisions []placement.ClusterDecision
}

// Status is ClusterResourcePlacementStatus.
type Status struct {
	SelectedResources     []placement.ResourceIdentifier `json:"selectedResources,omitempty"`
	ObservedResourceIndex string                         `json:"observedResourceIndex,omitempty"`
	PlacementStatuses     []ClusterStatus                `json:"placementStatuses,omitempty"`
	Conditions            []condition.Timed              `json:"conditions,omitempty"`
}

// ClusterStatus is one placementStatuses entry (ResourcePlacementStatus). An entry without
// ClusterName stands for a cluster the policy wants but the scheduler could not find.
type ClusterStatus struct {
	ClusterName string `json:"clusterName,omitempty"`
	// ObservedResourceIndex is the resource snapshot index the entry's conditions describe:
	// the latest index, or under External the index of the cluster's binding; empty while the
	// cluster has no binding (or, under External, a binding without resources yet).
	ObservedResourceIndex              string                       `json:"observedResourceIndex,omitempty"`
	ApplicableResourceOverrides        []placement.NamespacedName   `json:"applicableResourceOverrides,omitempty"`
	ApplicableClusterResourceOverrides []string                     `json:"applicableClusterResourceOverrides,omitempty"`
	FailedPlacements                   []placement.FailedPlacement  `json:"failedPlacements,omitempty"`
	DriftedPlacements                  []placement.DriftedPlacement `json:"driftedPlacements,omitempty"`
	DiffedPlacements                   []placement.DiffedPlacement  `json:"diffedPlacements,omitempty"`
	Conditions                         []condition.Timed            `json:"conditions"`
}

// Placement aggregates a placement's status from its scheduling decision and its bindings.
//
// The placement's Scheduled condition copies the policy snapshot's (Unknown/SchedulePending
// while the scheduler has not decided for this generation, in which case nothing else is
// reported). Each selected cluster gets an entry, sorted by name: Scheduled from its cluster
// decision, then the rollout chain from its binding's conditions, stopping after the first
// condition that is not True. PickN and PickFixed placements short of clusters get one entry
// without a cluster name per missing cluster, explained by an unselected decision. The
// placement-level chain is False if any cluster is False, else Unknown if any is Unknown,
// else True, each counting the clusters concerned, and it stops at the first link that is not
// True. With no selected cluster only Scheduled is reported.
func Placement(in Input) Status {
	out := Status{SelectedResources: in.SelectedResources}
	if in.ResourceIndex >= 0 {
		out.ObservedResourceIndex = strconv.Itoa(in.ResourceIndex)
	}
	a := aggregator{in: in, gen: in.Generation, now: in.Now}

	sched := in.Scheduling
	if sched.Condition == nil || sched.Condition.Status == metav1.ConditionUnknown ||
		sched.ObservedPlacementGeneration < in.Generation {
		out.Conditions = []condition.Timed{a.stamp(unknown(TypePlacementScheduled, ReasonSchedulePending, MessageSchedulePending), in.Previous.Conditions)}
		return out
	}
	scheduled := *sched.Condition
	scheduled.Type = TypePlacementScheduled
	out.Conditions = []condition.Timed{a.stamp(scheduled, in.Previous.Conditions)}

	var selected, unselected []placement.ClusterDecision
	for _, d := range sched.Decisions {
		if d.Selected {
			selected = append(selected, d)
		} else {
			unselected = append(unselected, d)
		}
	}
	slices.SortStableFunc(selected, func(x, y placement.ClusterDecision) int { return cmp.Compare(x.ClusterName, y.ClusterName) })

	chain := chainFor(in.ApplyStrategy)
	// counts[i][s] is how many clusters reported status s for chain link i.
	counts := make([]map[metav1.ConditionStatus]int, len(chain))
	for i := range counts {
		counts[i] = map[metav1.ConditionStatus]int{}
	}
	allNoOverride := true
	bindings := a.liveBindings()
	for _, d := range selected {
		cs, reached := a.cluster(d, bindings[d.ClusterName], chain)
		for i, s := range reached {
			counts[i][s]++
		}
		if c, ok := condition.Find(cs.Conditions, condition.TypeOverridden); ok && c.Reason != ReasonNoOverrideSpecified {
			allNoOverride = false
		}
		out.PlacementStatuses = append(out.PlacementStatuses, cs)
	}
	out.PlacementStatuses = append(out.PlacementStatuses, a.unfilled(len(selected), unselected)...)

	if len(selected) == 0 {
		return out
	}
	if in.RolloutStrategy == placement.ExternalStrategy {
		if c, stop := a.external(&out, len(selected)); stop {
			out.Conditions = append(out.Conditions, a.stamp(c, in.Previous.Conditions))
			return out
		}
	}
	for i, s := range chain {
		var c condition.Condition
		switch {
		case counts[i][metav1.ConditionFalse] > 0:
			c = condition.False(s.placementType, s.falseReason, fmt.Sprintf(s.falseFormat, counts[i][metav1.ConditionFalse]))
		case counts[i][metav1.ConditionUnknown] > 0:
			c = unknown(s.placementType, s.unknownReason, fmt.Sprintf(s.unknownFormat, counts[i][metav1.ConditionUnknown]))
		case s.clusterType == condition.TypeOverridden && allNoOverride:
			c = condition.True(s.placementType, ReasonNoOverrideSpecified, MessageNoOverride)
		default:
			// Every cluster reached this link True: a cluster stopping earlier made an earlier
			// link False or Unknown, which ended the chain there.
			c = condition.True(s.placementType, s.trueReason, fmt.Sprintf(s.trueFormat, len(selected)))
		}
		out.Conditions = append(out.Conditions, a.stamp(c, in.Previous.Conditions))
		if c.Status != metav1.ConditionTrue {
			break
		}
	}
	return out
}

type aggregator struct {
	in  Input
	gen int64
	now time.Time
}

// stamp gives c the placement generation and keeps the previous lastTransitionTime of its
// type when its status did not change.
func (a *aggregator) stamp(c condition.Condition, prev []condition.Timed) condition.Timed {
	t := a.now
	if p, ok := condition.Find(prev, c.Type); ok && p.Status == c.Status {
		t = p.LastTransitionTime
	}
	return condition.Timed{Condition: c, ObservedGeneration: a.gen, LastTransitionTime: t}
}

// liveBindings maps each cluster to its live (Scheduled or Bound, not deleting) binding; if
// a corrupted store holds several, the one with the smallest name, so the result does not
// depend on the order given.
func (a *aggregator) liveBindings() map[string]*placement.Binding {
	m := make(map[string]*placement.Binding, len(a.in.Bindings))
	for _, b := range a.in.Bindings {
		if b == nil || !b.Live() {
			continue
		}
		if o, ok := m[b.TargetCluster]; !ok || b.Name < o.Name {
			m[b.TargetCluster] = b
		}
	}
	return m
}

// previous returns the previous entry of a cluster.
func (a *aggregator) previous(cluster string) []condition.Timed {
	for _, ps := range a.in.Previous.PlacementStatuses {
		if ps.ClusterName == cluster && cluster != "" {
			return ps.Conditions
		}
	}
	return nil
}

// cluster builds a selected cluster's entry and returns the statuses it reached along the
// chain (shorter than the chain when a link is not True).
func (a *aggregator) cluster(d placement.ClusterDecision, b *placement.Binding, chain []stage) (ClusterStatus, []metav1.ConditionStatus) {
	prev := a.previous(d.ClusterName)
	cs := ClusterStatus{ClusterName: d.ClusterName}
	emit := func(c condition.Condition) {
		cs.Conditions = append(cs.Conditions, a.stamp(c, prev))
	}

	// The binding's decision is the scheduler's latest word on the cluster's scores; the
	// snapshot's stands in while the binding does not exist yet.
	dec := d
	if b != nil && b.ClusterDecision.Selected {
		dec = b.ClusterDecision
	}
	var score placement.ClusterScore
	if dec.ClusterScore != nil {
		score = *dec.ClusterScore
	}
	emit(condition.True(condition.TypeScheduled, ReasonScheduled, fmt.Sprintf(
		"Successfully scheduled resources for placement in %q (affinity score: %d, topology spread score: %d): %s",
		d.ClusterName, score.AffinityScore, score.TopologySpreadScore, dec.Reason)))

	var reached []metav1.ConditionStatus
	external := a.in.RolloutStrategy == placement.ExternalStrategy
	unknownAt := func(s stage) {
		msg := s.clusterUnknown
		if external && s.clusterType == condition.TypeRolloutStarted {
			msg = MessageExternalRolloutPending
		}
		emit(unknown(s.clusterType, s.unknownReason, msg))
		reached = append(reached, metav1.ConditionUnknown)
	}
	if b == nil {
		// Picked, but the binding is not written yet (or is being replaced).
		unknownAt(chain[0])
		return cs, reached
	}
	if external {
		// A staged update run decides which index each cluster gets: the entry describes
		// the binding's own index, whatever the latest is.
		if ref, ok := a.in.ResourceSnapshots[b.ResourceSnapshotName]; ok && b.ResourceSnapshotName != "" {
			cs.ObservedResourceIndex = strconv.Itoa(ref.Index)
		}
	} else if a.in.ResourceIndex >= 0 {
		cs.ObservedResourceIndex = strconv.Itoa(a.in.ResourceIndex)
	}
	stale := !external && a.in.LatestResourceSnapshot != "" && b.ResourceSnapshotName != a.in.LatestResourceSnapshot
	for i, s := range chain {
		bc, ok := condition.Find(b.Conditions, s.clusterType)
		current := ok && bc.ObservedGeneration == b.Generation &&
			(bc.Status == metav1.ConditionTrue || bc.Status == metav1.ConditionFalse)
		if i == 0 && stale {
			// The binding still holds older resources. A False RolloutStarted means the
			// strategy holds it back; anything else means the rollout controller has not
			// decided yet.
			if current && bc.Status == metav1.ConditionFalse {
				emit(condition.False(s.clusterType, condition.ReasonRolloutNotStartedYet, MessageRolloutBlocked))
				reached = append(reached, metav1.ConditionFalse)
			} else {
				unknownAt(s)
			}
			return cs, reached
		}
		if !current {
			unknownAt(s)
			return cs, reached
		}
		emit(bc.Condition)
		reached = append(reached, bc.Status)
		switch {
		case s.clusterType == condition.TypeRolloutStarted && bc.Status == metav1.ConditionTrue:
			cs.ApplicableClusterResourceOverrides = slices.Clone(b.ClusterResourceOverrideSnapshots)
			cs.ApplicableResourceOverrides = slices.Clone(b.ResourceOverrideSnapshots)
		case (s.clusterType == condition.TypeApplied || s.clusterType == condition.TypeAvailable) && bc.Status == metav1.ConditionFalse:
			fp := b.FailedPlacements
			if len(fp) > placement.MaxFailedPlacements {
				fp = fp[:placement.MaxFailedPlacements]
			}
			cs.FailedPlacements = slices.Clone(fp)
		}
		if s.clusterType == condition.TypeApplied || s.clusterType == condition.TypeDiffReported {
			// Drifts and diffs are reported for a cluster that has the latest resources
			// and whose agent reported on them, whatever the verdict (APPLY-WHENTOAPPLY,
			// APPLY-REPORTDIFF, APPLY-TAKEOVER).
			cs.DriftedPlacements = placement.CopyDrifted(b.DriftedPlacements)
			cs.DiffedPlacements = placement.CopyDiffed(b.DiffedPlacements)
		}
		if bc.Status == metav1.ConditionFalse {
			break
		}
	}
	return cs, reached
}

// external decides an External placement's RolloutStarted before the usual aggregation,
// as KubeFleet's current release does: while the selected clusters do not all observe one
// resource snapshot index, or observe none, RolloutStarted is Unknown with
// ReasonRolloutControlledByExternalController, the placement reports no observed index and
// no selected resources, and nothing after RolloutStarted (stop). When they all observe one
// index, the placement reports it (with that index's resources), and RolloutStarted is still
// Unknown with that reason while a cluster's own RolloutStarted is Unknown.
func (a *aggregator) external(out *Status, selected int) (condition.Condition, bool) {
	entries := out.PlacementStatuses[:selected]
	observed := entries[0].ObservedResourceIndex
	for _, cs := range entries[1:] {
		if cs.ObservedResourceIndex != observed {
			out.ObservedResourceIndex, out.SelectedResources = "", []placement.ResourceIdentifier{}
			return unknown(TypePlacementRolloutStarted, ReasonRolloutControlledByExternalController, MessageExternalMixedIndexes), true
		}
	}
	if observed == "" {
		out.ObservedResourceIndex, out.SelectedResources = "", []placement.ResourceIdentifier{}
		return unknown(TypePlacementRolloutStarted, ReasonRolloutControlledByExternalController, MessageExternalNoIndex), true
	}
	if observed != out.ObservedResourceIndex {
		out.ObservedResourceIndex = observed
		for _, ref := range a.in.ResourceSnapshots {
			if strconv.Itoa(ref.Index) == observed {
				out.SelectedResources = slices.Clone(ref.Selected)
			}
		}
	}
	for _, cs := range entries {
		if c, ok := condition.Find(cs.Conditions, condition.TypeRolloutStarted); !ok || c.Status == metav1.ConditionUnknown {
			return unknown(TypePlacementRolloutStarted, ReasonRolloutControlledByExternalController, fmt.Sprintf(MessageExternalClusterUnknown, cs.ClusterName)), true
		}
	}
	return condition.Condition{}, false
}

// unfilled builds the entries of clusters a PickN or PickFixed policy wants but the
// scheduler could not find: as many as are missing, at most one per unselected decision, in
// the decisions' order.
func (a *aggregator) unfilled(selected int, unselected []placement.ClusterDecision) []ClusterStatus {
	t := a.in.PlacementType
	if t != placement.PickN && t != placement.PickFixed {
		return nil
	}
	n := min(a.in.Wanted-selected, len(unselected))
	if n <= 0 {
		return nil
	}
	// Previous unfilled entries, matched by position, keep their transition times.
	var prev [][]condition.Timed
	for _, ps := range a.in.Previous.PlacementStatuses {
		if ps.ClusterName == "" {
			prev = append(prev, ps.Conditions)
		}
	}
	out := make([]ClusterStatus, n)
	for i, d := range unselected[:n] {
		var p []condition.Timed
		if i < len(prev) {
			p = prev[i]
		}
		c := condition.False(condition.TypeScheduled, ReasonScheduleFailed, d.ClusterName+" is not selected: "+d.Reason)
		out[i] = ClusterStatus{Conditions: []condition.Timed{a.stamp(c, p)}}
	}
	return out
}
