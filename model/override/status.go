package override

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// TypePlacementOverridden is the placement-level condition type; per cluster it is
// condition.TypeOverridden.
const TypePlacementOverridden = "ClusterResourcePlacementOverridden"

// Reasons of the Overridden conditions (OVR-STATUS; OverriddenPending is upstream's).
const (
	ReasonNoOverrideSpecified = "NoOverrideSpecified"
	ReasonOverriddenSucceeded = "OverriddenSucceeded"
	ReasonOverriddenFailed    = "OverriddenFailed"
	ReasonOverriddenPending   = "OverriddenPending"
)

// Messages, per cluster and placement-level (N = number of clusters).
const (
	MessageNoOverrideSpecified   = "No override rules are configured for the selected resources"
	MessageClusterSucceeded      = "Successfully applied the override rules on the resources"
	MessageClusterFailedPrefix   = "Failed to apply the override rules on the resources: "
	MessageClusterPending        = "In the process of overriding the selected resources if there is any override defined"
	messagePlacementSucceededFmt = "The selected resources are successfully overridden in the %d clusters"
	messagePlacementFailedFmt    = "Failed to override resources in %d cluster(s)"
	messagePlacementPendingFmt   = "There are still %d cluster(s) in the process of overriding the selected resources if there is any override defined"
)

// ClusterCondition is a cluster's Overridden condition, given the override snapshots
// applicable to it (ApplicableFor) and the first error applying them to the selected
// resources: NoOverrideSpecified when none applies, OverriddenFailed with the error, else
// OverriddenSucceeded.
func ClusterCondition(cro []string, ro []placement.NamespacedName, err error) condition.Condition {
	switch {
	case err != nil:
		return condition.False(condition.TypeOverridden, ReasonOverriddenFailed, MessageClusterFailedPrefix+err.Error())
	case len(cro) == 0 && len(ro) == 0:
		return condition.True(condition.TypeOverridden, ReasonNoOverrideSpecified, MessageNoOverrideSpecified)
	default:
		return condition.True(condition.TypeOverridden, ReasonOverriddenSucceeded, MessageClusterSucceeded)
	}
}

// ClusterPendingCondition is a cluster's Overridden condition before the work generator has
// applied its overrides.
func ClusterPendingCondition() condition.Condition {
	return condition.Condition{Type: condition.TypeOverridden, Status: metav1.ConditionUnknown, Reason: ReasonOverriddenPending, Message: MessageClusterPending}
}

// PlacementCondition is the placement-level ClusterResourcePlacementOverridden condition from
// the per-cluster Overridden conditions of the clusters that reached that stage (a missing
// condition, i.e. a zero Condition, counts as pending):
//
//   - Unknown OverriddenPending when any cluster is still pending, counting them;
//   - else False OverriddenFailed when any failed, counting the failures;
//   - else True: NoOverrideSpecified when no cluster has an override, OverriddenSucceeded with
//     the number of clusters otherwise.
func PlacementCondition(clusters []condition.Condition) condition.Condition {
	var pending, failed, overridden int
	for _, c := range clusters {
		switch {
		case c.Status == metav1.ConditionFalse:
			failed++
		case c.Status != metav1.ConditionTrue:
			pending++
		case c.Reason != ReasonNoOverrideSpecified:
			overridden++
		}
	}
	switch {
	case pending > 0:
		return condition.Condition{Type: TypePlacementOverridden, Status: metav1.ConditionUnknown, Reason: ReasonOverriddenPending, Message: fmt.Sprintf(messagePlacementPendingFmt, pending)}
	case failed > 0:
		return condition.False(TypePlacementOverridden, ReasonOverriddenFailed, fmt.Sprintf(messagePlacementFailedFmt, failed))
	case overridden == 0:
		return condition.True(TypePlacementOverridden, ReasonNoOverrideSpecified, MessageNoOverrideSpecified)
	default:
		return condition.True(TypePlacementOverridden, ReasonOverriddenSucceeded, fmt.Sprintf(messagePlacementSucceededFmt, len(clusters)))
	}
}
