package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Well-known names KubeFleet objects carry (ARCH-FINALIZERS-LABELS, SNAP-*, BIND-API).
const (
	FleetPrefix = "kubernetes-fleet.io/"

	// CRPTrackingLabel names the ClusterResourcePlacement a snapshot, binding or Work belongs to.
	CRPTrackingLabel = FleetPrefix + "parent-CRP"
	// IsLatestSnapshotLabel is "true" on the latest snapshot (or snapshot group) only.
	IsLatestSnapshotLabel = FleetPrefix + "is-latest-snapshot"
	// ResourceIndexLabel is the index of a ClusterResourceSnapshot's group.
	ResourceIndexLabel = FleetPrefix + "resource-index"
	// PolicyIndexLabel is the index of a ClusterSchedulingPolicySnapshot.
	PolicyIndexLabel = FleetPrefix + "policy-index"
	// OverrideTrackingLabel names the override an override snapshot belongs to.
	OverrideTrackingLabel = FleetPrefix + "override-tracking"
	// ParentBindingLabel names the ClusterResourceBinding a Work was generated for.
	ParentBindingLabel = FleetPrefix + "parent-resource-binding"

	// CRPGenerationAnnotation is the placement generation a policy snapshot was taken at.
	CRPGenerationAnnotation = FleetPrefix + "CRP-generation"
	// NumberOfClustersAnnotation is a PickN policy snapshot's numberOfClusters (DC-10).
	NumberOfClustersAnnotation = FleetPrefix + "number-of-clusters"
	// NumberOfResourceSnapshotsAnnotation is, on the first snapshot of a group, the group's size.
	NumberOfResourceSnapshotsAnnotation = FleetPrefix + "number-of-resource-snapshots"
	// NumberOfEnvelopedObjectsAnnotation counts the envelopes among a group's resources.
	NumberOfEnvelopedObjectsAnnotation = FleetPrefix + "number-of-enveloped-object"
	// ResourceGroupHashAnnotation is, on the first snapshot of a group, the group's sha-256.
	ResourceGroupHashAnnotation = FleetPrefix + "resource-hash"
	// SubindexOfResourceSnapshotAnnotation is, on every other snapshot of a group, its subindex.
	SubindexOfResourceSnapshotAnnotation = FleetPrefix + "subindex-of-resource-snapshot"
	// PreviousBindingStateAnnotation is the state a binding had before it was unscheduled.
	PreviousBindingStateAnnotation = FleetPrefix + "previous-binding-state"

	// PlacementCleanupFinalizer and SchedulerCleanupFinalizer are on every placement.
	PlacementCleanupFinalizer = FleetPrefix + "crp-cleanup"
	SchedulerCleanupFinalizer = FleetPrefix + "scheduler-cleanup"
	// WorkCleanupFinalizer is on every binding.
	WorkCleanupFinalizer = FleetPrefix + "work-cleanup"
	// OverrideCleanupFinalizer is on every ClusterResourceOverride and ResourceOverride.
	OverrideCleanupFinalizer = FleetPrefix + "override-cleanup"

	// Labels of a ClusterApprovalRequest (STAGED-AFTER-STAGE-TASKS).
	TargetUpdateRunLabel           = FleetPrefix + "targetupdaterun"
	TargetUpdatingStageLabel       = FleetPrefix + "targetUpdatingStage"
	IsLatestUpdateRunApprovalLabel = FleetPrefix + "isLatestUpdateRunApproval"
)

// Annotations fleetsim adds for what its hub records and KubeFleet's does not. They use a
// prefix of our own so they never pass for KubeFleet's.
const (
	ExtensionPrefix = "fleetsim.io/"

	// BindingGenerationAnnotation is a binding's generation as the hub's decisions count
	// it: one more each time the binding is bound to new content. The API server's
	// metadata.generation also counts the scheduler's changes (a binding unscheduled or
	// re-picked), which the decisions do not; conditions and Works observe this one.
	BindingGenerationAnnotation = ExtensionPrefix + "generation"
	// WorkBindingGenerationAnnotation is the binding generation a Work was generated for.
	WorkBindingGenerationAnnotation = ExtensionPrefix + "binding-generation"
	// WorkManifestEnvelopesAnnotation lists, as JSON, the envelope each of a Work's manifests
	// came in (null for a manifest that came in none). Absent when none did.
	WorkManifestEnvelopesAnnotation = ExtensionPrefix + "manifest-envelopes"
	// DeletePropagationPolicyAnnotation, on a Work, carries its placement's
	// strategy.deleteStrategy.propagationPolicy when it is Abandon (absent means Delete);
	// the member agent copies it to the Work's AppliedWork, so it still knows once the Work
	// is gone.
	DeletePropagationPolicyAnnotation = ExtensionPrefix + "delete-propagation-policy"
)

