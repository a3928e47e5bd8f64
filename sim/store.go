package sim

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/model/eviction"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
)

// store is the hub's API server: every object the controllers read and write. It survives
// a hub restart; only the controllers' memory does not. It implements mhub.Store; objects
// are held by pointer, so a controller's Put of an object it got is a no-op here.
type store struct {
	members map[string]*memberRecord
	// memberGen changes whenever a member record is added or removed (caches of records
	// check it).
	memberGen uint64
	clusters  []*member.Member // members of kind Cluster, sorted by name: the scheduler's input
	// clustersVersion changes whenever clusters changes or a member changes in anything
	// but its agent status (scheduler.Input.MembersVersion); bindingsVersion, per
	// placement, whenever one of its bindings is created, replaced or deleted
	// (scheduler.Input.BindingsVersion), drawn from bindingsClock so that a placement
	// deleted and created again never sees an old version.
	clustersVersion uint64
	// status records every write of a member's agent status (scheduler.Input.Status).
	status          *member.StatusFeed
	bindingsVersion map[string]uint64
	bindingsClock   uint64
	placements      map[string]*mhub.Placement
	// placementNames caches PlacementNames (nil: to be read again); the invariants read
	// the sorted names after every event, and placements are rarely added or removed.
	// addPlacement and RemovePlacement are the only writers of placements.
	placementNames []string
	// memberNames caches MemberClusterNames at member generation memberNamesGen.
	memberNames    []string
	memberNamesGen uint64
	bindings       map[string]*placement.Binding
	byCRP          map[string][]*placement.Binding // sorted by name
	byMember       map[string]int                  // bindings targeting each member

	overrides overrideStore
	works     map[string]map[string]*mhub.Work // by binding name, then Work name
	// backReported is what each Work's status holds in manifestConditions[].backReportedStatus
	// (strategy.reportBackStrategy Mirror), by binding name then Work name: one entry per
	// manifest, nil for a manifest with nothing reported.
	backReported map[string]map[string][]map[string]any
	// workReports is what each Work's status holds as the member agent last reported it, by
	// binding name then Work name: the fan-in folds every Work of a binding.
	workReports map[string]map[string]workReport
	runs        map[string]*staged.ClusterStagedUpdateRun
	strategies  map[string]*staged.ClusterStagedUpdateStrategy
	approvals   map[string]*staged.ClusterApprovalRequest
	evictions   map[string]*eviction.Eviction
	budgets     map[string]*eviction.DisruptionBudget

	// resources are the hub objects placements select, by resources.Key.
	resources      map[string]*unstructured.Unstructured
	resourceList   []*unstructured.Unstructured
	resourcesDirty bool

	// onNewBinding is told of every binding created, for the invariants; onBindingDeleted
	// of every binding deleted.
	onNewBinding     func(placement.Binding)
	onBindingDeleted func(name string)
	// onWorkDeleted is told of every Work deleted: its member's agent removes what it applied.
	onWorkDeleted func(w *mhub.Work)

	// profiles are the members' ClusterProfiles (clusterprofiles.go).
	profiles profileStore
}

// memberRecord is a MemberCluster as the hub stores it, plus its simulated agent.
type memberRecord struct {
	mhub.MemberCluster
	agent *agent
}

var _ mhub.Store = (*store)(nil)

func newStore() *store {
	return &store{
		members:         map[string]*memberRecord{},
		placements:      map[string]*mhub.Placement{},
		bindings:        map[string]*placement.Binding{},
		byCRP:           map[string][]*placement.Binding{},
		byMember:        map[string]int{},
		bindingsVersion: map[string]uint64{},
		clustersVersion: 1,
		status:          member.NewStatusFeed(0),
		resources:       map[string]*unstructured.Unstructured{},
		overrides:       newOverrideStore(),
		works:           map[string]map[string]*mhub.Work{},
		backReported:    map[string]map[string][]map[string]any{},
		workReports:     map[string]map[string]workReport{},
		runs:            map[string]*staged.ClusterStagedUpdateRun{},
		evictions:       map[string]*eviction.Eviction{},
		strategies:      map[string]*staged.ClusterStagedUpdateStrategy{},
		approvals:       map[string]*staged.ClusterApprovalRequest{},
		budgets:         map[string]*eviction.DisruptionBudget{},
		profiles:        profileStore{byName: map[string]*profileRecord{}},
	}
}

