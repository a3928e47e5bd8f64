package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/staged"
)

// Condition types of staged update runs, stages, clusters, after-stage tasks and approval
// requests (STAGED-CONDITIONS).
const (
	StagedUpdateRunConditionInitialized = "Initialized"
	StagedUpdateRunConditionProgressing = "Progressing"
	StagedUpdateRunConditionSucceeded   = "Succeeded"
	ClusterUpdatingConditionStarted     = "Started"
	ApprovalRequestConditionApproved    = "Approved"
	ApprovalRequestConditionAccepted    = "ApprovalAccepted"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=csus,categories={fleet,fleet-placement}

// ClusterStagedUpdateStrategy is a reusable list of stages: which clusters update in which
// order, and what must happen between stages.
type ClusterStagedUpdateStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ClusterStagedUpdateStrategy.
	// +required
	Spec StagedUpdateStrategySpec `json:"spec"`
}

// StagedUpdateStrategySpec defines the desired state of the StagedUpdateStrategy.
type StagedUpdateStrategySpec struct {
	// Stages run one after another, in list order. 1-31 stages with unique names.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=31
	// +kubebuilder:validation:XValidation:rule="self.all(s, self.exists_one(t, t.name == s.name))",message="stage names must be unique"
	// +required
	Stages []StageConfig `json:"stages"`
}

// StageConfig describes one update stage. Its clusters update maxConcurrency at a time (one
// by default); the update stops if one fails.
type StageConfig struct {
	// The name of the stage, unique within the strategy.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]+$"
	// +required
	Name string `json:"name"`

	// LabelSelector picks the stage's clusters among the placement's selected clusters;
	// absent, it picks all of them. Stages must not overlap when a run is created.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// SortingLabelKey orders the stage's clusters by the label's integer value, then by
	// name; without it, clusters go by name.
	// +optional
	SortingLabelKey *string `json:"sortingLabelKey,omitempty"`

	// AfterStageTasks run in parallel once every cluster of the stage updated; all must
	// complete before the next stage. At most one of each type.
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="self.all(t, self.exists_one(u, u.type == t.type))",message="at most one after-stage task of each type"
	// +optional
	AfterStageTasks []AfterStageTask `json:"afterStageTasks,omitempty"`

	// BeforeStageTasks must complete before the stage's first cluster starts: at most one,
	// an Approval, whose ClusterApprovalRequest is named <run>-before-<stage>.
	// +kubebuilder:validation:MaxItems=1
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.type == 'Approval')",message="only an Approval task may run before a stage"
	// +optional
	BeforeStageTasks []AfterStageTask `json:"beforeStageTasks,omitempty"`

	// MaxConcurrency is how many of the stage's clusters may update at once: a number of at
	// least 1, or a percentage (1% to 100%) of the stage's clusters, rounded down and at
	// least 1. Absent, one at a time.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[1-9][0-9]?)%|[1-9][0-9]*)$"
	// +kubebuilder:validation:XValidation:rule="type(self) != int || self >= 1",message="maxConcurrency must be a number of at least 1 or a percentage from 1% to 100%"
	// +optional
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`
}

// AfterStageTask is one task that must complete before the next stage starts.
// +kubebuilder:validation:XValidation:rule="self.type != 'TimedWait' || has(self.waitTime)",message="waitTime is required for a TimedWait task"
// +kubebuilder:validation:XValidation:rule="self.type != 'Approval' || !has(self.waitTime)",message="waitTime is not allowed for an Approval task"
type AfterStageTask struct {
	// The type of the after-stage task: TimedWait or Approval.
	// +kubebuilder:validation:Enum=TimedWait;Approval
	// +required
	Type staged.AfterStageTaskType `json:"type"`

	// The time to wait after all the clusters of the stage updated, for a TimedWait task.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^(([1-9][0-9]*|0)(\\.[0-9]+)?(s|m|h))+$"
	// +optional
	WaitTime *metav1.Duration `json:"waitTime,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterStagedUpdateStrategyList contains a list of ClusterStagedUpdateStrategy.
type ClusterStagedUpdateStrategyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterStagedUpdateStrategy `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={csur,crsur},categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Placement",type=string,JSONPath=`.spec.placementName`
// +kubebuilder:printcolumn:name="Resource-Snapshot-Index",type=string,JSONPath=`.spec.resourceSnapshotIndex`
// +kubebuilder:printcolumn:name="Policy-Snapshot-Index",type=string,JSONPath=`.status.policySnapshotIndexUsed`
// +kubebuilder:printcolumn:name="Initialized",type=string,JSONPath=`.status.conditions[?(@.type=="Initialized")].status`
// +kubebuilder:printcolumn:name="Succeeded",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) < 64",message="metadata.name must be at most 63 characters: it names the run's approval requests and labels"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 253 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="metadata.name must be a lowercase RFC 1123 subdomain"

// ClusterStagedUpdateRun rolls one resource snapshot index of an External placement out
// stage by stage, then removes the resources from clusters no longer selected. Deleting it,
// or a change of the scheduling decision, abandons the release. The spec is immutable.
type ClusterStagedUpdateRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ClusterStagedUpdateRun. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self.placementName == oldSelf.placementName && has(self.resourceSnapshotIndex) == has(oldSelf.resourceSnapshotIndex) && (!has(self.resourceSnapshotIndex) || self.resourceSnapshotIndex == oldSelf.resourceSnapshotIndex) && self.stagedRolloutStrategyName == oldSelf.stagedRolloutStrategyName",message="the spec of a staged update run is immutable but for state"
	// +kubebuilder:validation:XValidation:rule="!has(self.state) || self.state != 'Initialize' || (has(oldSelf.state) && oldSelf.state == 'Initialize')",message="state cannot go back to Initialize once the run was told to Run or Stop"
	// +required
	Spec StagedUpdateRunSpec `json:"spec"`

	// The observed status of ClusterStagedUpdateRun.
	// +optional
	Status StagedUpdateRunStatus `json:"status,omitempty"`
}

// StagedUpdateRunSpec names the placement, the resource snapshot index to roll out and the
// strategy.
type StagedUpdateRunSpec struct {
	// PlacementName is the name of the placement this run updates.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	PlacementName string `json:"placementName"`

	// ResourceSnapshotIndex is the index of the resource snapshot group to roll out. Empty
	// means the placement's latest index when the run initializes; the index the run uses
	// is reported in status.resourceSnapshotIndexUsed.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ResourceSnapshotIndex string `json:"resourceSnapshotIndex,omitempty"`

	// StagedRolloutStrategyName names the ClusterStagedUpdateStrategy; the run snapshots it
	// when it starts.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	StagedRolloutStrategyName string `json:"stagedRolloutStrategyName"`

	// State is what the user wants of the run: Initialize (initialize, then wait), Run
	// (execute; an absent state means Run, as in runs written before the field existed)
	// or Stop (start no further cluster or stage until it is Run again).
	// +kubebuilder:validation:Enum=Initialize;Run;Stop
	// +optional
	State staged.RunState `json:"state,omitempty"`
}

// StagedUpdateRunStatus defines the observed state of the ClusterStagedUpdateRun.
type StagedUpdateRunStatus struct {
	// PolicySnapshotIndexUsed is the placement's latest policy snapshot index when the run
	// started; a newer one abandons the run.
	// +optional
	PolicySnapshotIndexUsed string `json:"policySnapshotIndexUsed,omitempty"`

	// PolicyObservedClusterCount is the number of clusters the policy snapshot observed when
	// the run started; a change abandons the run.
	// +optional
	PolicyObservedClusterCount int `json:"policyObservedClusterCount,omitempty"`

	// ResourceSnapshotIndexUsed is the resource snapshot index the run rolls out: the one
	// the spec names, or the placement's latest when the run initialized if it names none.
	// +optional
	ResourceSnapshotIndexUsed string `json:"resourceSnapshotIndexUsed,omitempty"`

	// AppliedStrategy is the placement's apply strategy when the run started, frozen.
	// +optional
	AppliedStrategy *ApplyStrategy `json:"appliedStrategy,omitempty"`

	// StagedUpdateStrategySnapshot is the strategy when the run started, frozen.
	// +optional
	StagedUpdateStrategySnapshot *StagedUpdateStrategySpec `json:"stagedUpdateStrategySnapshot,omitempty"`

	// StagesStatus lists the updating status of each stage.
	// +optional
	StagesStatus []StageUpdatingStatus `json:"stagesStatus,omitempty"`

	// DeletionStageStatus is the status of the last stage, which removes the resources from
	// clusters the policy no longer selects.
	// +optional
	DeletionStageStatus *StageUpdatingStatus `json:"deletionStageStatus,omitempty"`

	// Conditions: Initialized, Progressing, Succeeded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StageUpdatingStatus is the status of the run in one stage.
type StageUpdatingStatus struct {
	// The name of the stage.
	// +required
	StageName string `json:"stageName"`

	// The updating status of each cluster of the stage.
	// +required
	Clusters []ClusterUpdatingStatus `json:"clusters"`

	// The status of the stage's before-stage task (an Approval).
	// +kubebuilder:validation:MaxItems=1
	// +optional
	BeforeStageTaskStatus []AfterStageTaskStatus `json:"beforeStageTaskStatus,omitempty"`

	// The status of the stage's after-stage tasks.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	AfterStageTaskStatus []AfterStageTaskStatus `json:"afterStageTaskStatus,omitempty"`

	// When the stage started updating.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// When the stage finished updating.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// Conditions: Progressing, Succeeded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterUpdatingStatus is the status of the run on one cluster.
type ClusterUpdatingStatus struct {
	// The name of the cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// ResourceOverrideSnapshots applied to the cluster, computed when the run started.
	// +optional
	ResourceOverrideSnapshots []NamespacedName `json:"resourceOverrideSnapshots,omitempty"`

	// ClusterResourceOverrideSnapshots applied to the cluster, computed when the run started.
	// +optional
	ClusterResourceOverrideSnapshots []string `json:"clusterResourceOverrideSnapshots,omitempty"`

	// Conditions: Started, Succeeded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AfterStageTaskStatus is the status of one after-stage task.
type AfterStageTaskStatus struct {
	// The type of the task.
	// +kubebuilder:validation:Enum=TimedWait;Approval
	// +required
	Type staged.AfterStageTaskType `json:"type"`

	// The name of the approval request created for an Approval task: <run>-<stage>.
	// +optional
	ApprovalRequestName string `json:"approvalRequestName,omitempty"`

	// Conditions: ApprovalRequestCreated, ApprovalRequestApproved, WaitTimeElapsed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterStagedUpdateRunList contains a list of ClusterStagedUpdateRun.
type ClusterStagedUpdateRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterStagedUpdateRun `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=careq,categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Update-Run",type=string,JSONPath=`.spec.parentStageRollout`
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.spec.targetStage`
// +kubebuilder:printcolumn:name="Approved",type=string,JSONPath=`.status.conditions[?(@.type=="Approved")].status`
// +kubebuilder:printcolumn:name="ApprovalAccepted",type=string,JSONPath=`.status.conditions[?(@.type=="ApprovalAccepted")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterApprovalRequest asks a user to approve a stage of a staged update run. The run
// creates it named <run>-<stage> with the targetupdaterun, targetUpdatingStage and
// isLatestUpdateRunApproval labels; a user approves it by setting the Approved condition on
// its status. The spec is immutable.
type ClusterApprovalRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ClusterApprovalRequest. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the spec of an approval request is immutable"
	// +required
	Spec ApprovalRequestSpec `json:"spec"`

	// The observed state of ClusterApprovalRequest.
	// +optional
	Status ApprovalRequestStatus `json:"status,omitempty"`
}

// ApprovalRequestSpec names the run and stage an approval request is for.
type ApprovalRequestSpec struct {
	// The name of the staged update run that this approval request is for.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	ParentStageRollout string `json:"parentStageRollout"`

	// The name of the update stage that this approval request is for.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	TargetStage string `json:"targetStage"`
}

// ApprovalRequestStatus defines the observed state of the ClusterApprovalRequest.
type ApprovalRequestStatus struct {
	// Conditions: Approved (set by a user) and ApprovalAccepted (set by the controller).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterApprovalRequestList contains a list of ClusterApprovalRequest.
type ClusterApprovalRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterApprovalRequest `json:"items"`
}
