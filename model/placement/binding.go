package placement

import (
	"slices"
	"strconv"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
)

// BindingState is where a ClusterResourceBinding is in its life (BIND-STATES).
type BindingState string

const (
	// Scheduled: picked by the scheduler, waiting for the rollout controller.
	Scheduled BindingState = "Scheduled"
	// Bound: rollout started; resources are being deployed.
	Bound BindingState = "Bound"
	// Unscheduled: no longer picked; resources stay until the rollout controller deletes it.
	Unscheduled BindingState = "Unscheduled"
)

// ClusterScore is what the scheduler scored a cluster. TopologySpreadScore is the API's
// priorityScore.
type ClusterScore struct {
	AffinityScore       int32 `json:"affinityScore"`
	TopologySpreadScore int32 `json:"priorityScore"`
}

// ClusterDecision records why a cluster was or was not picked; it appears in binding specs
// and in the policy snapshot status (targetClusters).
type ClusterDecision struct {
	ClusterName  string        `json:"clusterName"`
	Selected     bool          `json:"selected"`
	ClusterScore *ClusterScore `json:"clusterScore,omitempty"`
	Reason       string        `json:"reason"`
	// Plugin names the scheduler plugin that filtered the cluster out, when one did. It is
	// ours, not KubeFleet's: users debugging a placement want to know which rule said no.
	Plugin string `json:"plugin,omitempty"`
}

// Binding is a ClusterResourceBinding: one placement on one cluster.
type Binding struct {
	Name          string
	Placement     string
	TargetCluster string
	State         BindingState
	// PreviousState is the kubernetes-fleet.io/previous-binding-state annotation: the state a
	// binding had before it was unscheduled, restored if its cluster is picked again.
	PreviousState BindingState
	// SchedulingPolicySnapshotName names the policy snapshot that picked the cluster. A
	// Scheduled or Bound binding naming an older snapshot is obsolete.
	SchedulingPolicySnapshotName string
	// ResourceSnapshotName is empty while Scheduled; the rollout controller fills it.
	ResourceSnapshotName string
	ClusterDecision      ClusterDecision
	// Deleting is true once deletion was requested (deletionTimestamp set).
	Deleting bool

	// Generation counts spec changes; conditions name the generation they describe.
	Generation int64
	// ClusterResourceOverrideSnapshots and ResourceOverrideSnapshots name the override
	// snapshots the rollout applied with the resource snapshot.
	ClusterResourceOverrideSnapshots []string
	ResourceOverrideSnapshots        []NamespacedName
	// ApplyStrategy is the placement's apply strategy when the binding was last rolled.
	ApplyStrategy *ApplyStrategy
	// Conditions: RolloutStarted, Overridden, WorkSynchronized, Applied, Available (or
	// DiffReported), as the rollout controller, work generator and member agent report them.
	Conditions []condition.Timed
	// FailedPlacements lists manifests that failed to apply or are not available (≤ 100).
	FailedPlacements []FailedPlacement
	// DriftedPlacements and DiffedPlacements list manifests whose object on the member
	// drifted from, or differs from, the hub manifest (≤ 100 each), as the agent reported.
	DriftedPlacements []DriftedPlacement
	DiffedPlacements  []DiffedPlacement
}

// NamespacedName names a namespaced object.
type NamespacedName struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// ResourceIdentifier names one selected resource (CRP-SEL-STATUS).
type ResourceIdentifier struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Envelope names the envelope object the resource came in, if any.
	Envelope *NamespacedName `json:"envelope,omitempty"`
}

// FailedPlacement is one manifest that failed on a cluster, with the failing condition.
type FailedPlacement struct {
	ResourceIdentifier `json:",inline"`
	Condition          condition.Condition `json:"condition"`
}

// PatchDetail is one field that drifted or differs: its RFC 6901 path and its value on the
// hub and on the member, each empty when the field is absent on that side.
type PatchDetail struct {
	Path          string `json:"path"`
	ValueInMember string `json:"valueInMember,omitempty"`
	ValueInHub    string `json:"valueInHub,omitempty"`
}

// DriftedPlacement is one manifest whose object on the member drifted from what Fleet
// applied (APPLY-WHENTOAPPLY): when the drift was seen last and first, the object's
// generation on the member, and the drifted fields.
type DriftedPlacement struct {
	ResourceIdentifier              `json:",inline"`
	ObservationTime                 time.Time     `json:"observationTime"`
	FirstDriftedObservedTime        time.Time     `json:"firstDriftedObservedTime"`
	TargetClusterObservedGeneration int64         `json:"targetClusterObservedGeneration"`
	ObservedDrifts                  []PatchDetail `json:"observedDrifts,omitempty"`
}

