package convert

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/staged"
)

// StrategyToModel reads a ClusterStagedUpdateStrategy; nothing is lost.
func StrategyToModel(s *v1beta1.ClusterStagedUpdateStrategy) *staged.ClusterStagedUpdateStrategy {
	return &staged.ClusterStagedUpdateStrategy{TypeMeta: s.TypeMeta, ObjectMeta: *s.ObjectMeta.DeepCopy(), Spec: strategySpecToModel(s.Spec)}
}

// StrategyFromModel writes a ClusterStagedUpdateStrategy; nothing is lost.
func StrategyFromModel(s *staged.ClusterStagedUpdateStrategy) *v1beta1.ClusterStagedUpdateStrategy {
	out := &v1beta1.ClusterStagedUpdateStrategy{TypeMeta: s.TypeMeta, ObjectMeta: *s.ObjectMeta.DeepCopy(), Spec: strategySpecFromModel(s.Spec)}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), staged.KindStrategy
	return out
}

// UpdateRunToModel reads a ClusterStagedUpdateRun, spec and status; nothing is lost.
func UpdateRunToModel(r *v1beta1.ClusterStagedUpdateRun) *staged.ClusterStagedUpdateRun {
	s := r.Status
	return &staged.ClusterStagedUpdateRun{
		TypeMeta: r.TypeMeta, ObjectMeta: *r.ObjectMeta.DeepCopy(),
		Spec: staged.StagedUpdateRunSpec{
			PlacementName:             r.Spec.PlacementName,
			ResourceSnapshotIndex:     r.Spec.ResourceSnapshotIndex,
			StagedRolloutStrategyName: r.Spec.StagedRolloutStrategyName,
			State:                     r.Spec.State,
		},
		Status: staged.StagedUpdateRunStatus{
			PolicySnapshotIndexUsed:      s.PolicySnapshotIndexUsed,
			PolicyObservedClusterCount:   s.PolicyObservedClusterCount,
			ResourceSnapshotIndexUsed:    s.ResourceSnapshotIndexUsed,
			AppliedStrategy:              ApplyStrategyToModel(s.AppliedStrategy),
			StagedUpdateStrategySnapshot: strategySpecPtrToModel(s.StagedUpdateStrategySnapshot),
			StagesStatus:                 mapSlice(s.StagesStatus, stageStatusToModel),
			DeletionStageStatus:          stageStatusPtrToModel(s.DeletionStageStatus),
			Conditions:                   ConditionsToModel(s.Conditions),
		},
	}
}

// UpdateRunFromModel writes a ClusterStagedUpdateRun, spec and status; nothing is lost.
func UpdateRunFromModel(r *staged.ClusterStagedUpdateRun) *v1beta1.ClusterStagedUpdateRun {
	s := r.Status
	out := &v1beta1.ClusterStagedUpdateRun{
		TypeMeta: r.TypeMeta, ObjectMeta: *r.ObjectMeta.DeepCopy(),
		Spec: v1beta1.StagedUpdateRunSpec{
			PlacementName:             r.Spec.PlacementName,
			ResourceSnapshotIndex:     r.Spec.ResourceSnapshotIndex,
			StagedRolloutStrategyName: r.Spec.StagedRolloutStrategyName,
			State:                     r.Spec.State,
		},
		Status: v1beta1.StagedUpdateRunStatus{
			PolicySnapshotIndexUsed:      s.PolicySnapshotIndexUsed,
			PolicyObservedClusterCount:   s.PolicyObservedClusterCount,
			ResourceSnapshotIndexUsed:    s.ResourceSnapshotIndexUsed,
			AppliedStrategy:              ApplyStrategyFromModel(s.AppliedStrategy),
			StagedUpdateStrategySnapshot: strategySpecPtrFromModel(s.StagedUpdateStrategySnapshot),
			StagesStatus:                 mapSlice(s.StagesStatus, stageStatusFromModel),
			DeletionStageStatus:          stageStatusPtrFromModel(s.DeletionStageStatus),
			Conditions:                   ConditionsFromModel(s.Conditions),
		},
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), staged.KindRun
	return out
}

