package sim

import (
	"cmp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"slices"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/model/status"
)

// store is the hub's API server: every object the controllers read and write. It survives
// a hub restart; only the controllers' memory does not.
type store struct {
	members    map[string]*memberRecord
	clusters   []*member.Member // members of kind Cluster, sorted by name: the scheduler's input
	placements map[string]*placementRecord
	bindings   map[string]*placement.Binding
	byCRP      map[string][]*placement.Binding // sorted by name
	byMember   map[string]int                  // bindings targeting each member

	overrides  overrideStore
	works      map[string]*work // by binding name
	runs       map[string]*runRecord
	strategies map[string]*staged.ClusterStagedUpdateStrategy
	approvals  map[string]*staged.ClusterApprovalRequest
	evictions  map[string]*eviction.Eviction
	budgets    map[string]*eviction.DisruptionBudget

	// resources are the hub objects placements select, by resources.Key.
	resources      map[string]*unstructured.Unstructured
	resourceList   []*unstructured.Unstructured
	resourcesDirty bool
}

// memberRecord is a MemberCluster (spec and status) with its IMC and namespace.
type memberRecord struct {
	m          *member.Member
	nsExists   bool
	imc        *membership.IMCState
	conditions []condition.Timed
	agent      *agent
	created    time.Time
	// reportedHealthy caches "the Healthy condition says MemberClusterHealthy", so that a
	// heartbeat can tell in O(1) whether the hub has anything to update.
	reportedHealthy bool
}

// placementRecord is a ClusterResourcePlacement with its policy snapshots and status.
type placementRecord struct {
	crp        placement.ClusterResourcePlacement
	generation int64
	snapshots  []*placement.PolicySnapshot // by index; the last is the latest
	decisions  []placement.ClusterDecision // latest snapshot's targetClusters
	conditions []condition.Timed
	deleting   bool

	// scheduled is the scheduler's latest Scheduled condition and scheduledGen the
	// placement generation it decided for; status is the aggregated placement status.
	scheduled     *condition.Condition
	scheduledGen  int64
	observedCount int
	status        status.Status

	selected          []*unstructured.Unstructured
	selectionErr      error
	resourceSnapshots []*resources.Snapshot // by index; the last is the latest
}

func (p *placementRecord) latestResources() *resources.Snapshot {
	if len(p.resourceSnapshots) == 0 {
		return nil
	}
	return p.resourceSnapshots[len(p.resourceSnapshots)-1]
}

// resourceSnapshot finds a kept resource snapshot by index.
func (p *placementRecord) resourceSnapshot(index int) *resources.Snapshot {
	for _, r := range p.resourceSnapshots {
		if r.Index == index {
			return r
		}
	}
	return nil
}

// resourceSnapshotByName finds a kept resource snapshot by name.
func (p *placementRecord) resourceSnapshotByName(name string) *resources.Snapshot {
	for _, r := range p.resourceSnapshots {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// sortedWorks lists works by binding name.
func (st *store) sortedWorks() []*work {
	out := make([]*work, 0, len(st.works))
	for _, k := range sortedKeys(st.works) {
		out = append(out, st.works[k])
	}
	return out
}

func (p *placementRecord) historyLimit() int {
	if l := p.crp.Spec.RevisionHistoryLimit; l != nil {
		return int(*l)
	}
	return placement.DefaultHistoryLimit
}

func newStore() *store {
	return &store{
		members:    map[string]*memberRecord{},
		placements: map[string]*placementRecord{},
		bindings:   map[string]*placement.Binding{},
		byCRP:      map[string][]*placement.Binding{},
		byMember:   map[string]int{},
		resources:  map[string]*unstructured.Unstructured{},
		overrides:  newOverrideStore(),
		works:      map[string]*work{},
		runs:       map[string]*runRecord{},
		evictions:  map[string]*eviction.Eviction{},
		strategies: map[string]*staged.ClusterStagedUpdateStrategy{},
		approvals:  map[string]*staged.ClusterApprovalRequest{},
		budgets:    map[string]*eviction.DisruptionBudget{},
	}
}

func (st *store) latest(crp string) *placement.PolicySnapshot {
	p := st.placements[crp]
	if p == nil || len(p.snapshots) == 0 {
		return nil
	}
	return p.snapshots[len(p.snapshots)-1]
}

func (st *store) addMember(r *memberRecord) {
	st.members[r.m.Name] = r
	if r.m.Kind == member.KindCluster {
		i, _ := slices.BinarySearchFunc(st.clusters, r.m.Name, func(m *member.Member, n string) int { return cmp.Compare(m.Name, n) })
		st.clusters = slices.Insert(st.clusters, i, r.m)
	}
}

func (st *store) removeMember(name string) {
	r := st.members[name]
	if r == nil {
		return
	}
	delete(st.members, name)
	st.clusters = slices.DeleteFunc(st.clusters, func(m *member.Member) bool { return m.Name == name })
}

// memberNames returns every member's name, sorted.
func (st *store) memberNames() []string {
	names := make([]string, 0, len(st.members))
	for n := range st.members {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (st *store) placementNames() []string {
	names := make([]string, 0, len(st.placements))
	for n := range st.placements {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// putBinding creates or replaces a binding.
func (st *store) putBinding(b placement.Binding) {
	nb := &b
	if old, ok := st.bindings[b.Name]; ok {
		*old = b
		return
	}
	st.bindings[b.Name] = nb
	list := st.byCRP[b.Placement]
	i, _ := slices.BinarySearchFunc(list, b.Name, func(x *placement.Binding, n string) int { return cmp.Compare(x.Name, n) })
	st.byCRP[b.Placement] = slices.Insert(list, i, nb)
	st.byMember[b.TargetCluster]++
}

func (st *store) deleteBinding(name string) *placement.Binding {
	b := st.bindings[name]
	if b == nil {
		return nil
	}
	delete(st.bindings, name)
	st.byCRP[b.Placement] = slices.DeleteFunc(st.byCRP[b.Placement], func(x *placement.Binding) bool { return x.Name == name })
	if len(st.byCRP[b.Placement]) == 0 {
		delete(st.byCRP, b.Placement)
	}
	if st.byMember[b.TargetCluster]--; st.byMember[b.TargetCluster] <= 0 {
		delete(st.byMember, b.TargetCluster)
	}
	return b
}

// setConditions merges decided conditions into stored ones (condition.Set keeps transition
// times of unchanged statuses) and returns those whose status changed.
func setConditions(stored *[]condition.Timed, decided []condition.Condition, gen int64, now time.Time) []condition.Condition {
	var changed []condition.Condition
	for _, c := range decided {
		if condition.Set(stored, c, gen, now) {
			changed = append(changed, c)
		}
	}
	return changed
}

func (st *store) runNames() []string { return sortedKeys(st.runs) }
