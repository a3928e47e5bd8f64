package hub

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// VersionedStore is a Store that tells the scheduler what changed between decisions: a
// version of Clusters (changed whenever the list or a member's labels, properties,
// resources, taints or leaving change; agent status need not change it) and, per
// placement, a version of its Bindings (changed whenever one is created, replaced or
// deleted). See scheduler.Input.MembersVersion. Optional: a Store without versions makes
// the scheduler look at every member and binding.
type VersionedStore interface {
	ClustersVersion() uint64
	BindingsVersion(placement string) uint64
}

// StatusFeedStore is a Store that records every write of a member's agent status in a
// feed (member.StatusFeed.Changed after the write), so that the scheduler keeps status as
// a column and re-reads only the members the feed names. See scheduler.Input.Status.
// Optional: without it the scheduler reads status from every member a decision needs.
type StatusFeedStore interface {
	StatusFeed() *member.StatusFeed
}

// Store is the hub's API server as the controllers see it. Getters return the stored object
// (nil when absent); a controller that changes one writes it back with the matching Put, so an
// implementation over a real API server can persist it. Lists are sorted by name.
type Store interface {
	MemberStore
	MemberClusterNames() []string
	// Clusters are the members of kind Cluster: the scheduler's input.
	Clusters() []*member.Member

	Placement(name string) *Placement
	PlacementNames() []string
	PutPlacement(p *Placement)
	RemovePlacement(name string)

	Binding(name string) *placement.Binding
	Bindings(placement string) []*placement.Binding
	PutBinding(b placement.Binding)
	DeleteBinding(name string) *placement.Binding

	// HubObjects are the resources placements may select.
	HubObjects() []*unstructured.Unstructured

	// Works are a binding's Works, one per resource snapshot part and one per envelope
	// (WORK-API), sorted by name.
	Works(binding string) []*Work
	PutWork(w *Work)
	// RemoveWork deletes one Work of a binding; DeleteWork deletes all of them.
	RemoveWork(binding, name string)
	DeleteWork(binding string)

	// LatestOverrides are the latest snapshot of every override; NamedOverrides the
	// snapshots a binding recorded.
	LatestOverrides() ([]override.CROSnapshot, []override.ROSnapshot)
	NamedOverrides(cro []string, ro []placement.NamespacedName) ([]override.CROSnapshot, []override.ROSnapshot)

	Eviction(name string) *eviction.Eviction
	// EvictionNames are the evictions held, sorted.
	EvictionNames() []string
	PutEviction(e *eviction.Eviction)
	DisruptionBudget(name string) *eviction.DisruptionBudget

	UpdateRun(name string) *staged.ClusterStagedUpdateRun
	UpdateRunNames() []string
	PutUpdateRun(r *staged.ClusterStagedUpdateRun)
	Strategy(name string) *staged.ClusterStagedUpdateStrategy
	// ApprovalRequests are those labelled for the run.
	ApprovalRequests(run string) []*staged.ClusterApprovalRequest
	PutApprovalRequest(a staged.ClusterApprovalRequest)
}

// MemberStore is the part of the Store the membership controller uses, so a driver can run
// that controller alone.
type MemberStore interface {
	MemberCluster(name string) *MemberCluster
	PutMemberCluster(m *MemberCluster)
	RemoveMemberCluster(name string)
	BindingsOnMember(member string) int
}

// Env is how controllers affect the world beyond the store.
type Env interface {
	Now() time.Time
	// Record reports an event (a trace entry in the simulator, a Kubernetes event in production).
	Record(kind, subject, detail string)
	// Fire queues what the trigger table says a change wakes.
	Fire(c triggers.Change, key, placement, member string)
	// RequeueAfter asks for key to be reconciled again after d.
	RequeueAfter(c triggers.Controller, key string, d time.Duration)
	// MemberNotified: the member's InternalMemberCluster changed; its agent will see it.
	MemberNotified(member string)
	// WorkWritten: a Work changed; the member's agent will apply it.
	WorkWritten(w *Work)
}