// ApprovalRequestToModel reads a ClusterApprovalRequest; nothing is lost.
func ApprovalRequestToModel(a *v1beta1.ClusterApprovalRequest) *staged.ClusterApprovalRequest {
	return &staged.ClusterApprovalRequest{
		TypeMeta: a.TypeMeta, ObjectMeta: *a.ObjectMeta.DeepCopy(),
		Spec:   staged.ApprovalRequestSpec{ParentStageRollout: a.Spec.ParentStageRollout, TargetStage: a.Spec.TargetStage},
		Status: staged.ApprovalRequestStatus{Conditions: ConditionsToModel(a.Status.Conditions)},
	}
}

// ApprovalRequestFromModel writes a ClusterApprovalRequest; nothing is lost.
func ApprovalRequestFromModel(a *staged.ClusterApprovalRequest) *v1beta1.ClusterApprovalRequest {
	out := &v1beta1.ClusterApprovalRequest{
		TypeMeta: a.TypeMeta, ObjectMeta: *a.ObjectMeta.DeepCopy(),
		Spec:   v1beta1.ApprovalRequestSpec{ParentStageRollout: a.Spec.ParentStageRollout, TargetStage: a.Spec.TargetStage},
		Status: v1beta1.ApprovalRequestStatus{Conditions: ConditionsFromModel(a.Status.Conditions)},
	}
	out.APIVersion, out.Kind = v1beta1.GroupVersion.String(), staged.KindApprovalRequest
	return out
}

func strategySpecToModel(s v1beta1.StagedUpdateStrategySpec) staged.StagedUpdateStrategySpec {
	return staged.StagedUpdateStrategySpec{Stages: mapSlice(s.Stages, func(c v1beta1.StageConfig) staged.StageConfig {
		return staged.StageConfig{
			Name: c.Name, LabelSelector: c.LabelSelector.DeepCopy(), SortingLabelKey: copyPtr(c.SortingLabelKey),
			MaxConcurrency:   copyPtr(c.MaxConcurrency),
			BeforeStageTasks: tasksToModel(c.BeforeStageTasks),
			AfterStageTasks:  tasksToModel(c.AfterStageTasks),
		}
	})}
}

func strategySpecFromModel(s staged.StagedUpdateStrategySpec) v1beta1.StagedUpdateStrategySpec {
	return v1beta1.StagedUpdateStrategySpec{Stages: mapSlice(s.Stages, func(c staged.StageConfig) v1beta1.StageConfig {
		return v1beta1.StageConfig{
			Name: c.Name, LabelSelector: c.LabelSelector.DeepCopy(), SortingLabelKey: copyPtr(c.SortingLabelKey),
			MaxConcurrency:   copyPtr(c.MaxConcurrency),
			BeforeStageTasks: tasksFromModel(c.BeforeStageTasks),
			AfterStageTasks:  tasksFromModel(c.AfterStageTasks),
		}
	})}
}

func strategySpecPtrToModel(s *v1beta1.StagedUpdateStrategySpec) *staged.StagedUpdateStrategySpec {
	if s == nil {
		return nil
	}
	out := strategySpecToModel(*s)
	return &out
}

func strategySpecPtrFromModel(s *staged.StagedUpdateStrategySpec) *v1beta1.StagedUpdateStrategySpec {
	if s == nil {
		return nil
	}
	out := strategySpecFromModel(*s)
	return &out
}

