package staged

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Kinds of the staged-update objects, in placement.GroupVersion (STAGED-STRATEGY,
// STAGED-RUN-API, STAGED-AFTER-STAGE-TASKS).
const (
	KindStrategy        = "ClusterStagedUpdateStrategy"
	KindRun             = "ClusterStagedUpdateRun"
	KindApprovalRequest = "ClusterApprovalRequest"
)

// DeletionStageName names the run's last stage, which deletes the bindings of clusters that
// are no longer selected.
const DeletionStageName = "kubernetes-fleet.io/deleteStage"

// Labels every approval request carries (ARCH-FINALIZERS-LABELS).
const (
	LabelTargetUpdateRun           = "kubernetes-fleet.io/targetupdaterun"
	LabelTargetUpdatingStage       = "kubernetes-fleet.io/targetUpdatingStage"
	LabelIsLatestUpdateRunApproval = "kubernetes-fleet.io/isLatestUpdateRunApproval"
)

// ClusterStagedUpdateStrategy is a v1beta1 ClusterStagedUpdateStrategy: a reusable list of
// stages. A run snapshots its spec when it initializes and ignores later edits.
type ClusterStagedUpdateStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              StagedUpdateStrategySpec `json:"spec"`
}

// StagedUpdateStrategySpec mirrors v1beta1 StagedUpdateStrategySpec.
type StagedUpdateStrategySpec struct {
	// Stages run in list order; at most MaxStages.
	Stages []StageConfig `json:"stages"`
}

