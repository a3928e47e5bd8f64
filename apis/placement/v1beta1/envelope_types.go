package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={fleet,fleet-placement}

// ClusterResourceEnvelope wraps cluster-scoped objects that must not take effect on the hub
// (webhook configurations, ClusterRoles, StorageClasses, ...). A placement selects it by
// name; the hub never creates what it wraps, the members do. It may wrap only cluster-scoped
// objects.
type ClusterResourceEnvelope struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Data maps a key (such as "webhook.yaml") to a wrapped object's manifest.
	// +kubebuilder:validation:MaxProperties=50
	// +required
	Data map[string]runtime.RawExtension `json:"data"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={fleet,fleet-placement}

// ResourceEnvelope wraps namespaced objects that must not take effect on the hub (quotas,
// network policies, ...). It is placed with its namespace; a wrapped object without a
// namespace goes into the envelope's. It may wrap only namespaced objects.
type ResourceEnvelope struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Data maps a key (such as "quota.yaml") to a wrapped object's manifest.
	// +kubebuilder:validation:MaxProperties=50
	// +required
	Data map[string]runtime.RawExtension `json:"data"`
}

// +kubebuilder:object:root=true

// ClusterResourceEnvelopeList contains a list of ClusterResourceEnvelope.
type ClusterResourceEnvelopeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceEnvelope `json:"items"`
}

// +kubebuilder:object:root=true

// ResourceEnvelopeList contains a list of ResourceEnvelope.
type ResourceEnvelopeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceEnvelope `json:"items"`
}
