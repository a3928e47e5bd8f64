package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Defaults and limits of a ClusterResourcePlacement (section 22 of the spec).
const (
	DefaultRevisionHistoryLimit     = 10
	DefaultMaxUnavailable           = "25%"
	DefaultMaxSurge                 = "25%"
	DefaultUnavailablePeriodSeconds = 60
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=crp,categories={fleet,fleet-placement}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Gen",type=string,JSONPath=`.metadata.generation`
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].status`
// +kubebuilder:printcolumn:name="Scheduled-Gen",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].observedGeneration`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].status`
// +kubebuilder:printcolumn:name="Available-Gen",type=string,JSONPath=`.status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].observedGeneration`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ClusterResourcePlacement selects cluster-scoped resources (a selected namespace brings
// everything in it) and places them onto member clusters picked by its policy, rolled out
// by its strategy.
type ClusterResourcePlacement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ClusterResourcePlacement.
	// +kubebuilder:validation:XValidation:rule="has(self.policy) || !has(oldSelf.policy) || (oldSelf.policy.placementType == 'PickAll' && (!has(oldSelf.policy.tolerations) || size(oldSelf.policy.tolerations) == 0))",message="policy can only be removed from a PickAll placement without tolerations: placementType is immutable and tolerations cannot be removed"
	// +kubebuilder:validation:XValidation:rule="has(oldSelf.policy) || !has(self.policy) || self.policy.placementType == 'PickAll'",message="placementType is immutable: a placement created without a policy is PickAll"
	// +kubebuilder:validation:XValidation:rule="!has(self.statusReportingScope) || self.statusReportingScope != 'NamespaceAccessible' || size(self.resourceSelectors.filter(x, x.kind == 'Namespace')) == 1",message="when statusReportingScope is NamespaceAccessible, exactly one resourceSelector with kind 'Namespace' is required"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.statusReportingScope) || (has(self.statusReportingScope) && self.statusReportingScope == oldSelf.statusReportingScope)",message="statusReportingScope is immutable"
	// +required
	Spec ClusterResourcePlacementSpec `json:"spec"`

	// The observed status of ClusterResourcePlacement.
	// +optional
	Status PlacementStatus `json:"status,omitempty"`
}

// ClusterResourcePlacementSpec defines the desired state of ClusterResourcePlacement.
type ClusterResourcePlacementSpec struct {
	// ResourceSelectors select cluster-scoped resources; they are ORed. 1-100 selectors.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +required
	ResourceSelectors []ClusterResourceSelector `json:"resourceSelectors"`

	// Policy defines how to select member clusters to place the selected resources.
	// If unspecified, all the joined member clusters are selected.
	// +kubebuilder:validation:XValidation:rule="self.placementType != 'PickN' || has(self.numberOfClusters)",message="numberOfClusters is required when placementType is PickN"
	// +kubebuilder:validation:XValidation:rule="!has(self.numberOfClusters) || self.placementType == 'PickN'",message="numberOfClusters is only allowed when placementType is PickN"
	// +kubebuilder:validation:XValidation:rule="!has(self.clusterNames) || size(self.clusterNames) == 0 || self.placementType == 'PickFixed'",message="clusterNames is only allowed when placementType is PickFixed"
	// +kubebuilder:validation:XValidation:rule="!has(self.affinity) || self.placementType != 'PickFixed'",message="affinity is not allowed when placementType is PickFixed: clusterNames and affinity are mutually exclusive"
	// +kubebuilder:validation:XValidation:rule="!has(self.topologySpreadConstraints) || size(self.topologySpreadConstraints) == 0 || self.placementType == 'PickN'",message="topologySpreadConstraints is only allowed when placementType is PickN"
	// +kubebuilder:validation:XValidation:rule="!has(self.tolerations) || size(self.tolerations) == 0 || self.placementType != 'PickFixed'",message="tolerations are not allowed when placementType is PickFixed: a fixed list of clusters ignores taints"
	// +kubebuilder:validation:XValidation:rule="self.placementType == oldSelf.placementType",message="placementType is immutable: delete and recreate the placement to change it"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.tolerations) || (has(self.tolerations) && size(self.tolerations) >= size(oldSelf.tolerations) && oldSelf.tolerations.all(t, t in self.tolerations))",message="tolerations can only be added: existing tolerations cannot be changed or removed"
	// +optional
	Policy *PlacementPolicy `json:"policy,omitempty"`

	// The rollout strategy to use to replace existing placement with new ones.
	// +optional
	Strategy RolloutStrategy `json:"strategy,omitempty"`

	// The number of old ClusterSchedulingPolicySnapshot and ClusterResourceSnapshot objects
	// to keep. Defaults to 10.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// StatusReportingScope says where the placement's status can be read: ClusterScopeOnly
	// (the default) on this object only; NamespaceAccessible also in a
	// ClusterResourcePlacementStatus of the same name in the one namespace the placement
	// selects, kept by the hub. Immutable.
	// +kubebuilder:default=ClusterScopeOnly
	// +kubebuilder:validation:Enum=ClusterScopeOnly;NamespaceAccessible
	// +optional
	StatusReportingScope placement.StatusReportingScope `json:"statusReportingScope,omitempty"`
}

// ClusterResourceSelector selects cluster-scoped resources. All its fields are ANDed; a
// selected namespace selects every resource in it.
// +kubebuilder:validation:XValidation:rule="!has(self.name) || size(self.name) == 0 || !has(self.labelSelector)",message="name and labelSelector are mutually exclusive"
type ClusterResourceSelector struct {
	// Group name of the cluster-scoped resource; an empty string is the core API group.
	// +required
	Group string `json:"group"`

	// Version of the cluster-scoped resource.
	// +kubebuilder:validation:MinLength=1
	// +required
	Version string `json:"version"`

	// Kind of the cluster-scoped resource.
	// +kubebuilder:validation:MinLength=1
	// +required
	Kind string `json:"kind"`

	// Name of the cluster-scoped resource.
	// +optional
	Name string `json:"name,omitempty"`

	// A label query over the cluster-scoped resources of the kind.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// SelectionScope says what a selected Namespace brings: NamespaceWithResources (the
	// default: the namespace and every object in it), NamespaceOnly (the namespace alone) or
	// NamespaceWithResourceSelectors (the namespace and only the objects in it that the
	// other selectors, which may then name namespaced kinds, pick).
	// +kubebuilder:validation:Enum=NamespaceOnly;NamespaceWithResources;NamespaceWithResourceSelectors
	// +kubebuilder:default=NamespaceWithResources
	// +optional
	SelectionScope placement.SelectionScope `json:"selectionScope,omitempty"`
}

// PlacementPolicy picks the member clusters to place the selected resources on. Only joined
// clusters satisfying the rules are picked.
type PlacementPolicy struct {
	// Type of placement: PickAll (the default), PickN or PickFixed.
	// +kubebuilder:default=PickAll
	// +kubebuilder:validation:Enum=PickAll;PickN;PickFixed
	// +optional
	PlacementType placement.PlacementType `json:"placementType,omitempty"`

	// ClusterNames lists the MemberClusters to place on. Only valid with PickFixed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// NumberOfClusters to pick. Only valid with PickN.
	// +kubebuilder:validation:Minimum=0
	// +optional
	NumberOfClusters *int32 `json:"numberOfClusters,omitempty"`

	// Affinity contains cluster affinity scheduling rules. Only valid with PickAll or PickN.
	// +optional
	Affinity *Affinity `json:"affinity,omitempty"`

	// TopologySpreadConstraints describe how to spread the placement over topology domains;
	// they are ANDed. Only valid with PickN.
	// +optional
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// Tolerations of the placement. They can only be appended to, never changed or removed.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`
}

