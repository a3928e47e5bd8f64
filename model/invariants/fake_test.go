package invariants

import (
	"maps"
	"slices"

	"github.com/fleetsim/fleetsim/model/eviction"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
)

// fakeStore is a minimal Reader, not the simulator's store: the checks work on any.
type fakeStore struct {
	placements map[string]*mhub.Placement
	bindings   map[string][]*placement.Binding
	members    map[string]*mhub.MemberCluster
	works      map[string]*mhub.Work
	evictions  map[string]*eviction.Eviction
	budgets    map[string]*eviction.DisruptionBudget
	runs       map[string]*staged.ClusterStagedUpdateRun
	approvals  map[string][]*staged.ClusterApprovalRequest
}

func (f fakeStore) PlacementNames() []string                   { return slices.Sorted(maps.Keys(f.placements)) }
func (f fakeStore) Placement(n string) *mhub.Placement         { return f.placements[n] }
func (f fakeStore) Bindings(p string) []*placement.Binding     { return f.bindings[p] }
func (f fakeStore) MemberCluster(n string) *mhub.MemberCluster { return f.members[n] }
func (f fakeStore) Works(b string) []*mhub.Work {
	if w := f.works[b]; w != nil {
		return []*mhub.Work{w}
	}
	return nil
}
func (f fakeStore) EvictionNames() []string              { return slices.Sorted(maps.Keys(f.evictions)) }
func (f fakeStore) Eviction(n string) *eviction.Eviction { return f.evictions[n] }
func (f fakeStore) DisruptionBudget(n string) *eviction.DisruptionBudget {
	return f.budgets[n]
}
func (f fakeStore) UpdateRunNames() []string                          { return slices.Sorted(maps.Keys(f.runs)) }
func (f fakeStore) UpdateRun(n string) *staged.ClusterStagedUpdateRun { return f.runs[n] }
func (f fakeStore) ApprovalRequests(run string) []*staged.ClusterApprovalRequest {
	return f.approvals[run]
}
func (f fakeStore) Binding(name string) *placement.Binding {
	for _, bs := range f.bindings {
		for _, b := range bs {
			if b.Name == name {
				return b
			}
		}
	}
	return nil
}

func (f fakeStore) MemberClusterNames() []string { return slices.Sorted(maps.Keys(f.members)) }