func stageStatusToModel(s v1beta1.StageUpdatingStatus) staged.StageUpdatingStatus {
	return staged.StageUpdatingStatus{
		StageName: s.StageName,
		Clusters: mapSlice(s.Clusters, func(c v1beta1.ClusterUpdatingStatus) staged.ClusterUpdatingStatus {
			return staged.ClusterUpdatingStatus{
				ClusterName:                      c.ClusterName,
				ResourceOverrideSnapshots:        mapSlice(c.ResourceOverrideSnapshots, namespacedNameToModel),
				ClusterResourceOverrideSnapshots: slices.Clone(c.ClusterResourceOverrideSnapshots),
				Conditions:                       ConditionsToModel(c.Conditions),
			}
		}),
		BeforeStageTaskStatus: mapSlice(s.BeforeStageTaskStatus, taskStatusToModel),
		AfterStageTaskStatus:  mapSlice(s.AfterStageTaskStatus, taskStatusToModel),
		StartTime:             timeToModel(s.StartTime),
		EndTime:               timeToModel(s.EndTime),
		Conditions:            ConditionsToModel(s.Conditions),
	}
}

func stageStatusFromModel(s staged.StageUpdatingStatus) v1beta1.StageUpdatingStatus {
	return v1beta1.StageUpdatingStatus{
		StageName: s.StageName,
		Clusters: mapSlice(s.Clusters, func(c staged.ClusterUpdatingStatus) v1beta1.ClusterUpdatingStatus {
			return v1beta1.ClusterUpdatingStatus{
				ClusterName:                      c.ClusterName,
				ResourceOverrideSnapshots:        mapSlice(c.ResourceOverrideSnapshots, namespacedNameFromModel),
				ClusterResourceOverrideSnapshots: slices.Clone(c.ClusterResourceOverrideSnapshots),
				Conditions:                       ConditionsFromModel(c.Conditions),
			}
		}),
		BeforeStageTaskStatus: mapSlice(s.BeforeStageTaskStatus, taskStatusFromModel),
		AfterStageTaskStatus:  mapSlice(s.AfterStageTaskStatus, taskStatusFromModel),
		StartTime:             timeFromModel(s.StartTime),
		EndTime:               timeFromModel(s.EndTime),
		Conditions:            ConditionsFromModel(s.Conditions),
	}
}

func stageStatusPtrToModel(s *v1beta1.StageUpdatingStatus) *staged.StageUpdatingStatus {
	if s == nil {
		return nil
	}
	out := stageStatusToModel(*s)
	return &out
}

func stageStatusPtrFromModel(s *staged.StageUpdatingStatus) *v1beta1.StageUpdatingStatus {
	if s == nil {
		return nil
	}
	out := stageStatusFromModel(*s)
	return &out
}

func timeToModel(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := t.Time
	return &c
}

func timeFromModel(t *time.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	return &metav1.Time{Time: *t}
}

func taskStatusToModel(t v1beta1.AfterStageTaskStatus) staged.AfterStageTaskStatus {
	return staged.AfterStageTaskStatus{Type: t.Type, ApprovalRequestName: t.ApprovalRequestName, Conditions: ConditionsToModel(t.Conditions)}
}

func taskStatusFromModel(t staged.AfterStageTaskStatus) v1beta1.AfterStageTaskStatus {
	return v1beta1.AfterStageTaskStatus{Type: t.Type, ApprovalRequestName: t.ApprovalRequestName, Conditions: ConditionsFromModel(t.Conditions)}
}

func tasksToModel(ts []v1beta1.AfterStageTask) []staged.AfterStageTask {
	return mapSlice(ts, func(t v1beta1.AfterStageTask) staged.AfterStageTask {
		return staged.AfterStageTask{Type: t.Type, WaitTime: copyPtr(t.WaitTime)}
	})
}

func tasksFromModel(ts []staged.AfterStageTask) []v1beta1.AfterStageTask {
	return mapSlice(ts, func(t staged.AfterStageTask) v1beta1.AfterStageTask {
		return v1beta1.AfterStageTask{Type: t.Type, WaitTime: copyPtr(t.WaitTime)}
	})
}
