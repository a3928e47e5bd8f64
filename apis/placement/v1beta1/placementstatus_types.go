package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=crps,categories={fleet,fleet-placement}
// +kubebuilder:printcolumn:name="Resource-Index",type=string,JSONPath=`.sourceStatus.observedResourceIndex`
// +kubebuilder:printcolumn:name="Last-Updated",type=string,JSONPath=`.lastUpdatedTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterResourcePlacementStatus is a copy, in a namespace, of the status of the
// ClusterResourcePlacement of the same name, for readers who may not read cluster-scoped
// objects. The hub keeps one for a placement whose statusReportingScope is
// NamespaceAccessible, in the namespace it selects, and removes it with the placement.
type ClusterResourcePlacementStatus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// SourceStatus is the placement's status, without its
	// ClusterResourcePlacementStatusSynced condition.
	// +required
	SourceStatus PlacementStatus `json:"sourceStatus,omitempty"`

	// LastUpdatedTime is when the hub last wrote this object.
	// +required
	LastUpdatedTime metav1.Time `json:"lastUpdatedTime,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourcePlacementStatusList contains a list of ClusterResourcePlacementStatus.
type ClusterResourcePlacementStatusList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourcePlacementStatus `json:"items"`
}
