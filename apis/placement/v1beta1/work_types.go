package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Work condition types (WORK-API).
const (
	WorkConditionTypeApplied      = "Applied"
	WorkConditionTypeProgressing  = "Progressing"
	WorkConditionTypeAvailable    = "Available"
	WorkConditionTypeDegraded     = "Degraded"
	WorkConditionTypeDiffReported = "DiffReported"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=work,categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Work holds the manifests one binding places on its cluster, in the member's reserved
// namespace fleet-member-<cluster>, labelled with kubernetes-fleet.io/parent-CRP. The member
// agent applies them and reports per-manifest conditions in the status.
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the workload of a work.
	// +optional
	Spec WorkSpec `json:"spec,omitempty"`

	// Status defines the status of each applied manifest on the member cluster.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// WorkSpec defines the desired state of Work.
type WorkSpec struct {
	// Workload represents the manifest workload to be deployed on the member cluster.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`

	// ApplyStrategy describes how the member agent applies the manifests.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`

	// ReportBackStrategy is the placement's: under Mirror the member agent reports each
	// applied object's status in manifestConditions[].backReportedStatus.
	// +optional
	ReportBackStrategy *ReportBackStrategy `json:"reportBackStrategy,omitempty"`
}

// WorkloadTemplate represents the manifest workload to be deployed on the member cluster.
type WorkloadTemplate struct {
	// Manifests represents a list of Kubernetes resources to be deployed on the member cluster.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest represents a resource to be deployed on the member cluster.
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:EmbeddedResource
type Manifest struct {
	runtime.RawExtension `json:",inline"`
}

// WorkStatus defines the observed state of Work.
type WorkStatus struct {
	// Conditions of the work as a whole: Applied, Progressing, Available, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ManifestConditions holds the conditions of each manifest.
	// +optional
	ManifestConditions []ManifestCondition `json:"manifestConditions,omitempty"`
}

// ManifestCondition represents the conditions of one manifest on the member cluster.
type ManifestCondition struct {
	// Identifier names the manifest, by its ordinal in spec.workload.manifests.
	// +required
	Identifier WorkResourceIdentifier `json:"identifier"`

	// Conditions of the manifest: Applied, Available, DiffReported.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// DriftDetails explains the observed configuration drifts; never set together with
	// DiffDetails.
	// +optional
	DriftDetails *DriftDetails `json:"driftDetails,omitempty"`

	// DiffDetails explains the observed configuration differences; never set together with
	// DriftDetails.
	// +optional
	DiffDetails *DiffDetails `json:"diffDetails,omitempty"`

	// BackReportedStatus is the applied object's status as the member holds it, when the
	// Work's report-back strategy is Mirror.
	// +optional
	BackReportedStatus *BackReportedStatus `json:"backReportedStatus,omitempty"`
}

// BackReportedStatus is an object's status reported back by the member agent.
type BackReportedStatus struct {
	// ObservedStatus is the object's apiVersion, kind and status.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	// +optional
	ObservedStatus runtime.RawExtension `json:"observedStatus,omitempty"`

	// ObservationTime is when the status was last reported back.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`
}

// WorkResourceIdentifier identifies one manifest of a Work and the object it became.
type WorkResourceIdentifier struct {
	// Ordinal is the index of the manifest in spec.workload.manifests.
	// +required
	Ordinal int `json:"ordinal"`

	// Group is the group of the resource.
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the version of the resource.
	// +optional
	Version string `json:"version,omitempty"`

	// Kind is the kind of the resource.
	// +optional
	Kind string `json:"kind,omitempty"`

	// Resource is the resource type of the resource.
	// +optional
	Resource string `json:"resource,omitempty"`

	// Namespace is the namespace of the resource; empty if it is cluster scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the name of the resource.
	// +optional
	Name string `json:"name,omitempty"`
}

// DriftDetails describes the observed configuration drifts.
type DriftDetails struct {
	// ObservationTime is when the drift was last detected.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`

	// ObservedInMemberClusterGeneration is the generation of the applied object on the member.
	// +required
	ObservedInMemberClusterGeneration int64 `json:"observedInMemberClusterGeneration"`

	// FirstDriftedObservedTime is when the drift was first detected.
	// +required
	FirstDriftedObservedTime metav1.Time `json:"firstDriftedObservedTime"`

	// ObservedDrifts describes each drifted field; Fleet might truncate them.
	// +optional
	ObservedDrifts []PatchDetail `json:"observedDrifts,omitempty"`
}

// DiffDetails describes the observed configuration differences.
type DiffDetails struct {
	// ObservationTime is when the difference was last detected.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`

	// ObservedInMemberClusterGeneration is the generation of the object on the member; nil
	// when it does not exist there.
	// +optional
	ObservedInMemberClusterGeneration *int64 `json:"observedInMemberClusterGeneration,omitempty"`

	// FirstDiffedObservedTime is when the difference was first detected.
	// +required
	FirstDiffedObservedTime metav1.Time `json:"firstDiffedObservedTime"`

	// ObservedDiffs describes each field that differs; Fleet might truncate them.
	// +optional
	ObservedDiffs []PatchDetail `json:"observedDiffs,omitempty"`
}

// +kubebuilder:object:root=true

// WorkList contains a list of Work.
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Work `json:"items"`
}
