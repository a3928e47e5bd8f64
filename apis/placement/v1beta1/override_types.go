package v1beta1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/override"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cro,categories={fleet,fleet-placement}

// ClusterResourceOverride customises cluster-scoped resources (and, through a selected
// namespace, everything in it) per cluster before they are placed. A resource can be selected
// by at most one ClusterResourceOverride; a ResourceOverride on the same resource wins.
type ClusterResourceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ClusterResourceOverrideSpec.
	// +required
	Spec ClusterResourceOverrideSpec `json:"spec"`
}

// ClusterResourceOverrideSpec defines the desired state of a ClusterResourceOverride.
type ClusterResourceOverrideSpec struct {
	// Placement restricts the override to one placement and makes a change to it roll out
	// immediately; when unset the override applies to every placement at its next rollout.
	// +kubebuilder:validation:XValidation:rule="!has(self.scope) || self.scope == 'Cluster'",message="a ClusterResourceOverride refers to a cluster-scoped placement: scope must be Cluster"
	// +optional
	Placement *PlacementRef `json:"placement,omitempty"`

	// ClusterResourceSelectors select cluster-scoped resources by name; they are ORed. 1-20
	// selectors; labelSelector is not supported.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(s, !has(s.labelSelector))",message="labelSelector is not supported: an override selects resources by name"
	// +kubebuilder:validation:XValidation:rule="self.all(s, has(s.name) && size(s.name) > 0)",message="name is required: an override selects resources by name"
	// +required
	ClusterResourceSelectors []ClusterResourceSelector `json:"clusterResourceSelectors"`

	// Policy defines how to override the selected resources on the target clusters.
	// +required
	Policy OverridePolicy `json:"policy"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=ro,categories={fleet,fleet-placement}

// ResourceOverride customises namespaced resources of its own namespace per cluster before
// they are placed. A resource can be selected by at most one ResourceOverride.
type ResourceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ResourceOverrideSpec.
	// +required
	Spec ResourceOverrideSpec `json:"spec"`
}

// ResourceOverrideSpec defines the desired state of a ResourceOverride.
type ResourceOverrideSpec struct {
	// Placement restricts the override to one placement and makes a change to it roll out
	// immediately; when unset the override applies to every placement at its next rollout.
	// +optional
	Placement *PlacementRef `json:"placement,omitempty"`

	// ResourceSelectors select namespaced resources of the override's namespace by name; they
	// are ORed. 1-20 selectors.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(s, !(s.group == '' && s.kind == 'Namespace'))",message="a ResourceOverride selects namespaced resources; select a Namespace with a ClusterResourceOverride"
	// +required
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Policy defines how to override the selected resources on the target clusters.
	// +required
	Policy OverridePolicy `json:"policy"`
}

// PlacementRef is the reference to a placement.
type PlacementRef struct {
	// Name is the name of the placement.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// Scope is Cluster (a ClusterResourcePlacement, the default) or Namespaced (a
	// ResourcePlacement in the override's namespace; this hub serves none, so such an
	// override applies to no placement).
	// +kubebuilder:validation:Enum=Cluster;Namespaced
	// +kubebuilder:default=Cluster
	// +optional
	Scope override.PlacementScope `json:"scope,omitempty"`
}

// ResourceSelector selects one namespaced resource, in the override's namespace, by group,
// version, kind and name.
type ResourceSelector struct {
	// Group name of the namespace-scoped resource; an empty string is the core API group.
	// +required
	Group string `json:"group"`

	// Version of the namespace-scoped resource.
	// +kubebuilder:validation:MinLength=1
	// +required
	Version string `json:"version"`

	// Kind of the namespace-scoped resource.
	// +kubebuilder:validation:MinLength=1
	// +required
	Kind string `json:"kind"`

	// Name of the namespace-scoped resource.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
}

// OverridePolicy is an ordered list of override rules: where two rules touch the same field,
// the later wins.
type OverridePolicy struct {
	// OverrideRules are applied in order. 1-20 rules.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +required
	OverrideRules []OverrideRule `json:"overrideRules"`
}

// OverrideRule overrides the selected resources on the clusters its selector matches.
// +kubebuilder:validation:XValidation:rule="self.overrideType != 'JSONPatch' || (has(self.jsonPatchOverrides) && size(self.jsonPatchOverrides) > 0)",message="jsonPatchOverrides is required when overrideType is JSONPatch"
// +kubebuilder:validation:XValidation:rule="self.overrideType != 'Delete' || !has(self.jsonPatchOverrides) || size(self.jsonPatchOverrides) == 0",message="jsonPatchOverrides is only allowed when overrideType is JSONPatch"
type OverrideRule struct {
	// ClusterSelector picks the clusters the rule applies to: a selector with no terms picks
	// every cluster, no selector picks none. Only labelSelector is supported in its terms.
	// +kubebuilder:validation:XValidation:rule="self.clusterSelectorTerms.all(t, !has(t.propertySelector) && !has(t.propertySorter))",message="only labelSelector is supported in an override cluster selector"
	// +optional
	ClusterSelector *ClusterSelector `json:"clusterSelector,omitempty"`

	// OverrideType is JSONPatch (the default) or Delete, which keeps the selected resources
	// off the matching clusters.
	// +kubebuilder:default=JSONPatch
	// +kubebuilder:validation:Enum=JSONPatch;Delete
	// +optional
	OverrideType override.OverrideType `json:"overrideType,omitempty"`

	// JSONPatchOverrides are applied one after another; only with JSONPatch. 1-20 patches.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +optional
	JSONPatchOverrides []JSONPatchOverride `json:"jsonPatchOverrides,omitempty"`
}

// JSONPatchOverride applies one RFC 6902 operation to the selected resources.
type JSONPatchOverride struct {
	// Operator defines the operation on the target field: add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator override.JSONPatchOperator `json:"op"`

	// Path is the target location (RFC 6901). The override fails if it does not exist. It
	// cannot point at kind, apiVersion, status, or metadata other than labels and annotations.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="path must start with /"
	// +kubebuilder:validation:XValidation:rule="!self.contains('//') && !self.endsWith('/')",message="path must not contain empty segments"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^/(kind|apiVersion)(/.*)?$')",message="path cannot point at a TypeMeta field (kind, apiVersion)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^/status(/.*)?$')",message="path cannot point at any field under status"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^/metadata(/.*)?$') || self.matches('^/metadata/(labels|annotations)(/.*)?$')",message="path cannot point at a metadata field other than labels and annotations"
	// +required
	Path string `json:"path"`

	// Value is the content to apply at the path; empty when the operator is remove. The
	// variables ${MEMBER-CLUSTER-NAME} and ${MEMBER-CLUSTER-LABEL-KEY-<key>} are replaced by
	// the cluster's name and label value.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitzero"`
}