// Affinity is a group of cluster affinity scheduling rules.
type Affinity struct {
	// ClusterAffinity contains cluster affinity scheduling rules for the selected resources.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`
}

// ClusterAffinity contains cluster affinity scheduling rules for the selected resources.
type ClusterAffinity struct {
	// Clusters that do not match these terms at scheduling time are not picked; a later
	// mismatch does not remove the placement.
	// +kubebuilder:validation:XValidation:rule="self.clusterSelectorTerms.all(t, !has(t.propertySorter))",message="propertySorter is only allowed in preferred terms"
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution *ClusterSelector `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`

	// Weighted terms whose matches add their weight to a cluster's score (PickN only).
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredClusterSelector `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// ClusterSelector is a set of cluster selector terms; they are ORed.
type ClusterSelector struct {
	// ClusterSelectorTerms is a list of cluster selector terms. The terms are ORed.
	// +kubebuilder:validation:MaxItems=10
	// +required
	ClusterSelectorTerms []ClusterSelectorTerm `json:"clusterSelectorTerms"`
}

// ClusterSelectorTerm selects clusters; its parts are ANDed.
type ClusterSelectorTerm struct {
	// LabelSelector is a label query over the joined member clusters.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// PropertySelector is a property query over the joined member clusters (required terms).
	// +optional
	PropertySelector *PropertySelector `json:"propertySelector,omitempty"`

	// PropertySorter ranks clusters by a property (preferred terms).
	// +optional
	PropertySorter *PropertySorter `json:"propertySorter,omitempty"`
}

// PreferredClusterSelector is a weighted cluster selector term.
// +kubebuilder:validation:XValidation:rule="!has(self.preference.propertySelector)",message="propertySelector is only allowed in required terms; preferred terms rank with propertySorter"
type PreferredClusterSelector struct {
	// Weight added to a matching cluster's score, in the range [-100, 100].
	// +kubebuilder:validation:Minimum=-100
	// +kubebuilder:validation:Maximum=100
	// +required
	Weight int32 `json:"weight"`

	// A cluster selector term, associated with the weight.
	// +required
	Preference ClusterSelectorTerm `json:"preference"`
}

// PropertySelector selects clusters by their properties; its requirements are ANDed.
type PropertySelector struct {
	// MatchExpressions is an array of PropertySelectorRequirements.
	// +required
	MatchExpressions []PropertySelectorRequirement `json:"matchExpressions"`
}

// PropertySelectorRequirement compares a cluster property with a value.
type PropertySelectorRequirement struct {
	// Name is the name of the property; it should be a Kubernetes label name.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// Operator relates the cluster's observed value to the given value.
	// +kubebuilder:validation:Enum=Gt;Ge;Eq;Ne;Lt;Le
	// +required
	Operator placement.PropertySelectorOperator `json:"operator"`

	// Values holds exactly one value, a Kubernetes quantity.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1
	// +required
	Values []string `json:"values"`
}

// PropertySorter ranks clusters by a property, linearly scaled between the observed minimum
// and maximum.
type PropertySorter struct {
	// Name is the name of the property which Fleet sorts clusters by.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// SortOrder is Ascending (lower values preferred) or Descending (higher values preferred).
	// +kubebuilder:validation:Enum=Ascending;Descending
	// +required
	SortOrder placement.PropertySortOrder `json:"sortOrder"`
}

// TopologySpreadConstraint spreads a placement over the domains a cluster label defines.
type TopologySpreadConstraint struct {
	// MaxSkew is the largest allowed difference between the number of placements in any two
	// domains. Default 1; 0 is not allowed.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxSkew *int32 `json:"maxSkew,omitempty"`

	// TopologyKey is the cluster label key whose values are the domains.
	// +kubebuilder:validation:MinLength=1
	// +required
	TopologyKey string `json:"topologyKey"`

	// WhenUnsatisfiable is DoNotSchedule (the default) or ScheduleAnyway.
	// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
	// +kubebuilder:default=DoNotSchedule
	// +optional
	WhenUnsatisfiable placement.UnsatisfiableConstraintAction `json:"whenUnsatisfiable,omitempty"`
}

// Toleration lets a placement be scheduled on clusters with a matching taint.
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || self.operator == 'Exists'",message="operator must be Exists when key is empty"
// +kubebuilder:validation:XValidation:rule="self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="value must be empty when operator is Exists"
type Toleration struct {
	// Key is the taint key that the toleration applies to; empty matches every key (and then
	// operator must be Exists).
	// +kubebuilder:validation:MaxLength=317
	// +optional
	Key string `json:"key,omitempty"`

	// Operator is Equal (the default) or Exists, which matches any value.
	// +kubebuilder:default=Equal
	// +kubebuilder:validation:Enum=Equal;Exists
	// +optional
	Operator placement.TolerationOperator `json:"operator,omitempty"`

	// Value is the taint value the toleration matches; empty with Exists.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Value string `json:"value,omitempty"`

	// Effect is the taint effect to match; empty matches every effect.
	// +kubebuilder:validation:Enum=NoSchedule
	// +optional
	Effect member.TaintEffect `json:"effect,omitempty"`
}

// RolloutStrategy describes how to roll out a change of the selected resources.
type RolloutStrategy struct {
	// Type of rollout: RollingUpdate (the default) or External (staged update runs).
	// +kubebuilder:default=RollingUpdate
	// +kubebuilder:validation:Enum=RollingUpdate;External
	// +optional
	Type placement.RolloutStrategyType `json:"type,omitempty"`

	// Rolling update config params. Only meaningful with RollingUpdate.
	// +optional
	RollingUpdate *RollingUpdateConfig `json:"rollingUpdate,omitempty"`

	// ApplyStrategy describes when and how to apply the selected resources to the target
	// cluster.
	// +optional
	ApplyStrategy *ApplyStrategy `json:"applyStrategy,omitempty"`

	// DeleteStrategy says what happens to the placed objects on the members when the
	// placement is deleted.
	// +optional
	DeleteStrategy *DeleteStrategy `json:"deleteStrategy,omitempty"`

	// ReportBackStrategy says whether the member agents report the status of the placed
	// objects back to the hub, and where.
	// +kubebuilder:validation:XValidation:rule="self.type != 'Mirror' || has(self.destination)",message="when reportBackStrategy.type is 'Mirror', a destination must be specified"
	// +kubebuilder:validation:XValidation:rule="!has(self.destination) || self.destination != 'OriginalResource'",message="reportBackStrategy.destination OriginalResource is not supported by this hub yet: use WorkAPI"
	// +optional
	ReportBackStrategy *ReportBackStrategy `json:"reportBackStrategy,omitempty"`
}

// ReportBackStrategy describes how the status of placed objects is reported back.
type ReportBackStrategy struct {
	// Type: Disabled (the default) reports nothing back; Mirror copies each placed object's
	// status, as it is on the member, to the destination.
	// +kubebuilder:default=Disabled
	// +kubebuilder:validation:Enum=Disabled;Mirror
	// +required
	Type placement.ReportBackStrategyType `json:"type"`

	// Destination, required with Mirror: WorkAPI puts the statuses in the Works' status
	// (manifestConditions[].backReportedStatus); OriginalResource (onto the placed objects
	// on the hub, for a placement of exactly one cluster) is not supported by this hub yet.
	// +kubebuilder:validation:Enum=OriginalResource;WorkAPI
	// +optional
	Destination *placement.ReportBackDestination `json:"destination,omitempty"`
}

// DeleteStrategy configures what deleting a placement does to what it placed.
type DeleteStrategy struct {
	// PropagationPolicy: Delete (the default) removes the placed objects from the members
	// when the placement is deleted; Abandon leaves them there, no longer managed by Fleet.
	// +kubebuilder:default=Delete
	// +kubebuilder:validation:Enum=Abandon;Delete
	// +optional
	PropagationPolicy placement.DeletePropagationPolicy `json:"propagationPolicy,omitempty"`
}

// RollingUpdateConfig controls a rolling update.
// +kubebuilder:validation:XValidation:rule="!(has(self.maxUnavailable) && has(self.maxSurge) && string(self.maxUnavailable) in ['0', '0%'] && string(self.maxSurge) in ['0', '0%'])",message="maxSurge cannot be 0 when maxUnavailable is 0"
type RollingUpdateConfig struct {
	// MaxUnavailable is how many clusters may be unavailable during the update, an absolute
	// number or a percentage of the target number of clusters, rounded up. Defaults to 25%.
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[0-9]{1,2})%|[0-9]+)$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="maxUnavailable must not be negative"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is how many clusters may be scheduled above the target number, an absolute
	// number or a percentage, rounded up. It does not apply to in-place updates. Defaults to
	// 25%.
	// +kubebuilder:default="25%"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern="^((100|[0-9]{1,2})%|[0-9]+)$"
	// +kubebuilder:validation:XValidation:rule="type(self) == string || self >= 0",message="maxSurge must not be negative"
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// UnavailablePeriodSeconds is how long an applied resource whose availability cannot be
	// tracked counts as unavailable. Default is 60.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=0
	// +optional
	UnavailablePeriodSeconds *int `json:"unavailablePeriodSeconds,omitempty"`
}

// PlacementStatus defines the observed state of a ClusterResourcePlacement.
type PlacementStatus struct {
	// SelectedResources lists the resources the selectors selected (envelopes, not their
	// contents).
	// +optional
	SelectedResources []ResourceIdentifier `json:"selectedResources,omitempty"`

	// ObservedResourceIndex is the resource snapshot index the conditions describe.
	// +optional
	ObservedResourceIndex string `json:"observedResourceIndex,omitempty"`

	// PlacementStatuses holds one entry per selected cluster; for PickN and PickFixed, entries
	// without a clusterName stand for clusters the scheduler could not find.
	// +optional
	PlacementStatuses []ResourcePlacementStatus `json:"placementStatuses,omitempty"`

	// Conditions is an array of current observed conditions for ClusterResourcePlacement.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResourcePlacementStatus is the placement status of the selected resources on one cluster.
type ResourcePlacementStatus struct {
	// ClusterName is the name of the cluster this resource is assigned to.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`

	// ObservedResourceIndex is the resource snapshot index this cluster's conditions
	// describe: the latest one, or under the External rollout strategy the index the
	// cluster's binding holds (the one a staged update run rolled out to it).
	// +optional
	ObservedResourceIndex string `json:"observedResourceIndex,omitempty"`

	// ApplicableResourceOverrides lists the ResourceOverride snapshots applied for the cluster.
	// +optional
	ApplicableResourceOverrides []NamespacedName `json:"applicableResourceOverrides,omitempty"`

	// ApplicableClusterResourceOverrides lists the ClusterResourceOverride snapshots applied
	// for the cluster.
	// +optional
	ApplicableClusterResourceOverrides []string `json:"applicableClusterResourceOverrides,omitempty"`

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

	// Conditions is an array of current observed conditions on the cluster.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterResourcePlacementList contains a list of ClusterResourcePlacement.
type ClusterResourcePlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourcePlacement `json:"items"`
}
