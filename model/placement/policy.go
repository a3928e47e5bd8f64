package placement

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlacementType is how a policy picks clusters (CRP-POL-TYPES).
type PlacementType string

const (
	PickAll   PlacementType = "PickAll"
	PickN     PlacementType = "PickN"
	PickFixed PlacementType = "PickFixed"
)

// PlacementPolicy mirrors v1beta1 PlacementPolicy. A nil policy means PickAll.
type PlacementPolicy struct {
	PlacementType             PlacementType              `json:"placementType,omitempty"`
	ClusterNames              []string                   `json:"clusterNames,omitempty"`
	NumberOfClusters          *int32                     `json:"numberOfClusters,omitempty"`
	Affinity                  *Affinity                  `json:"affinity,omitempty"`
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	Tolerations               []Toleration               `json:"tolerations,omitempty"`
}

// Type returns the placement type with the API default (PickAll) applied.
func (p *PlacementPolicy) Type() PlacementType {
	if p == nil || p.PlacementType == "" {
		return PickAll
	}
	return p.PlacementType
}

type Affinity struct {
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`
}

type ClusterAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  *ClusterSelector           `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredClusterSelector `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// ClusterSelector's terms are ORed.
type ClusterSelector struct {
	ClusterSelectorTerms []ClusterSelectorTerm `json:"clusterSelectorTerms"`
}

// ClusterSelectorTerm's parts are ANDed. PropertySorter is only meaningful in a preferred term.
type ClusterSelectorTerm struct {
	LabelSelector    *metav1.LabelSelector `json:"labelSelector,omitempty"`
	PropertySelector *PropertySelector     `json:"propertySelector,omitempty"`
	PropertySorter   *PropertySorter       `json:"propertySorter,omitempty"`
}

type PreferredClusterSelector struct {
	Weight     int32               `json:"weight"`
	Preference ClusterSelectorTerm `json:"preference"`
}

type PropertySelector struct {
	MatchExpressions []PropertySelectorRequirement `json:"matchExpressions"`
}

type PropertySelectorOperator string

const (
	PropertyGt PropertySelectorOperator = "Gt"
	PropertyGe PropertySelectorOperator = "Ge"
	PropertyEq PropertySelectorOperator = "Eq"
	PropertyNe PropertySelectorOperator = "Ne"
	PropertyLt PropertySelectorOperator = "Lt"
	PropertyLe PropertySelectorOperator = "Le"
)

type PropertySelectorRequirement struct {
	Name     string                   `json:"name"`
	Operator PropertySelectorOperator `json:"operator"`
	Values   []string                 `json:"values"`
}

type PropertySortOrder string

const (
	Ascending  PropertySortOrder = "Ascending"
	Descending PropertySortOrder = "Descending"
)

type PropertySorter struct {
	Name      string            `json:"name"`
	SortOrder PropertySortOrder `json:"sortOrder"`
}

type UnsatisfiableConstraintAction string

const (
	DoNotSchedule  UnsatisfiableConstraintAction = "DoNotSchedule"
	ScheduleAnyway UnsatisfiableConstraintAction = "ScheduleAnyway"
)

type TopologySpreadConstraint struct {
	MaxSkew           *int32                        `json:"maxSkew,omitempty"`
	TopologyKey       string                        `json:"topologyKey"`
	WhenUnsatisfiable UnsatisfiableConstraintAction `json:"whenUnsatisfiable,omitempty"`
}

// Skew returns maxSkew with its default of 1.
func (c TopologySpreadConstraint) Skew() int32 {
	if c.MaxSkew == nil {
		return 1
	}
	return *c.MaxSkew
}

// Action returns whenUnsatisfiable with its default, DoNotSchedule.
func (c TopologySpreadConstraint) Action() UnsatisfiableConstraintAction {
	if c.WhenUnsatisfiable == "" {
		return DoNotSchedule
	}
	return c.WhenUnsatisfiable
}

type TolerationOperator string

const (
	TolerationOpEqual  TolerationOperator = "Equal"
	TolerationOpExists TolerationOperator = "Exists"
)
