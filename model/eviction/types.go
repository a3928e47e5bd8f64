package eviction

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Kinds of the two objects, in placement.GroupVersion (EVICT-API, PDB-API).
const (
	KindEviction         = "ClusterResourcePlacementEviction"
	KindDisruptionBudget = "ClusterResourcePlacementDisruptionBudget"
)

// MaxNameLength bounds spec.placementName and spec.clusterName of an eviction (EVICT-API).
const MaxNameLength = 255

// Eviction is a v1beta1 ClusterResourcePlacementEviction. Its spec is immutable; its status
// is written once, by the driver applying a Decision.
type Eviction struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              EvictionSpec   `json:"spec"`
	Status            EvictionStatus `json:"status,omitempty"`
}

// EvictionSpec mirrors v1beta1 PlacementEvictionSpec.
type EvictionSpec struct {
	// PlacementName names the ClusterResourcePlacement whose placement is evicted.
	PlacementName string `json:"placementName"`
	// ClusterName names the member cluster the placement is evicted from.
	ClusterName string `json:"clusterName"`
}

// EvictionStatus mirrors v1beta1 PlacementEvictionStatus: the Valid and Executed conditions.
type EvictionStatus struct {
	Conditions []condition.Timed `json:"conditions,omitempty"`
}

// Terminal reports whether the eviction was already reconciled (EVICT-SEMANTICS): it is
// invalid (Valid=False) or it carries an Executed condition, True or False. An eviction with
// neither condition, or with Valid=True alone, was interrupted and is reconciled again.
// Drivers pass it as Input.Reconciled.
func (e *Eviction) Terminal() bool {
	if v, ok := condition.Find(e.Status.Conditions, TypeValid); ok && v.Status == metav1.ConditionFalse {
		return true
	}
	_, executed := condition.Find(e.Status.Conditions, TypeExecuted)
	return executed
}

// DisruptionBudget is a v1beta1 ClusterResourcePlacementDisruptionBudget. Its name is the
// name of the placement it protects (PDB-API).
type DisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DisruptionBudgetSpec `json:"spec"`
}

// DisruptionBudgetSpec mirrors v1beta1 PlacementDisruptionBudgetSpec: exactly one of the two
// fields is set, each an absolute number or a percentage of the placement's
// numberOfClusters (PickN only), rounded up.
type DisruptionBudgetSpec struct {
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	MinAvailable   *intstr.IntOrString `json:"minAvailable,omitempty"`
}

// Placement is what the eviction decision needs to know about the targeted
// ClusterResourcePlacement.
type Placement struct {
	Name string
	// Type is the policy's placement type; empty means PickAll, the API default.
	Type placement.PlacementType
	// NumberOfClusters is the PickN policy's numberOfClusters; percentages in a budget are
	// taken of it. Ignored for other types.
	NumberOfClusters int
	// Deleting is true once the placement's deletion was requested.
	Deleting bool
}

// PlacementOf views a ClusterResourcePlacement for Decide; nil stays nil (a missing
// placement).
func PlacementOf(crp *placement.ClusterResourcePlacement) *Placement {
	if crp == nil {
		return nil
	}
	p := &Placement{Name: crp.Name, Type: crp.Spec.Policy.Type(), Deleting: crp.DeletionTimestamp != nil}
	if crp.Spec.Policy != nil && crp.Spec.Policy.NumberOfClusters != nil {
		p.NumberOfClusters = int(*crp.Spec.Policy.NumberOfClusters)
	}
	return p
}

// Condition types on an eviction (EVICT-API).
const (
	TypeValid    = "Valid"
	TypeExecuted = "Executed"
)

// Reasons of the Valid and Executed conditions (EVICT-VALIDATION, EVICT-EXECUTION).
const (
	ReasonValid       = "ClusterResourcePlacementEvictionValid"
	ReasonInvalid     = "ClusterResourcePlacementEvictionInvalid"
	ReasonExecuted    = "ClusterResourcePlacementEvictionExecuted"
	ReasonNotExecuted = "ClusterResourcePlacementEvictionNotExecuted"
)

// Messages of the Valid condition, in the order the checks run (EVICT-VALIDATION).
const (
	MessageValid                    = "Eviction is valid"
	MessageInvalidMissingPlacement  = "Failed to find ClusterResourcePlacement targeted by eviction"
	MessageInvalidDeletingPlacement = "Found deleting ClusterResourcePlacement targeted by eviction"
	MessageInvalidPickFixed         = "Found ClusterResourcePlacement with PickFixed placement type targeted by eviction"
	MessageInvalidMissingBinding    = "Failed to find scheduler decision for placement in cluster targeted by eviction"
	MessageInvalidMultipleBindings  = "Found more than one scheduler decision for placement in cluster targeted by eviction"
)

// Messages of the Executed condition (EVICT-EXECUTION, Appendix A). The two budget messages
// are formats taking availablePlacements and totalPlacements.
const (
	MessageAllowedBindingDeleting = "Eviction is allowed, resources propagated by placement is currently being removed from cluster targeted by eviction"
	MessageAllowedPlacementFailed = "Eviction is allowed, placement has failed"
	MessageBlockedNotPropagated   = "Eviction is blocked, placement has not propagated resources to target cluster yet"
	MessageAllowedNoBudget        = "Eviction is allowed, no ClusterResourcePlacementDisruptionBudget specified"
	MessageBlockedMisconfigured   = "Eviction is blocked by misconfigured ClusterResourcePlacementDisruptionBudget, either MaxUnavailable is specified or MinAvailable is specified as a percentage for PickAll ClusterResourcePlacement"
	FormatAllowedByBudget         = "Eviction is allowed by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: %d, totalPlacements: %d"
	FormatBlockedByBudget         = "Eviction is blocked by specified ClusterResourcePlacementDisruptionBudget, availablePlacements: %d, totalPlacements: %d"
)
