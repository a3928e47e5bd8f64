package placement

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// API group and version of the KubeFleet placement kinds, accepted unchanged.
const (
	GroupVersion         = "placement.kubernetes-fleet.io/v1beta1"
	KindPlacement        = "ClusterResourcePlacement"
	DefaultHistoryLimit  = 10
	MaxResourceSelectors = 100
)

// ClusterResourcePlacement is the v1beta1 object, spec only; status is decided, not stored here.
type ClusterResourcePlacement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PlacementSpec `json:"spec"`
}

// PlacementSpec mirrors v1beta1 ClusterResourcePlacementSpec.
type PlacementSpec struct {
	ResourceSelectors    []ResourceSelector `json:"resourceSelectors"`
	Policy               *PlacementPolicy   `json:"policy,omitempty"`
	Strategy             RolloutStrategy    `json:"strategy,omitempty"`
	RevisionHistoryLimit *int32             `json:"revisionHistoryLimit,omitempty"`
	// StatusReportingScope says where the placement's status can be read: on the
	// placement only (ClusterScopeOnly, the default when empty) or also in a
	// ClusterResourcePlacementStatus object in the one namespace the placement selects
	// (NamespaceAccessible). Immutable.
	StatusReportingScope StatusReportingScope `json:"statusReportingScope,omitempty"`
}

// StatusReportingScope is a placement's spec.statusReportingScope.
type StatusReportingScope string

const (
	ClusterScopeOnly    StatusReportingScope = "ClusterScopeOnly"
	NamespaceAccessible StatusReportingScope = "NamespaceAccessible"
)

// StatusNamespace is the namespace a NamespaceAccessible placement mirrors its status into:
// the name its one Namespace selector names. It is "" for a ClusterScopeOnly placement and
// for one whose Namespace selector picks by labels (no single namespace is named).
func (s PlacementSpec) StatusNamespace() string {
	if s.StatusReportingScope != NamespaceAccessible {
		return ""
	}
	name, n := "", 0
	for _, sel := range s.ResourceSelectors {
		if sel.Kind == "Namespace" {
			name, n = sel.Name, n+1
		}
	}
	if n != 1 {
		return ""
	}
	return name
}

// ResourceSelector selects hub resources by group, version, kind and name or labels (CRP-SEL-GVK).
type ResourceSelector struct {
	Group         string                `json:"group"`
	Version       string                `json:"version"`
	Kind          string                `json:"kind"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// SelectionScope says what a selected Namespace brings: the namespace and every object
	// in it (NamespaceWithResources, the default when empty) or the namespace alone
	// (NamespaceOnly), or the namespace and, in it, only the objects the placement's other
	// selectors pick (NamespaceWithResourceSelectors: those selectors may then name
	// namespaced kinds). It does not change what selectors of cluster-scoped kinds pick.
	SelectionScope SelectionScope `json:"selectionScope,omitempty"`
}

// SelectionScope is a resource selector's selectionScope.
type SelectionScope string

const (
	NamespaceWithResources SelectionScope = "NamespaceWithResources"
	NamespaceOnly          SelectionScope = "NamespaceOnly"
	// NamespaceWithResourceSelectors (KubeFleet's current release) places the namespace
	// and only those objects in it that the placement's other selectors pick.
	NamespaceWithResourceSelectors SelectionScope = "NamespaceWithResourceSelectors"
)

// ScopesNamespaces reports whether a selector picks Namespaces under
// NamespaceWithResourceSelectors, which lets the placement's other selectors name
// namespaced kinds, picked in those namespaces only.
func (s ResourceSelector) ScopesNamespaces() bool {
	return s.Group == "" && s.Kind == "Namespace" && s.SelectionScope == NamespaceWithResourceSelectors
}

// HasNamespaceWithResourceSelectors reports whether any selector ScopesNamespaces.
func HasNamespaceWithResourceSelectors(selectors []ResourceSelector) bool {
	for _, s := range selectors {
		if s.ScopesNamespaces() {
			return true
		}
	}
	return false
}

type RolloutStrategyType string

const (
	RollingUpdateStrategy RolloutStrategyType = "RollingUpdate"
	ExternalStrategy      RolloutStrategyType = "External"
)

// RolloutStrategy mirrors v1beta1 RolloutStrategy.
type RolloutStrategy struct {
	Type          RolloutStrategyType  `json:"type,omitempty"`
	RollingUpdate *RollingUpdateConfig `json:"rollingUpdate,omitempty"`
	ApplyStrategy *ApplyStrategy       `json:"applyStrategy,omitempty"`
	// DeleteStrategy says what deleting the placement does to what it placed.
	DeleteStrategy *DeleteStrategy `json:"deleteStrategy,omitempty"`
	// ReportBackStrategy says whether and where the member agents report the status of
	// the placed objects.
	ReportBackStrategy *ReportBackStrategy `json:"reportBackStrategy,omitempty"`
}

// ReportBackStrategyType is strategy.reportBackStrategy.type.
type ReportBackStrategyType string

// ReportBackDestination is strategy.reportBackStrategy.destination.
type ReportBackDestination string

const (
	// ReportBackDisabled (the default): no object status is reported back.
	ReportBackDisabled ReportBackStrategyType = "Disabled"
	// ReportBackMirror: the member agents copy each placed object's status, as it is on
	// the member, to the destination.
	ReportBackMirror ReportBackStrategyType = "Mirror"

	// ReportBackToWorkAPI: into the Work's status (manifestConditions[].backReportedStatus).
	ReportBackToWorkAPI ReportBackDestination = "WorkAPI"
	// ReportBackToOriginalResource: onto the placed object on the hub; only for a placement
	// of exactly one cluster (not supported here yet: refused by validation).
	ReportBackToOriginalResource ReportBackDestination = "OriginalResource"
)

// ReportBackStrategy mirrors v1beta1 ReportBackStrategy.
type ReportBackStrategy struct {
	Type        ReportBackStrategyType `json:"type"`
	Destination *ReportBackDestination `json:"destination,omitempty"`
}

// Mirrors reports whether the member agents report the placed objects' status back.
func (s *ReportBackStrategy) Mirrors() bool {
	return s != nil && s.Type == ReportBackMirror
}

// DeletePropagationPolicy is a placement's strategy.deleteStrategy.propagationPolicy.
type DeletePropagationPolicy string

const (
	// DeletePropagationDelete removes the placed objects from the members when the
	// placement is deleted (the default).
	DeletePropagationDelete DeletePropagationPolicy = "Delete"
	// DeletePropagationAbandon leaves the placed objects on the members, without Fleet's
	// ownership, when the placement is deleted.
	DeletePropagationAbandon DeletePropagationPolicy = "Abandon"
)

// DeleteStrategy mirrors v1beta1 DeleteStrategy.
type DeleteStrategy struct {
	PropagationPolicy DeletePropagationPolicy `json:"propagationPolicy,omitempty"`
}

// Abandons reports whether deleting a placement with this strategy leaves its objects on
// the members: only an explicit Abandon does; no strategy means Delete.
func (s RolloutStrategy) Abandons() bool {
	return s.DeleteStrategy != nil && s.DeleteStrategy.PropagationPolicy == DeletePropagationAbandon
}

type RollingUpdateConfig struct {
	MaxUnavailable           *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	MaxSurge                 *intstr.IntOrString `json:"maxSurge,omitempty"`
	UnavailablePeriodSeconds *int                `json:"unavailablePeriodSeconds,omitempty"`
}
