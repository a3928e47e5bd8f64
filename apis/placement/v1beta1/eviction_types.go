package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Condition types of an eviction (EVICT-API).
const (
	EvictionConditionValid    = "Valid"
	EvictionConditionExecuted = "Executed"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=crpe,categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Executed",type=string,JSONPath=`.status.conditions[?(@.type=="Executed")].status`

// ClusterResourcePlacementEviction asks to remove a placement's resources from one cluster,
// by deleting its binding, subject to the placement's disruption budget. It is reconciled
// once; its spec is immutable, so a retry means deleting and re-creating it. It does not stop
// the scheduler from picking the cluster again: taint the cluster first.
type ClusterResourcePlacementEviction struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the eviction. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the spec of an eviction is immutable: delete and re-create the eviction instead"
	// +required
	Spec PlacementEvictionSpec `json:"spec"`

	// Status is the observed state of the eviction.
	// +optional
	Status PlacementEvictionStatus `json:"status,omitempty"`
}

// PlacementEvictionSpec names the placement and the cluster to evict it from.
type PlacementEvictionSpec struct {
	// PlacementName is the name of the ClusterResourcePlacement the eviction targets.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	PlacementName string `json:"placementName"`

	// ClusterName is the name of the cluster the eviction targets.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	ClusterName string `json:"clusterName"`
}

// PlacementEvictionStatus is the observed state of an eviction.
type PlacementEvictionStatus struct {
	// Conditions: Valid (the eviction targets a valid placement) and Executed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourcePlacementEvictionList contains a list of ClusterResourcePlacementEviction.
type ClusterResourcePlacementEvictionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourcePlacementEviction `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=crpdb,categories={fleet,fleet-placement}

// ClusterResourcePlacementDisruptionBudget limits how many of a placement's clusters
// voluntary disruptions (evictions) may take down. It applies to the ClusterResourcePlacement
// of the same name.
type ClusterResourcePlacementDisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the disruption budget.
	// +required
	Spec PlacementDisruptionBudgetSpec `json:"spec"`
}

// PlacementDisruptionBudgetSpec sets exactly one of maxUnavailable and minAvailable, each an
// absolute number or a percentage of the placement's numberOfClusters (PickN only), rounded
// up.
// +kubebuilder:validation:XValidation:rule="has(self.maxUnavailable) != has(self.minAvailable)",message="exactly one of maxUnavailable and minAvailable must be set"
type PlacementDisruptionBudgetSpec struct {
	// MaxUnavailable is how many placements may be down at once due to voluntary disruptions.
	// 0 allows none.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[0-9]{1,2})%|[0-9]+)$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="maxUnavailable must not be negative"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MinAvailable is how many placements must stay available despite voluntary disruptions.
	// 0 allows any. With PickAll it must be an absolute number.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[0-9]{1,2})%|[0-9]+)$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="minAvailable must not be negative"
	// +optional
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourcePlacementDisruptionBudgetList contains a list of
// ClusterResourcePlacementDisruptionBudget.
type ClusterResourcePlacementDisruptionBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourcePlacementDisruptionBudget `json:"items"`
}