// StageConfig mirrors v1beta1 StageConfig.
type StageConfig struct {
	// Name is unique within the strategy, at most 63 characters of [a-z0-9].
	Name string `json:"name"`
	// LabelSelector picks the stage's clusters among the placement's selected clusters; nil
	// picks all of them.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// SortingLabelKey orders the stage's clusters by the label's integer value, then by
	// name; without it, clusters go by name.
	SortingLabelKey *string `json:"sortingLabelKey,omitempty"`
	// AfterStageTasks run in parallel once every cluster of the stage succeeded; all must
	// complete before the next stage starts. At most one of each type.
	AfterStageTasks []AfterStageTask `json:"afterStageTasks,omitempty"`
	// BeforeStageTasks must complete before the stage's first cluster starts: at most one,
	// an Approval (its request is named <run>-before-<stage>).
	BeforeStageTasks []AfterStageTask `json:"beforeStageTasks,omitempty"`
	// MaxConcurrency is how many of the stage's clusters may update at once: a number, or
	// a percentage of the stage's clusters rounded down; at least 1. nil is 1.
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`
}

// AfterStageTaskType is the type of an after-stage task.
type AfterStageTaskType string

const (
	TaskTimedWait AfterStageTaskType = "TimedWait"
	TaskApproval  AfterStageTaskType = "Approval"
)

// AfterStageTask mirrors v1beta1 AfterStageTask.
type AfterStageTask struct {
	Type AfterStageTaskType `json:"type"`
	// WaitTime is required for TimedWait; its text form must match
	// ^0|([0-9]+(\.[0-9]+)?(s|m|h))+$ (see ValidateWaitTime).
	WaitTime *metav1.Duration `json:"waitTime,omitempty"`
}

// ClusterStagedUpdateRun is a v1beta1 ClusterStagedUpdateRun: one release of one resource
// snapshot index of one placement, stage by stage. The spec is immutable.
type ClusterStagedUpdateRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              StagedUpdateRunSpec   `json:"spec"`
	Status            StagedUpdateRunStatus `json:"status,omitempty"`
}

// StagedUpdateRunSpec mirrors v1beta1 StagedUpdateRunSpec.
type StagedUpdateRunSpec struct {
	PlacementName string `json:"placementName"`
	// ResourceSnapshotIndex is the resource snapshot index to roll out; empty means the
	// placement's latest index when the run initializes (STAGED-RUN-API).
	ResourceSnapshotIndex     string `json:"resourceSnapshotIndex,omitempty"`
	StagedRolloutStrategyName string `json:"stagedRolloutStrategyName"`
	// State is what the user wants of the run: Initialize (initialize it and wait), Run
	// (initialize if needed and execute; also what an empty state means, as in the
	// documentation's runs, which predate the field) or Stop (start no further cluster or
	// stage until it is Run again). The only field that may change.
	State RunState `json:"state,omitempty"`
}

// RunState is a run's spec.state.
type RunState string

const (
	StateInitialize RunState = "Initialize"
	StateRun        RunState = "Run"
	StateStop       RunState = "Stop"
)

// Executes reports whether the run may move clusters on: Run, or no state.
func (s StagedUpdateRunSpec) Executes() bool { return s.State == "" || s.State == StateRun }

// StagedUpdateRunStatus mirrors v1beta1 StagedUpdateRunStatus.
type StagedUpdateRunStatus struct {
	// PolicySnapshotIndexUsed is the placement's latest policy snapshot index at
	// initialization; a newer one aborts the run.
	PolicySnapshotIndexUsed string `json:"policySnapshotIndexUsed,omitempty"`
	// PolicyObservedClusterCount is the cluster count the scheduler observed at
	// initialization; a change aborts the run.
	PolicyObservedClusterCount int `json:"policyObservedClusterCount,omitempty"`
	// ResourceSnapshotIndexUsed is the resource snapshot index the run rolls out: the
	// spec's, or the latest at initialization when the spec names none. Fixed once set.
	ResourceSnapshotIndexUsed string `json:"resourceSnapshotIndexUsed,omitempty"`
	// AppliedStrategy is the placement's apply strategy at initialization, frozen.
	AppliedStrategy *placement.ApplyStrategy `json:"appliedStrategy,omitempty"`
	// StagedUpdateStrategySnapshot is the strategy's spec at initialization, frozen.
	StagedUpdateStrategySnapshot *StagedUpdateStrategySpec `json:"stagedUpdateStrategySnapshot,omitempty"`
	// StagesStatus holds one entry per stage of the snapshot, all filled at initialization.
	StagesStatus []StageUpdatingStatus `json:"stagesStatus,omitempty"`
	// DeletionStageStatus is the last stage, named DeletionStageName.
	DeletionStageStatus *StageUpdatingStatus `json:"deletionStageStatus,omitempty"`
	// Conditions: Initialized, Progressing, Succeeded.
	Conditions []condition.Timed `json:"conditions,omitempty"`
}

// StageUpdatingStatus mirrors v1beta1 StageUpdatingStatus.
type StageUpdatingStatus struct {
	StageName             string                  `json:"stageName"`
	Clusters              []ClusterUpdatingStatus `json:"clusters"`
	BeforeStageTaskStatus []AfterStageTaskStatus  `json:"beforeStageTaskStatus,omitempty"`
	AfterStageTaskStatus  []AfterStageTaskStatus  `json:"afterStageTaskStatus,omitempty"`
	StartTime             *time.Time              `json:"startTime,omitempty"`
	EndTime               *time.Time              `json:"endTime,omitempty"`
	// Conditions: Progressing, Succeeded.
	Conditions []condition.Timed `json:"conditions,omitempty"`
}

// ClusterUpdatingStatus mirrors v1beta1 ClusterUpdatingStatus. The override lists are
// computed once, at initialization.
type ClusterUpdatingStatus struct {
	ClusterName                      string                     `json:"clusterName"`
	ResourceOverrideSnapshots        []placement.NamespacedName `json:"resourceOverrideSnapshots,omitempty"`
	ClusterResourceOverrideSnapshots []string                   `json:"clusterResourceOverrideSnapshots,omitempty"`
	// Conditions: Started, Succeeded.
	Conditions []condition.Timed `json:"conditions,omitempty"`
}

// AfterStageTaskStatus mirrors v1beta1 AfterStageTaskStatus.
type AfterStageTaskStatus struct {
	Type AfterStageTaskType `json:"type"`
	// ApprovalRequestName is <run>-after-<stage> (<run>-before-<stage> before a stage), for
	// Approval tasks only.
	ApprovalRequestName string `json:"approvalRequestName,omitempty"`
	// Conditions: ApprovalRequestCreated and ApprovalRequestApproved, or WaitTimeElapsed.
	Conditions []condition.Timed `json:"conditions,omitempty"`
}

// ClusterApprovalRequest is a v1beta1 ClusterApprovalRequest. The controller creates it; a
// user approves it by setting the Approved condition on its status; the controller then adds
// ApprovalAccepted.
type ClusterApprovalRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ApprovalRequestSpec   `json:"spec"`
	Status            ApprovalRequestStatus `json:"status,omitempty"`
}

// ApprovalRequestSpec mirrors v1beta1 ApprovalRequestSpec; it is immutable.
type ApprovalRequestSpec struct {
	ParentStageRollout string `json:"parentStageRollout"`
	TargetStage        string `json:"targetStage"`
}

// ApprovalRequestStatus mirrors v1beta1 ApprovalRequestStatus.
type ApprovalRequestStatus struct {
	// Conditions: Approved (set by a user), ApprovalAccepted (set by the controller).
	Conditions []condition.Timed `json:"conditions,omitempty"`
}

// ApprovalRequestName names the approval request of an after-stage Approval task:
// <run>-after-<stage>, as KubeFleet's current release names it (its older documentation
// shows <run>-<stage>); a stage with both tasks has two distinct requests.
func ApprovalRequestName(run, stage string) string { return run + "-after-" + stage }

// BeforeStageApprovalRequestName names the approval request of a before-stage Approval
// task: <run>-before-<stage>.
func BeforeStageApprovalRequestName(run, stage string) string { return run + "-before-" + stage }

// ResourceSnapshotName is the leading resource snapshot of an index: {placement}-{index}-snapshot.
func ResourceSnapshotName(placementName string, index int) string {
	return placementName + "-" + itoa(index) + "-snapshot"
}

// DeepCopy copies the spec, selectors included.
func (s *StagedUpdateStrategySpec) DeepCopy() *StagedUpdateStrategySpec {
	if s == nil {
		return nil
	}
	out := &StagedUpdateStrategySpec{}
	if s.Stages != nil {
		out.Stages = make([]StageConfig, len(s.Stages))
		for i, st := range s.Stages {
			c := StageConfig{Name: st.Name, LabelSelector: st.LabelSelector.DeepCopy()}
			if st.MaxConcurrency != nil {
				m := *st.MaxConcurrency
				c.MaxConcurrency = &m
			}
			if st.BeforeStageTasks != nil {
				c.BeforeStageTasks = make([]AfterStageTask, len(st.BeforeStageTasks))
				for j, t := range st.BeforeStageTasks {
					c.BeforeStageTasks[j] = AfterStageTask{Type: t.Type}
				}
			}
			if st.SortingLabelKey != nil {
				k := *st.SortingLabelKey
				c.SortingLabelKey = &k
			}
			if st.AfterStageTasks != nil {
				c.AfterStageTasks = make([]AfterStageTask, len(st.AfterStageTasks))
				for j, t := range st.AfterStageTasks {
					c.AfterStageTasks[j] = AfterStageTask{Type: t.Type}
					if t.WaitTime != nil {
						w := *t.WaitTime
						c.AfterStageTasks[j].WaitTime = &w
					}
				}
			}
			out.Stages[i] = c
		}
	}
	return out
}

// DeepCopy copies the status.
func (s *StagedUpdateRunStatus) DeepCopy() *StagedUpdateRunStatus {
	if s == nil {
		return nil
	}
	out := &StagedUpdateRunStatus{
		PolicySnapshotIndexUsed:      s.PolicySnapshotIndexUsed,
		PolicyObservedClusterCount:   s.PolicyObservedClusterCount,
		ResourceSnapshotIndexUsed:    s.ResourceSnapshotIndexUsed,
		AppliedStrategy:              s.AppliedStrategy.Copy(),
		StagedUpdateStrategySnapshot: s.StagedUpdateStrategySnapshot.DeepCopy(),
		Conditions:                   copyConditions(s.Conditions),
	}
	if s.StagesStatus != nil {
		out.StagesStatus = make([]StageUpdatingStatus, len(s.StagesStatus))
		for i := range s.StagesStatus {
			out.StagesStatus[i] = *s.StagesStatus[i].DeepCopy()
		}
	}
	out.DeletionStageStatus = s.DeletionStageStatus.DeepCopy()
	return out
}

// DeepCopy copies a stage's status.
func (s *StageUpdatingStatus) DeepCopy() *StageUpdatingStatus {
	if s == nil {
		return nil
	}
	out := &StageUpdatingStatus{
		StageName:  s.StageName,
		StartTime:  copyTime(s.StartTime),
		EndTime:    copyTime(s.EndTime),
		Conditions: copyConditions(s.Conditions),
	}
	if s.Clusters != nil {
		out.Clusters = make([]ClusterUpdatingStatus, len(s.Clusters))
		for i, c := range s.Clusters {
			out.Clusters[i] = ClusterUpdatingStatus{
				ClusterName:                      c.ClusterName,
				ResourceOverrideSnapshots:        copySlice(c.ResourceOverrideSnapshots),
				ClusterResourceOverrideSnapshots: copySlice(c.ClusterResourceOverrideSnapshots),
				Conditions:                       copyConditions(c.Conditions),
			}
		}
	}
	if s.BeforeStageTaskStatus != nil {
		out.BeforeStageTaskStatus = make([]AfterStageTaskStatus, len(s.BeforeStageTaskStatus))
		for i, t := range s.BeforeStageTaskStatus {
			out.BeforeStageTaskStatus[i] = AfterStageTaskStatus{Type: t.Type, ApprovalRequestName: t.ApprovalRequestName, Conditions: copyConditions(t.Conditions)}
		}
	}
	if s.AfterStageTaskStatus != nil {
		out.AfterStageTaskStatus = make([]AfterStageTaskStatus, len(s.AfterStageTaskStatus))
		for i, t := range s.AfterStageTaskStatus {
			out.AfterStageTaskStatus[i] = AfterStageTaskStatus{Type: t.Type, ApprovalRequestName: t.ApprovalRequestName, Conditions: copyConditions(t.Conditions)}
		}
	}
	return out
}

// DeepCopy copies the run.
func (r *ClusterStagedUpdateRun) DeepCopy() *ClusterStagedUpdateRun {
	if r == nil {
		return nil
	}
	return &ClusterStagedUpdateRun{TypeMeta: r.TypeMeta, ObjectMeta: *r.ObjectMeta.DeepCopy(), Spec: r.Spec, Status: *r.Status.DeepCopy()}
}

// DeepCopy copies the approval request.
func (a *ClusterApprovalRequest) DeepCopy() *ClusterApprovalRequest {
	if a == nil {
		return nil
	}
	return &ClusterApprovalRequest{
		TypeMeta: a.TypeMeta, ObjectMeta: *a.ObjectMeta.DeepCopy(), Spec: a.Spec,
		Status: ApprovalRequestStatus{Conditions: copyConditions(a.Status.Conditions)},
	}
}

func copyConditions(cs []condition.Timed) []condition.Timed { return copySlice(cs) }

func copySlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}
