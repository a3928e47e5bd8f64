package sim

import (
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/model/condition"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/status"
)

// Condition is a status condition as users read it.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason"`
	Message            string    `json:"message"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// ConditionsOf converts stored conditions for display.
func ConditionsOf(cs []condition.Timed) []Condition { return conditionsOf(cs) }

func conditionsOf(cs []condition.Timed) []Condition {
	out := make([]Condition, 0, len(cs))
	for _, c := range cs {
		out = append(out, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime})
	}
	return out
}

// BindingStatus is one binding of a placement.
type BindingStatus struct {
	Name    string                 `json:"name"`
	Cluster string                 `json:"cluster"`
	State   placement.BindingState `json:"state"`
}

// PlacementStatus is a placement as `kubectl get crp -o yaml` would show it.
type PlacementStatus struct {
	Name string `json:"name"`
	// Clusters are the clusters whose binding is Scheduled or Bound, sorted.
	Clusters       []string                    `json:"clusters"`
	Conditions     []Condition                 `json:"conditions"`
	PolicySnapshot string                      `json:"policySnapshot,omitempty"`
	Wanted         int                         `json:"wanted"`
	Decisions      []placement.ClusterDecision `json:"decisions,omitempty"`
	Bindings       []BindingStatus             `json:"bindings"`
	// Status is the placement's status as KubeFleet reports it: conditions,
	// placementStatuses, selectedResources, observedResourceIndex.
	Status status.Status `json:"status"`
	// StatusObject is the ClusterResourcePlacementStatus a NamespaceAccessible placement
	// keeps in its namespace (statusReportingScope), or nil.
	StatusObject *mhub.StatusMirror `json:"statusObject,omitempty"`
}

// Placement returns one placement's status.
func (s *Sim) Placement(name string) (PlacementStatus, bool) {
	p := s.store.placements[name]
	if p == nil {
		return PlacementStatus{}, false
	}
	st := PlacementStatus{Name: name, Clusters: []string{}, Conditions: conditionsOf(p.Status.Conditions), Decisions: p.Decisions, Bindings: []BindingStatus{}, Wanted: -1, Status: p.Status, StatusObject: p.Mirror}
	if len(st.Conditions) == 0 {
		// Before the first status aggregation (or for an invalid policy), show what the
		// scheduler said.
		st.Conditions = conditionsOf(p.Conditions)
	}
	if snap := s.store.latest(name); snap != nil {
		st.PolicySnapshot = snap.Name
		switch snap.Policy.Type() {
		case placement.PickN:
			st.Wanted = int(snap.NumberOfClusters)
		case placement.PickFixed:
			st.Wanted = len(snap.Policy.ClusterNames)
		}
	}
	for _, b := range s.store.byCRP[name] {
		st.Bindings = append(st.Bindings, BindingStatus{Name: b.Name, Cluster: b.TargetCluster, State: b.State})
		if !b.Deleting && (b.State == placement.Scheduled || b.State == placement.Bound) {
			st.Clusters = append(st.Clusters, b.TargetCluster)
		}
	}
	slices.Sort(st.Clusters)
	return st, true
}

// Placements returns every placement's status, by name.
func (s *Sim) Placements() []PlacementStatus {
	var out []PlacementStatus
	for _, n := range s.store.PlacementNames() {
		st, _ := s.Placement(n)
		out = append(out, st)
	}
	return out
}

// MemberStatus is a member as `kubectl get membercluster` shows it, plus what only the
// simulator knows (the agent's failure).
type MemberStatus struct {
	Name          string            `json:"name"`
	Kind          member.Kind       `json:"kind"`
	Labels        map[string]string `json:"labels,omitempty"`
	Taints        []member.Taint    `json:"taints"`
	Conditions    []Condition       `json:"conditions"`
	Leaving       bool              `json:"leaving,omitempty"`
	LastHeartbeat *time.Time        `json:"lastHeartbeat,omitempty"`
	// Eligible says whether the scheduler may pick the member now, and if not, why.
	Eligible          bool   `json:"eligible"`
	IneligibleReason  string `json:"ineligibleReason,omitempty"`
	Failure           string `json:"failure,omitempty"`
	ReservedNamespace string `json:"reservedNamespace,omitempty"`
}

// Member returns one member's status.
func (s *Sim) Member(name string) (MemberStatus, bool) {
	r := s.store.members[name]
	if r == nil {
		return MemberStatus{}, false
	}
	m := r.Member
	st := MemberStatus{Name: name, Kind: m.Kind, Labels: m.Labels, Taints: slices.Clone(m.Taints), Conditions: conditionsOf(r.Conditions), Leaving: m.Leaving}
	if st.Taints == nil {
		st.Taints = []member.Taint{}
	}
	if m.Agent.Present {
		t := m.Agent.LastHeartbeat
		st.LastHeartbeat = &t
	}
	e := m.CheckEligibility(s.Now(), s.cfg.Eligibility)
	st.Eligible = e.OK()
	if !e.OK() {
		st.IneligibleReason = e.String()
	}
	if r.NamespaceExists {
		st.ReservedNamespace = membership.Namespace(name)
	}
	switch a := r.agent; {
	case a.crashed:
		st.Failure = string(Crash)
	case a.partitioned:
		st.Failure = string(Partition)
	}
	return st, true
}

// MemberNames returns the names of every member, sorted.
func (s *Sim) MemberNames() []string { return s.store.MemberClusterNames() }

// Members returns every member's status, by name.
func (s *Sim) Members() []MemberStatus {
	names := s.store.MemberClusterNames()
	out := make([]MemberStatus, 0, len(names))
	for _, n := range names {
		st, _ := s.Member(n)
		out = append(out, st)
	}
	return out
}

// ConditionOf finds a condition by type. A placement's condition may be named with or
// without its ClusterResourcePlacement prefix ("Scheduled" finds
// ClusterResourcePlacementScheduled).
func ConditionOf(cs []Condition, typ string) (Condition, bool) {
	i := slices.IndexFunc(cs, func(c Condition) bool { return c.Type == typ || c.Type == "ClusterResourcePlacement"+typ })
	if i < 0 {
		return Condition{}, false
	}
	return cs[i], true
}