// DiffedPlacement is one manifest that differs from its object on the member
// (APPLY-REPORTDIFF, or a takeover refused under IfNoDiff). TargetClusterObservedGeneration
// is nil when the object does not exist on the member.
type DiffedPlacement struct {
	ResourceIdentifier              `json:",inline"`
	ObservationTime                 time.Time     `json:"observationTime"`
	FirstDiffedObservedTime         time.Time     `json:"firstDiffedObservedTime"`
	TargetClusterObservedGeneration *int64        `json:"targetClusterObservedGeneration,omitempty"`
	ObservedDiffs                   []PatchDetail `json:"observedDiffs,omitempty"`
}

// CopyDrifted deep-copies drifted placements.
func CopyDrifted(in []DriftedPlacement) []DriftedPlacement {
	if in == nil {
		return nil
	}
	out := slices.Clone(in)
	for i := range out {
		out[i].ResourceIdentifier = out[i].ResourceIdentifier.Copy()
		out[i].ObservedDrifts = slices.Clone(out[i].ObservedDrifts)
	}
	return out
}

// CopyDiffed deep-copies diffed placements.
func CopyDiffed(in []DiffedPlacement) []DiffedPlacement {
	if in == nil {
		return nil
	}
	out := slices.Clone(in)
	for i := range out {
		out[i].ResourceIdentifier = out[i].ResourceIdentifier.Copy()
		out[i].ObservedDiffs = slices.Clone(out[i].ObservedDiffs)
		if g := out[i].TargetClusterObservedGeneration; g != nil {
			v := *g
			out[i].TargetClusterObservedGeneration = &v
		}
	}
	return out
}

// Copy is a deep copy of the identifier (its envelope is a pointer).
func (r ResourceIdentifier) Copy() ResourceIdentifier {
	if r.Envelope != nil {
		e := *r.Envelope
		r.Envelope = &e
	}
	return r
}

// MaxFailedPlacements caps failedPlacements per cluster.
const MaxFailedPlacements = 100

// Live reports whether the binding holds its cluster: Scheduled or Bound, not being deleted.
func (b *Binding) Live() bool {
	return !b.Deleting && (b.State == Scheduled || b.State == Bound)
}

// BindingName builds {placement}-{cluster}-{8 hex}. The suffix is a hash of the placement,
// the cluster and an attempt number, so names are deterministic; callers bump attempt when
// the name is taken (for instance by a binding still being deleted).
//
// Names of different clusters never collide: they differ in the cluster part or in length.
func BindingName(placement, cluster string, attempt int) string {
	// FNV-1a (32 bits) of placement, NUL, cluster, NUL and attempt in decimal, folded here
	// rather than through hash/fnv so that naming allocates only the name.
	const offset32, prime32 = 2166136261, 16777619
	var arr [128]byte // the name is built here unless it is longer
	buf := append(append(append(append(arr[:0], placement...), 0), cluster...), 0)
	buf = strconv.AppendInt(buf, int64(attempt), 10)
	h := uint32(offset32)
	for _, c := range buf {
		h = (h ^ uint32(c)) * prime32
	}
	buf = append(append(append(append(buf[:0], placement...), '-'), cluster...), '-')
	for shift := 28; shift >= 0; shift -= 4 {
		buf = append(buf, "0123456789abcdef"[h>>shift&0xf])
	}
	return string(buf)
}

// Present reports whether the placement's resources have reached the cluster: the binding
// is Bound, or Unscheduled after having been Bound.
func (b *Binding) Present() bool {
	return b.State == Bound || (b.State == Unscheduled && b.PreviousState == Bound)
}

// Copy is a deep copy of b, so that a plan never aliases the bindings it was decided from.
func (b *Binding) Copy() Binding {
	c := *b
	c.ClusterResourceOverrideSnapshots = slices.Clone(b.ClusterResourceOverrideSnapshots)
	c.ResourceOverrideSnapshots = slices.Clone(b.ResourceOverrideSnapshots)
	c.ApplyStrategy = b.ApplyStrategy.Copy()
	c.Conditions = slices.Clone(b.Conditions)
	if b.ClusterDecision.ClusterScore != nil {
		s := *b.ClusterDecision.ClusterScore
		c.ClusterDecision.ClusterScore = &s
	}
	if b.FailedPlacements != nil {
		c.FailedPlacements = slices.Clone(b.FailedPlacements)
		for i := range c.FailedPlacements {
			if e := c.FailedPlacements[i].Envelope; e != nil {
				ec := *e
				c.FailedPlacements[i].Envelope = &ec
			}
		}
	}
	c.DriftedPlacements = CopyDrifted(b.DriftedPlacements)
	c.DiffedPlacements = CopyDiffed(b.DiffedPlacements)
	return c
}