// NamespacedName comprises a resource name, with a mandatory namespace.
type NamespacedName struct {
	// Name is the name of the namespaced scope resource.
	// +required
	Name string `json:"name"`
	// Namespace is namespace of the namespaced scope resource.
	// +required
	Namespace string `json:"namespace"`
}

// EnvelopeType is the kind of an envelope object (DC-7: the legacy ConfigMap form and the
// ClusterResourceEnvelope and ResourceEnvelope kinds).
type EnvelopeType string

const (
	ConfigMapEnvelopeType               EnvelopeType = "ConfigMap"
	ClusterResourceEnvelopeEnvelopeType EnvelopeType = "ClusterResourceEnvelope"
	ResourceEnvelopeEnvelopeType        EnvelopeType = "ResourceEnvelope"
)

// EnvelopeIdentifier identifies the envelope object that contains the selected resource.
type EnvelopeIdentifier struct {
	// Name of the envelope object.
	// +required
	Name string `json:"name"`

	// Namespace is the namespace of the envelope object. Empty if the envelope object is
	// cluster scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Type of the envelope object.
	// +kubebuilder:validation:Enum=ConfigMap;ClusterResourceEnvelope;ResourceEnvelope
	// +optional
	Type EnvelopeType `json:"type,omitempty"`
}

// ResourceIdentifier identifies one Kubernetes resource.
type ResourceIdentifier struct {
	// Group is the group name of the selected resource.
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the version of the selected resource.
	// +required
	Version string `json:"version"`

	// Kind represents the Kind of the selected resources.
	// +required
	Kind string `json:"kind"`

	// Name of the target resource.
	// +required
	Name string `json:"name"`

	// Namespace is the namespace of the resource. Empty if the resource is cluster scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Envelope identifies the envelope object that contains this resource.
	// +optional
	Envelope *EnvelopeIdentifier `json:"envelope,omitempty"`
}

// FailedResourcePlacement contains the failure details of a failed resource placement.
type FailedResourcePlacement struct {
	// The resource failed.
	ResourceIdentifier `json:",inline"`

	// The failed condition status.
	// +required
	Condition metav1.Condition `json:"condition"`
}

// PatchDetail describes a patch that explains an observed configuration drift or difference,
// as an RFC 6902 JSON patch operation would.
type PatchDetail struct {
	// The JSON path (RFC 6901) of the field that drifted or differs.
	// +required
	Path string `json:"path"`

	// The value at the path on the member cluster side; absent when the path does not exist
	// there.
	// +optional
	ValueInMember string `json:"valueInMember,omitempty"`

	// The value at the path in the hub cluster manifest; absent when the path does not exist
	// there.
	// +optional
	ValueInHub string `json:"valueInHub,omitempty"`
}

// DriftedResourcePlacement contains the details of a resource with configuration drifts.
type DriftedResourcePlacement struct {
	// The resource that drifted.
	ResourceIdentifier `json:",inline"`

	// ObservationTime is the time when we observe the configuration drifts for the resource.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`

	// TargetClusterObservedGeneration is the generation of the resource on the target cluster
	// that contains the configuration drifts.
	// +required
	TargetClusterObservedGeneration int64 `json:"targetClusterObservedGeneration"`

	// FirstDriftedObservedTime is the first time the resource on the target cluster was
	// observed to have configuration drifts.
	// +required
	FirstDriftedObservedTime metav1.Time `json:"firstDriftedObservedTime"`

	// ObservedDrifts are the details about the found configuration drifts; Fleet might
	// truncate them to control the object size.
	// +optional
	ObservedDrifts []PatchDetail `json:"observedDrifts,omitempty"`
}

// DiffedResourcePlacement contains the details of a resource with configuration differences.
type DiffedResourcePlacement struct {
	// The resource that differs.
	ResourceIdentifier `json:",inline"`

	// ObservationTime is the time when we observe the configuration differences for the
	// resource.
	// +required
	ObservationTime metav1.Time `json:"observationTime"`

	// TargetClusterObservedGeneration is the generation of the resource on the target cluster
	// that contains the configuration differences; nil when the resource does not exist there.
	// +optional
	TargetClusterObservedGeneration *int64 `json:"targetClusterObservedGeneration,omitempty"`

	// FirstDiffedObservedTime is the first time the resource on the target cluster was
	// observed to have configuration differences.
	// +required
	FirstDiffedObservedTime metav1.Time `json:"firstDiffedObservedTime"`

	// ObservedDiffs are the details about the found configuration differences; Fleet might
	// truncate them to control the object size.
	// +optional
	ObservedDiffs []PatchDetail `json:"observedDiffs,omitempty"`
}

