package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/placement"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={rb,crb},categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="WorkSynchronized",type=string,JSONPath=`.status.conditions[?(@.type=="WorkSynchronized")].status`
// +kubebuilder:printcolumn:name="ResourcesApplied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterResourceBinding binds a placement's resources to one cluster: the scheduler creates
// it Scheduled and marks it Unscheduled; the rollout controller (or a staged update run)
// binds it and deletes it. It is named {CRP}-{cluster}-{8 hex} and labelled with
// kubernetes-fleet.io/parent-CRP.
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ClusterResourceBinding.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// The observed status of ClusterResourceBinding.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingSpec defines the desired state of ClusterResourceBinding.
type ResourceBindingSpec struct {
	// The desired state of the binding: Scheduled, Bound or Unscheduled.
	// +kubebuilder:validation:Enum=Scheduled;Bound;Unscheduled
	// +optional
	State placement.BindingState `json:"state,omitempty"`

	// ResourceSnapshotName names the leading resource snapshot of the index group the
	// binding points to; empty while Scheduled.
	// +optional
	ResourceSnapshotName string `json:"resourceSnapshotName,omitempty"`

	// ResourceOverrideSnapshots lists the ResourceOverride snapshots applied with the resources.
	// +optional
	ResourceOverrideSnapshots []NamespacedName `json:"resourceOverrideSnapshots,omitempty"`

	// ClusterResourceOverrideSnapshots lists the ClusterResourceOverride snapshots applied with
	// the resources.
	// +optional
	ClusterResourceOverrideSnapshots []string `json:"clusterResourceOverrideSnapshots,omitempty"`

	// SchedulingPolicySnapshotName names the policy snapshot the scheduler picked the cluster for.
	// +optional
	SchedulingPolicySnapshotName string `json:"schedulingPolicySnapshotName,omitempty"`

	// TargetCluster is the name of the cluster the scheduler assigned the resources to.
	// +optional
	TargetCluster string `json:"targetCluster,omitempty"`

	// ClusterDecision explains why the scheduler selected this cluster.
	// +optional
	ClusterDecision ClusterDecision `json:"clusterDecision,omitempty"`

	// ApplyStrategy is the placement's apply strategy as of the binding's last rollout.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`
}

// ResourceBindingStatus represents the current status of a ClusterResourceBinding.
type ResourceBindingStatus struct {
	// FailedPlacements lists resources that failed to apply or are not available (at most 100).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailedPlacements []FailedResourcePlacement `json:"failedPlacements,omitempty"`

	// DriftedPlacements lists resources that drifted from their hub manifests (at most 100).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DriftedPlacements []DriftedResourcePlacement `json:"driftedPlacements,omitempty"`

	// DiffedPlacements lists resources that differ from their hub manifests (at most 100).
	// +kubebuilder:validation:MaxItems=100
	// +optional
	DiffedPlacements []DiffedResourcePlacement `json:"diffedPlacements,omitempty"`

	// Conditions: RolloutStarted, Overridden, WorkSynchronized, Applied, Available (or
	// DiffReported).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourceBindingList contains a list of ClusterResourceBinding.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceBinding `json:"items"`
}
