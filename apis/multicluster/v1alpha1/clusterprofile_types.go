package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/clusterprofile"
)

// LabelClusterManager is the label a cluster manager puts on every ClusterProfile it
// writes, valued with its spec.clusterManager.name, so that a reader can list one
// manager's profiles with a label selector.
const LabelClusterManager = clusterprofile.LabelClusterManager

// ConditionControlPlaneHealthy is the condition type saying whether the cluster's control
// plane is healthy (True), not (False) or not known (Unknown).
const ConditionControlPlaneHealthy = clusterprofile.TypeControlPlaneHealthy

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status

// ClusterProfile describes one cluster of a multi-cluster inventory: who manages it and
// what state it is in. The hub writes one per member cluster; other tools read them.
type ClusterProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterProfileSpec `json:"spec"`

	// +optional
	Status ClusterProfileStatus `json:"status,omitempty"`
}

// ClusterProfileSpec is what the cluster manager declares about the cluster.
type ClusterProfileSpec struct {
	// DisplayName is a name for people to read.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// ClusterManager names the system that owns this profile. It cannot change once set.
	// +required
	ClusterManager ClusterManager `json:"clusterManager"`
}

// ClusterManager names the cluster manager owning a profile.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterManager is immutable"
type ClusterManager struct {
	// Name of the cluster manager; also the value of the x-k8s.io/cluster-manager label.
	// +required
	Name string `json:"name"`
}

// ClusterProfileStatus is what the cluster manager observed of the cluster.
type ClusterProfileStatus struct {
	// Conditions of the cluster, such as ControlPlaneHealthy.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Version of the software the cluster runs.
	// +optional
	Version ClusterVersion `json:"version,omitempty"`

	// Properties are name-value facts about the cluster.
	// +optional
	Properties []Property `json:"properties,omitempty"`
}

// ClusterVersion is the version information of a cluster.
type ClusterVersion struct {
	// Kubernetes is the Kubernetes version the cluster runs.
	// +optional
	Kubernetes string `json:"kubernetes,omitempty"`
}

// Property is one named fact about a cluster and when it was last observed there.
type Property struct {
	// Name of the property: a well-known name or one the cluster manager defines.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Value of the property.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Value string `json:"value"`

	// LastObservedTime is when the property was last observed on the cluster (not when the
	// profile was written).
	// +optional
	LastObservedTime metav1.Time `json:"lastObservedTime,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterProfileList is a list of ClusterProfiles.
type ClusterProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProfile `json:"items"`
}