// ApplyStrategyType is how Fleet applies manifests to a member cluster (APPLY-API).
type ApplyStrategyType string

const (
	ApplyStrategyTypeClientSideApply ApplyStrategyType = "ClientSideApply"
	ApplyStrategyTypeServerSideApply ApplyStrategyType = "ServerSideApply"
	ApplyStrategyTypeReportDiff      ApplyStrategyType = "ReportDiff"
)

// ComparisonOptionType is how Fleet compares hub manifests with member objects.
type ComparisonOptionType string

const (
	ComparisonOptionTypePartialComparison ComparisonOptionType = "PartialComparison"
	ComparisonOptionTypeFullComparison    ComparisonOptionType = "FullComparison"
)

// WhenToApplyType is when Fleet applies hub manifests to member clusters.
type WhenToApplyType string

const (
	WhenToApplyTypeAlways       WhenToApplyType = "Always"
	WhenToApplyTypeIfNotDrifted WhenToApplyType = "IfNotDrifted"
)

// WhenToTakeOverType is what Fleet does when a manifest's object already exists on a member.
type WhenToTakeOverType string

const (
	WhenToTakeOverTypeAlways   WhenToTakeOverType = "Always"
	WhenToTakeOverTypeIfNoDiff WhenToTakeOverType = "IfNoDiff"
	WhenToTakeOverTypeNever    WhenToTakeOverType = "Never"
)

// ApplyStrategy describes when and how to apply the selected resources to the target
// cluster (APPLY-*).
type ApplyStrategy struct {
	// ComparisonOption controls how Fleet compares the hub manifest of a resource with its
	// member object: PartialComparison (only fields the manifest sets; the default) or
	// FullComparison (all fields).
	// +kubebuilder:default=PartialComparison
	// +kubebuilder:validation:Enum=PartialComparison;FullComparison
	// +optional
	ComparisonOption ComparisonOptionType `json:"comparisonOption,omitempty"`

	// WhenToApply controls when Fleet applies hub manifests: Always (the default; drifts in
	// managed fields are overwritten) or IfNotDrifted (stop applying to a drifted object).
	// +kubebuilder:default=Always
	// +kubebuilder:validation:Enum=Always;IfNotDrifted
	// +optional
	WhenToApply WhenToApplyType `json:"whenToApply,omitempty"`

	// Type is the apply strategy: ClientSideApply (the default), ServerSideApply, or
	// ReportDiff (report differences, apply nothing).
	// +kubebuilder:default=ClientSideApply
	// +kubebuilder:validation:Enum=ClientSideApply;ServerSideApply;ReportDiff
	// +optional
	Type ApplyStrategyType `json:"type,omitempty"`

	// AllowCoOwnership controls whether Fleet applies to an object other agents own.
	// +optional
	AllowCoOwnership bool `json:"allowCoOwnership,omitempty"`

	// ServerSideApplyConfig is honoured only when type is ServerSideApply.
	// +optional
	ServerSideApplyConfig *ServerSideApplyConfig `json:"serverSideApplyConfig,omitempty"`

	// WhenToTakeOver is what Fleet does when it first applies a manifest whose object already
	// exists on the member: Always (the default), IfNoDiff, or Never.
	// +kubebuilder:default=Always
	// +kubebuilder:validation:Enum=Always;IfNoDiff;Never
	// +optional
	WhenToTakeOver WhenToTakeOverType `json:"whenToTakeOver,omitempty"`
}

// ServerSideApplyConfig defines the configuration for server side apply.
type ServerSideApplyConfig struct {
	// Force makes apply take over conflicting fields from other field managers.
	// +optional
	ForceConflicts bool `json:"force,omitempty"`
}

// ClusterScore is the score the scheduler gave a cluster.
type ClusterScore struct {
	// AffinityScore is the score from the preferred affinity terms.
	// +optional
	AffinityScore *int32 `json:"affinityScore,omitempty"`

	// TopologySpreadScore (priorityScore) is the score from the topology spread constraints.
	// +optional
	TopologySpreadScore *int32 `json:"priorityScore,omitempty"`
}

// ClusterDecision records why the scheduler selected a cluster or not.
type ClusterDecision struct {
	// ClusterName is the name of the MemberCluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Selected indicates if this cluster is selected by the scheduler.
	// +optional
	Selected bool `json:"selected"`

	// ClusterScore is the score the scheduler gave the cluster.
	// +optional
	ClusterScore *ClusterScore `json:"clusterScore,omitempty"`

	// Reason says why the cluster is selected or not.
	// +optional
	Reason string `json:"reason"`

	// Plugin names the scheduler plugin that filtered the cluster out, if one did. This field
	// is a fleetsim extension; KubeFleet does not set it.
	// +optional
	Plugin string `json:"plugin,omitempty"`
}
