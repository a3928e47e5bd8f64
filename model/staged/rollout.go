package staged

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// PlacementRolloutCondition is the per-cluster RolloutStarted condition of a placement whose
// rollout strategy is External (STAGED-CRP-EXTERNAL, STAGED-EXEC). Until a run has updated
// the cluster's binding it is Unknown/RolloutStartedUnknown "In the process of deciding
// whether to roll out the latest resources or not"; afterwards it is the binding's own
// RolloutStarted=True, whose message names the resource snapshot index and the run.
//
// resourceSnapshotName is the snapshot the placement status reports on; a binding a run
// rolled to another snapshot counts as not updated yet. Empty accepts any snapshot.
func PlacementRolloutCondition(b *placement.Binding, resourceSnapshotName string) condition.Condition {
	if b != nil && b.State == placement.Bound && (resourceSnapshotName == "" || b.ResourceSnapshotName == resourceSnapshotName) {
		if c, ok := condition.Find(b.Conditions, condition.TypeRolloutStarted); ok &&
			c.Status == metav1.ConditionTrue && c.ObservedGeneration == b.Generation {
			return c.Condition
		}
	}
	return condition.Condition{
		Type:    condition.TypeRolloutStarted,
		Status:  metav1.ConditionUnknown,
		Reason:  ReasonRolloutStartedUnknown,
		Message: MessageRolloutStartedUnknown,
	}
}
