package hub

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/status"
)

// MemberCluster is a MemberCluster with what the hub created for it: its reserved
// namespace and InternalMemberCluster. Member carries the spec and the agent's status.
type MemberCluster struct {
	Member          *member.Member
	NamespaceExists bool
	IMC             *membership.IMCState
	Conditions      []condition.Timed
	Created         time.Time
	// HealthyReported caches "the Healthy condition says MemberClusterHealthy", so a
	// heartbeat can tell in O(1) whether the hub has anything to update.
	HealthyReported bool
}

// Placement is a ClusterResourcePlacement with its snapshots and status.
type Placement struct {
	CRP        placement.ClusterResourcePlacement
	Generation int64
	Deleting   bool
	// PolicySnapshots are kept oldest first; the last is the latest.
	PolicySnapshots []*placement.PolicySnapshot
	// Decisions are the latest policy snapshot's targetClusters; Conditions hold the
	// scheduler's Scheduled condition until the status is aggregated.
	Decisions  []placement.ClusterDecision
	Conditions []condition.Timed
	// Scheduled is the scheduler's latest Scheduled condition, ScheduledGeneration the
	// placement generation it decided for and ObservedClusterCount how many clusters it
	// placed.
	Scheduled            *condition.Condition
	ScheduledGeneration  int64
	ObservedClusterCount int
	// Status is the aggregated placement status.
	Status status.Status

	Selected       []*unstructured.Unstructured
	SelectionError error
	// ResourceSnapshots are kept oldest first; the last is the latest.
	ResourceSnapshots []*resources.Snapshot
	// Mirror is the ClusterResourcePlacementStatus a NamespaceAccessible placement keeps
	// in its namespace, or nil when there is none (MirrorStatus decides it).
	Mirror *StatusMirror
}

// StatusMirror is a ClusterResourcePlacementStatus: the placement's status, without its
// StatusSynced condition, in an object of the placement's name in Namespace.
type StatusMirror struct {
	Namespace string
	Status    status.Status
}

// LatestPolicySnapshot is the latest policy snapshot, or nil.
func (p *Placement) LatestPolicySnapshot() *placement.PolicySnapshot {
	if len(p.PolicySnapshots) == 0 {
		return nil
	}
	return p.PolicySnapshots[len(p.PolicySnapshots)-1]
}

// LatestResources is the latest resource snapshot, or nil.
func (p *Placement) LatestResources() *resources.Snapshot {
	if len(p.ResourceSnapshots) == 0 {
		return nil
	}
	return p.ResourceSnapshots[len(p.ResourceSnapshots)-1]
}

// ResourceSnapshotByName finds a kept resource snapshot.
func (p *Placement) ResourceSnapshotByName(name string) *resources.Snapshot {
	for _, r := range p.ResourceSnapshots {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// HistoryLimit is revisionHistoryLimit with its default.
func (p *Placement) HistoryLimit() int {
	if l := p.CRP.Spec.RevisionHistoryLimit; l != nil {
		return int(*l)
	}
	return placement.DefaultHistoryLimit
}

// SelectedIdentifiers names the selected resources.
func (p *Placement) SelectedIdentifiers() []placement.ResourceIdentifier {
	ids := make([]placement.ResourceIdentifier, 0, len(p.Selected))
	for _, o := range p.Selected {
		ids = append(ids, resources.Identifier(o))
	}
	return ids
}

// Work is a Work in a member's reserved namespace: the overridden manifests of one part of
// a binding's resource snapshot, or the objects of one envelope, at one binding generation.
// A binding has one Work per snapshot part and one per envelope (WorkPlan).
type Work struct {
	Name       string
	Binding    string
	Placement  string
	Member     string
	Generation int64
	Manifests  []*unstructured.Unstructured
	// Envelopes[i] names the envelope Manifests[i] came in, or is nil.
	Envelopes []*placement.NamespacedName
	// Abandon is the placement's strategy.deleteStrategy (Abandon): when the Work goes
	// because its placement is deleted, the member agent leaves what it applied on the
	// member, removing only its ownership.
	Abandon bool
	// ReportBack is the placement's strategy.reportBackStrategy: under Mirror the member
	// agent reports each applied object's status in the Work's status.
	ReportBack *placement.ReportBackStrategy
}