// +kubebuilder:object:root=true

// ClusterResourceOverrideList contains a list of ClusterResourceOverride.
type ClusterResourceOverrideList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceOverride `json:"items"`
}

// +kubebuilder:object:root=true

// ResourceOverrideList contains a list of ResourceOverride.
type ResourceOverrideList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceOverride `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cros,categories={fleet,fleet-placement}

// ClusterResourceOverrideSnapshot is an immutable copy of a ClusterResourceOverride's spec,
// named {override}-{index} and labelled with kubernetes-fleet.io/override-tracking and
// is-latest-snapshot.
type ClusterResourceOverrideSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ClusterResourceOverrideSnapshotSpec. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the spec of an override snapshot is immutable"
	// +required
	Spec ClusterResourceOverrideSnapshotSpec `json:"spec"`
}

// ClusterResourceOverrideSnapshotSpec defines the desired state of ClusterResourceOverrideSnapshot.
type ClusterResourceOverrideSnapshotSpec struct {
	// OverrideSpec stores the spec of ClusterResourceOverride.
	// +required
	OverrideSpec ClusterResourceOverrideSpec `json:"overrideSpec"`

	// OverrideHash is the sha-256 hash of the OverrideSpec field (its hex text).
	// +required
	OverrideHash []byte `json:"overrideHash"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=ros,categories={fleet,fleet-placement}

// ResourceOverrideSnapshot is an immutable copy of a ResourceOverride's spec, in the
// override's namespace, named {override}-{index} and labelled with
// kubernetes-fleet.io/override-tracking and is-latest-snapshot.
type ResourceOverrideSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of ResourceOverrideSnapshot. It is immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the spec of an override snapshot is immutable"
	// +required
	Spec ResourceOverrideSnapshotSpec `json:"spec"`
}

// ResourceOverrideSnapshotSpec defines the desired state of ResourceOverrideSnapshot.
type ResourceOverrideSnapshotSpec struct {
	// OverrideSpec stores the spec of ResourceOverride.
	// +required
	OverrideSpec ResourceOverrideSpec `json:"overrideSpec"`

	// OverrideHash is the sha-256 hash of the OverrideSpec field (its hex text).
	// +required
	OverrideHash []byte `json:"overrideHash"`
}

// +kubebuilder:object:root=true

// ClusterResourceOverrideSnapshotList contains a list of ClusterResourceOverrideSnapshot.
type ClusterResourceOverrideSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceOverrideSnapshot `json:"items"`
}

// +kubebuilder:object:root=true

// ResourceOverrideSnapshotList contains a list of ResourceOverrideSnapshot.
type ResourceOverrideSnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceOverrideSnapshot `json:"items"`
}