func (st *store) addMember(r *memberRecord) {
	st.members[r.Member.Name] = r
	st.memberGen++
	st.clustersVersion++
	if r.Member.Kind == member.KindCluster {
		i, _ := slices.BinarySearchFunc(st.clusters, r.Member.Name, func(m *member.Member, n string) int { return cmp.Compare(m.Name, n) })
		st.clusters = slices.Insert(st.clusters, i, r.Member)
	}
}

func (st *store) MemberCluster(name string) *mhub.MemberCluster {
	if r := st.members[name]; r != nil {
		return &r.MemberCluster
	}
	return nil
}

// MemberClusterNames caches the sorted names until a member is added or removed (the
// member generation moves): the invariants read them after every event.
func (st *store) MemberClusterNames() []string {
	if st.memberNames == nil || st.memberNamesGen != st.memberGen {
		st.memberNames, st.memberNamesGen = sortedKeys(st.members), st.memberGen
	}
	return slices.Clone(st.memberNames)
}

// PutMemberCluster stores nothing (the record is held by pointer) but keeps the member's
// ClusterProfile in step with what the membership controller just decided.
func (st *store) PutMemberCluster(m *mhub.MemberCluster) { st.profiles.sync(m.Member.Name, m.Member) }
func (st *store) Clusters() []*member.Member             { return st.clusters }

// ClustersVersion and BindingsVersion implement mhub.VersionedStore.
func (st *store) ClustersVersion() uint64 { return st.clustersVersion }

func (st *store) BindingsVersion(placementName string) uint64 {
	return st.bindingsVersion[placementName]
}

// StatusFeed implements mhub.StatusFeedStore.
func (st *store) StatusFeed() *member.StatusFeed { return st.status }

// memberSpecChanged records that a member changed in something the scheduler indexes or
// reads besides agent status (labels, taints, properties, resources, leaving).
func (st *store) memberSpecChanged() { st.clustersVersion++ }

func (st *store) bindingsChanged(placementName string) {
	st.bindingsClock++
	st.bindingsVersion[placementName] = st.bindingsClock
}

func (st *store) RemoveMemberCluster(name string) {
	if _, ok := st.members[name]; !ok {
		return
	}
	delete(st.members, name)
	st.profiles.sync(name, nil)
	st.memberGen++
	st.clustersVersion++
	st.clusters = slices.DeleteFunc(st.clusters, func(m *member.Member) bool { return m.Name == name })
}

func (st *store) Placement(name string) *mhub.Placement { return st.placements[name] }
func (st *store) PlacementNames() []string {
	if st.placementNames == nil {
		st.placementNames = sortedKeys(st.placements)
	}
	return slices.Clone(st.placementNames)
}

// addPlacement records a new placement.
func (st *store) addPlacement(name string, p *mhub.Placement) {
	st.placements[name] = p
	st.placementNames = nil
}
func (st *store) PutPlacement(*mhub.Placement) {}
func (st *store) RemovePlacement(name string) {
	delete(st.placements, name)
	st.placementNames = nil
}

// latest is a placement's latest policy snapshot, or nil.
func (st *store) latest(name string) *placement.PolicySnapshot {
	if p := st.placements[name]; p != nil {
		return p.LatestPolicySnapshot()
	}
	return nil
}

func (st *store) Binding(name string) *placement.Binding             { return st.bindings[name] }
func (st *store) Bindings(placementName string) []*placement.Binding { return st.byCRP[placementName] }
func (st *store) BindingsOnMember(name string) int                   { return st.byMember[name] }

// PutBinding creates or replaces a binding. Replacing keeps the stored pointer, so slices
// handed to decisions stay valid.
func (st *store) PutBinding(b placement.Binding) {
	if old, ok := st.bindings[b.Name]; ok {
		if old.Placement != b.Placement {
			st.bindingsChanged(old.Placement)
		}
		*old = b
		st.bindingsChanged(b.Placement)
		return
	}
	st.bindingsChanged(b.Placement)
	nb := &b
	st.bindings[b.Name] = nb
	list := st.byCRP[b.Placement]
	i, _ := slices.BinarySearchFunc(list, b.Name, func(x *placement.Binding, n string) int { return cmp.Compare(x.Name, n) })
	st.byCRP[b.Placement] = slices.Insert(list, i, nb)
	st.byMember[b.TargetCluster]++
	if st.onNewBinding != nil {
		st.onNewBinding(b)
	}
}

