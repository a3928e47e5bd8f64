package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MaxTargetClusters caps a policy snapshot's status.targetClusters.
const MaxTargetClusters = 1000

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={pss,csps},categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Gen",type=string,JSONPath=`.metadata.generation`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterSchedulingPolicySnapshot is an immutable copy of a placement's policy, named
// {CRP}-{policyIndex} and labelled with kubernetes-fleet.io/parent-CRP, policy-index and
// is-latest-snapshot. numberOfClusters lives in the number-of-clusters annotation, so that
// scaling a PickN placement updates the snapshot instead of creating a new one. The
// scheduler records its decisions in the status.
type ClusterSchedulingPolicySnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of SchedulingPolicySnapshot. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the spec of a policy snapshot is immutable"
	// +required
	Spec SchedulingPolicySnapshotSpec `json:"spec"`

	// The observed status of SchedulingPolicySnapshot.
	// +optional
	Status SchedulingPolicySnapshotStatus `json:"status,omitempty"`
}

// SchedulingPolicySnapshotSpec defines the desired state of SchedulingPolicySnapshot.
type SchedulingPolicySnapshotSpec struct {
	// Policy is a copy of the placement's policy, without numberOfClusters.
	// +optional
	Policy *PlacementPolicy `json:"policy,omitempty"`

	// PolicyHash is the sha-256 hash of the policy (its hex text).
	// +required
	PolicyHash []byte `json:"policyHash"`
}

// SchedulingPolicySnapshotStatus defines the observed state of SchedulingPolicySnapshot.
type SchedulingPolicySnapshotStatus struct {
	// ObservedCRPGeneration is the placement generation the scheduler decided for.
	// +optional
	ObservedCRPGeneration int64 `json:"observedCRPGeneration,omitempty"`

	// Conditions holds the Scheduled condition.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ClusterDecisions lists the clusters the scheduler considered: every selected cluster,
	// then as many unselected ones as fit, most insightful first.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	ClusterDecisions []ClusterDecision `json:"targetClusters,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterSchedulingPolicySnapshotList contains a list of ClusterSchedulingPolicySnapshot.
type ClusterSchedulingPolicySnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterSchedulingPolicySnapshot `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={rss,crs},categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Gen",type=string,JSONPath=`.metadata.generation`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterResourceSnapshot stores the resources a placement selected at one moment. One index
// group may span several snapshots to stay under the object size limit: the first is named
// {CRP}-{index}-snapshot and carries the number-of-resource-snapshots and resource-hash
// annotations, the others {CRP}-{index}-{subindex} with the subindex annotation; all carry
// the parent-CRP, resource-index and is-latest-snapshot labels. The spec is immutable.
type ClusterResourceSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ResourceSnapshot. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the spec of a resource snapshot is immutable"
	// +required
	Spec ResourceSnapshotSpec `json:"spec"`

	// The observed status of ResourceSnapshot.
	// +optional
	Status ResourceSnapshotStatus `json:"status,omitempty"`
}

// ResourceSnapshotSpec defines the desired state of ResourceSnapshot.
type ResourceSnapshotSpec struct {
	// SelectedResources holds the selected resources, stripped to what their authors wrote.
	// +required
	SelectedResources []ResourceContent `json:"selectedResources"`
}

// ResourceContent is the content of one resource.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:EmbeddedResource
type ResourceContent struct {
	runtime.RawExtension `json:",inline"`
}

// ResourceSnapshotStatus defines the observed state of ResourceSnapshot.
type ResourceSnapshotStatus struct {
	// Conditions is an array of current observed conditions for ResourceSnapshot.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceSnapshotList contains a list of ClusterResourceSnapshot.
type ClusterResourceSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceSnapshot `json:"items"`
}
