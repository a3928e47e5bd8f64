package difftest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/model/status"
)

// State is what the two sides are compared on: every binding, every placement's status,
// every member's conditions, every Work (by name, with its manifests after overrides),
// every staged update run's and approval request's status, every eviction's conditions,
// and every ClusterProfile's conditions. Times, messages, generations and the names of bindings and snapshots are
// left out: they depend on when things happened, not on what was decided.
type State struct {
	// Bindings of every placement, sorted.
	Bindings []Binding
	// Placements by name.
	Placements map[string]Placement
	// Members by name: the MemberClusters that exist.
	Members map[string]Conditions
	// Works by member/name.
	Works map[string]Work
	// Runs are the staged update runs by name.
	Runs map[string]Run
	// Approvals are the ClusterApprovalRequests' conditions by name.
	Approvals map[string]Conditions
	// Evictions are the ClusterResourcePlacementEvictions' conditions by name.
	Evictions map[string]Conditions
	// Profiles are the conditions of the ClusterProfiles in fleet-system, by name.
	Profiles map[string]Conditions
}

// newState is an empty State.
func newState() State {
	return State{Bindings: []Binding{}, Placements: map[string]Placement{}, Members: map[string]Conditions{},
		Works: map[string]Work{}, Runs: map[string]Run{}, Approvals: map[string]Conditions{}, Evictions: map[string]Conditions{},
		Profiles: map[string]Conditions{}}
}

// Binding is a ClusterResourceBinding: its placement, target cluster and state (Scheduled,
// Bound or Unscheduled), and whether its deletion has been asked for.
type Binding struct {
	Placement string
	Cluster   string
	State     string
	Deleting  bool
}

func (b Binding) String() string {
	s := b.Placement + " -> " + b.Cluster + " " + b.State
	if b.Deleting {
		s += " (deleting)"
	}
	return s
}

// Placement is a ClusterResourcePlacement's status.
type Placement struct {
	Conditions Conditions
	// SelectedResources as group/version/kind/namespace/name, sorted.
	SelectedResources []string
	// Clusters are the placementStatuses entries, sorted by cluster name (entries without a
	// name, for clusters the scheduler could not find, first).
	Clusters []ClusterStatus
}

// ClusterStatus is one placementStatuses entry.
type ClusterStatus struct {
	Cluster    string
	Conditions Conditions
	// Overrides are the applicable override snapshots: ClusterResourceOverride snapshots by
	// name, ResourceOverride snapshots as namespace/name, sorted.
	Overrides []string
	// FailedPlacements counts the resources reported failed.
	FailedPlacements int
}

// Conditions maps a condition type to "Status/Reason".
type Conditions map[string]string

// condition renders a condition's status and reason.
func condition(status, reason string) string { return status + "/" + reason }

// normalize sorts what has no meaningful order.
func (s *State) normalize() {
	slices.SortFunc(s.Bindings, func(a, b Binding) int {
		return cmp.Or(cmp.Compare(a.Placement, b.Placement), cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.State, b.State), compareBool(a.Deleting, b.Deleting))
	})
	for name, p := range s.Placements {
		slices.Sort(p.SelectedResources)
		for i := range p.Clusters {
			slices.Sort(p.Clusters[i].Overrides)
		}
		slices.SortStableFunc(p.Clusters, func(a, b ClusterStatus) int {
			return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(fmt.Sprint(a.Conditions), fmt.Sprint(b.Conditions)))
		})
		s.Placements[name] = p
	}
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func resourceID(group, version, kind, namespace, name string) string {
	return strings.Join([]string{group, version, kind, namespace, name}, "/")
}

// Summary renders a state for logs, one line per fact.
func (s State) Summary() string {
	var b strings.Builder
	for _, x := range s.Bindings {
		fmt.Fprintf(&b, "binding %s\n", x)
	}
	for _, name := range sortedKeys(s.Placements) {
		p := s.Placements[name]
		fmt.Fprintf(&b, "placement %s: %v selected %v\n", name, p.Conditions, p.SelectedResources)
		for _, c := range p.Clusters {
			fmt.Fprintf(&b, "  cluster %q: %v overrides %v failed %d\n", c.Cluster, c.Conditions, c.Overrides, c.FailedPlacements)
		}
	}
	for _, name := range sortedKeys(s.Members) {
		fmt.Fprintf(&b, "member %s: %v\n", name, s.Members[name])
	}
	for _, name := range sortedKeys(s.Works) {
		var ids []string
		for _, m := range s.Works[name].Manifests {
			ids = append(ids, m.ID)
		}
		fmt.Fprintf(&b, "work %s: %v\n", name, ids)
	}
	for _, name := range sortedKeys(s.Runs) {
		r := s.Runs[name]
		fmt.Fprintf(&b, "run %s of %s: %v\n", name, r.Placement, r.Conditions)
		for _, st := range r.Stages {
			fmt.Fprintf(&b, "  stage %s: %v clusters %v tasks %v\n", st.Name, st.Conditions, st.Clusters, st.Tasks)
		}
	}
	for _, name := range sortedKeys(s.Approvals) {
		fmt.Fprintf(&b, "approval %s: %v\n", name, s.Approvals[name])
	}
	for _, name := range sortedKeys(s.Evictions) {
		fmt.Fprintf(&b, "eviction %s: %v\n", name, s.Evictions[name])
	}
	for _, name := range sortedKeys(s.Profiles) {
		fmt.Fprintf(&b, "clusterprofile %s: %v\n", name, s.Profiles[name])
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// placementState is a placement's status as compared: its conditions (as each side
// reports them) and, from the status, the selected resources and every cluster's entry.
func placementState(conds Conditions, s status.Status) Placement {
	p := Placement{Conditions: conds, SelectedResources: []string{}, Clusters: []ClusterStatus{}}
	for _, r := range s.SelectedResources {
		p.SelectedResources = append(p.SelectedResources, resourceID(r.Group, r.Version, r.Kind, r.Namespace, r.Name))
	}
	for _, ps := range s.PlacementStatuses {
		cs := ClusterStatus{Cluster: ps.ClusterName, Conditions: Conditions{}, Overrides: []string{}, FailedPlacements: len(ps.FailedPlacements)}
		for _, x := range ps.Conditions {
			cs.Conditions[x.Type] = condition(string(x.Status), x.Reason)
		}
		cs.Overrides = append(cs.Overrides, ps.ApplicableClusterResourceOverrides...)
		for _, ro := range ps.ApplicableResourceOverrides {
			cs.Overrides = append(cs.Overrides, ro.Namespace+"/"+ro.Name)
		}
		p.Clusters = append(p.Clusters, cs)
	}
	return p
}