func (st *store) DeleteBinding(name string) *placement.Binding {
	b := st.bindings[name]
	if b == nil {
		return nil
	}
	delete(st.bindings, name)
	st.bindingsChanged(b.Placement)
	st.byCRP[b.Placement] = slices.DeleteFunc(st.byCRP[b.Placement], func(x *placement.Binding) bool { return x.Name == name })
	if len(st.byCRP[b.Placement]) == 0 {
		delete(st.byCRP, b.Placement)
	}
	if st.byMember[b.TargetCluster]--; st.byMember[b.TargetCluster] <= 0 {
		delete(st.byMember, b.TargetCluster)
	}
	// A binding owns its Work: deleting it deletes the Work, as garbage collection does,
	// and the member removes what it applied.
	st.DeleteWork(name)
	if st.onBindingDeleted != nil {
		st.onBindingDeleted(name)
	}
	return b
}

// workReport is a member agent's report on one Work generation.
type workReport struct {
	generation int64
	report     placement.WorkReport
}

// Works lists a binding's Works by name.
func (st *store) Works(binding string) []*mhub.Work {
	ws := st.works[binding]
	out := make([]*mhub.Work, 0, len(ws))
	for _, k := range sortedKeys(ws) {
		out = append(out, ws[k])
	}
	return out
}

// work is one Work of a binding, nil when there is none.
func (st *store) work(binding, name string) *mhub.Work { return st.works[binding][name] }

func (st *store) PutWork(w *mhub.Work) {
	if st.works[w.Binding] == nil {
		st.works[w.Binding] = map[string]*mhub.Work{}
	}
	st.works[w.Binding][w.Name] = w
}

// RemoveWork deletes one Work of a binding and tells onWorkDeleted.
func (st *store) RemoveWork(binding, name string) {
	w, ok := st.works[binding][name]
	if !ok {
		return
	}
	delete(st.works[binding], name)
	delete(st.backReported[binding], name)
	delete(st.workReports[binding], name)
	if len(st.works[binding]) == 0 {
		delete(st.works, binding)
		delete(st.backReported, binding)
		delete(st.workReports, binding)
	}
	if st.onWorkDeleted != nil {
		st.onWorkDeleted(w)
	}
}

// DeleteWork deletes every Work of a binding and tells onWorkDeleted of each.
func (st *store) DeleteWork(binding string) {
	for _, w := range st.Works(binding) {
		st.RemoveWork(binding, w.Name)
	}
}

// sortedWorks lists works by binding name, then Work name.
func (st *store) sortedWorks() []*mhub.Work {
	var out []*mhub.Work
	for _, b := range sortedKeys(st.works) {
		out = append(out, st.Works(b)...)
	}
	return out
}

func (st *store) LatestOverrides() ([]override.CROSnapshot, []override.ROSnapshot) {
	return st.overrides.latest()
}

func (st *store) NamedOverrides(cro []string, ro []placement.NamespacedName) ([]override.CROSnapshot, []override.ROSnapshot) {
	return st.overrides.named(cro, ro)
}

func (st *store) Eviction(name string) *eviction.Eviction                 { return st.evictions[name] }
func (st *store) EvictionNames() []string                                 { return sortedKeys(st.evictions) }
func (st *store) PutEviction(*eviction.Eviction)                          {}
func (st *store) DisruptionBudget(name string) *eviction.DisruptionBudget { return st.budgets[name] }

func (st *store) UpdateRun(name string) *staged.ClusterStagedUpdateRun { return st.runs[name] }
func (st *store) UpdateRunNames() []string                             { return sortedKeys(st.runs) }
func (st *store) PutUpdateRun(*staged.ClusterStagedUpdateRun)          {}
func (st *store) Strategy(name string) *staged.ClusterStagedUpdateStrategy {
	return st.strategies[name]
}

func (st *store) ApprovalRequests(run string) []*staged.ClusterApprovalRequest {
	var out []*staged.ClusterApprovalRequest
	for _, n := range sortedKeys(st.approvals) {
		if a := st.approvals[n]; a.Labels[staged.LabelTargetUpdateRun] == run {
			out = append(out, a)
		}
	}
	return out
}

func (st *store) PutApprovalRequest(a staged.ClusterApprovalRequest) { st.approvals[a.Name] = &a }
