package override

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/placement"
)

// API group, versions and kinds. The documentation shows the override kinds under v1alpha1;
// v1beta1 carries the same fields and is the version this package speaks. Parse accepts both.
const (
	GroupVersion        = "placement.kubernetes-fleet.io/v1beta1"
	GroupVersionV1Alpha = "placement.kubernetes-fleet.io/v1alpha1"

	KindClusterResourceOverride         = "ClusterResourceOverride"
	KindResourceOverride                = "ResourceOverride"
	KindClusterResourceOverrideSnapshot = "ClusterResourceOverrideSnapshot"
	KindResourceOverrideSnapshot        = "ResourceOverrideSnapshot"
)

// Well-known names (ARCH-FINALIZERS-LABELS, SNAP-OVERRIDE).
const (
	// CleanupFinalizer is on every ClusterResourceOverride and ResourceOverride.
	CleanupFinalizer = "kubernetes-fleet.io/override-cleanup"
	// OverrideTrackingLabel on a snapshot names the override that owns it.
	OverrideTrackingLabel = "kubernetes-fleet.io/override-tracking"
	// IsLatestSnapshotLabel is "true" on an override's latest snapshot only.
	IsLatestSnapshotLabel = "kubernetes-fleet.io/is-latest-snapshot"
)

// API limits (OVR-*, section 22 of the spec).
const (
	MinSelectors           = 1
	MaxSelectors           = 20
	MinRules               = 1
	MaxRules               = 20
	MinPatches             = 1
	MaxPatches             = 20
	MaxSelectorTerms       = placement.MaxSelectorTerms
	MaxClusterOverrides    = 100
	MaxNamespacedOverrides = 100
)

// Reserved variables in patch values (case-sensitive): the member cluster's name, and the
// value of the member cluster's label <key> written ${MEMBER-CLUSTER-LABEL-KEY-<key>}.
const (
	VariableClusterName    = "${MEMBER-CLUSTER-NAME}"
	VariableLabelKeyPrefix = "${MEMBER-CLUSTER-LABEL-KEY-"
)

// ClusterResourceOverride customises cluster-scoped resources (and, through a selected
// Namespace, every resource in it) per cluster before they are placed.
type ClusterResourceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ClusterResourceOverrideSpec `json:"spec"`
}

// ClusterResourceOverrideSpec mirrors v1beta1 ClusterResourceOverrideSpec.
type ClusterResourceOverrideSpec struct {
	// Placement, when set, restricts the override to that placement and makes a change to it
	// roll out immediately; when nil the override applies to every placement at its next
	// rollout (OVR-PLACEMENT-REF).
	Placement *PlacementRef `json:"placement,omitempty"`
	// ClusterResourceSelectors are ORed; 1–20, by name only.
	ClusterResourceSelectors []ResourceSelector `json:"clusterResourceSelectors"`
	Policy                   OverridePolicy     `json:"policy"`
}

// ResourceOverride customises resources in its own namespace per cluster.
type ResourceOverride struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ResourceOverrideSpec `json:"spec"`
}

// ResourceOverrideSpec mirrors v1beta1 ResourceOverrideSpec.
type ResourceOverrideSpec struct {
	Placement *PlacementRef `json:"placement,omitempty"`
	// ResourceSelectors are ORed; 1–20, by name only, in the override's namespace.
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`
	Policy            OverridePolicy     `json:"policy"`
}

// OverrideSpec returns the spec; with GetName and GetNamespace it makes the override an
// Override for DecideSnapshot.
func (o *ClusterResourceOverride) OverrideSpec() ClusterResourceOverrideSpec { return o.Spec }

// OverrideSpec returns the spec.
func (o *ResourceOverride) OverrideSpec() ResourceOverrideSpec { return o.Spec }

// PlacementRef names the placement an override is for.
type PlacementRef struct {
	Name string `json:"name"`
	// Scope is Cluster (a ClusterResourcePlacement; also what empty means) or Namespaced (a
	// ResourcePlacement in the override's namespace, which this project does not serve, so
	// such an override applies to no ClusterResourcePlacement).
	Scope PlacementScope `json:"scope,omitempty"`
}

// PlacementScope is a placement reference's scope.
type PlacementScope string

const (
	ClusterScope    PlacementScope = "Cluster"
	NamespacedScope PlacementScope = "Namespaced"
)

// RefersTo reports whether an override with this reference applies to the
// ClusterResourcePlacement named crp: no reference applies to every placement.
func (r *PlacementRef) RefersTo(crp string) bool {
	return r == nil || ((r.Scope == "" || r.Scope == ClusterScope) && r.Name == crp)
}

// ResourceSelector selects one resource by group, version, kind and name. All fields are
// ANDed. Group is empty for the core group.
type ResourceSelector struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
}

func (s ResourceSelector) String() string {
	g := s.Group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s/%s, Kind=%s %s", g, s.Version, s.Kind, s.Name)
}

// OverridePolicy is an ordered list of rules: where two rules touch a field, the later wins.
type OverridePolicy struct {
	OverrideRules []OverrideRule `json:"overrideRules"`
}

// OverrideType is what a rule does to the selected resources.
type OverrideType string

const (
	// JSONPatchOverrideType applies the rule's RFC 6902 patches. It is the default.
	JSONPatchOverrideType OverrideType = "JSONPatch"
	// DeleteOverrideType keeps the selected resources off the matching clusters.
	DeleteOverrideType OverrideType = "Delete"
)

// OverrideRule is one step of a policy.
type OverrideRule struct {
	// ClusterSelector picks the clusters the rule applies to. nil selects no cluster; a
	// selector with no terms selects every cluster. Only labelSelector is supported in terms.
	ClusterSelector *placement.ClusterSelector `json:"clusterSelector,omitempty"`
	// OverrideType defaults to JSONPatch.
	OverrideType OverrideType `json:"overrideType,omitempty"`
	// JSONPatchOverrides: 1–20, only with JSONPatch; applied one after another.
	JSONPatchOverrides []JSONPatchOverride `json:"jsonPatchOverrides,omitempty"`
}

// Type returns the override type with its default applied.
func (r OverrideRule) Type() OverrideType {
	if r.OverrideType == "" {
		return JSONPatchOverrideType
	}
	return r.OverrideType
}

// JSONPatchOperator is an RFC 6902 operation KubeFleet supports.
type JSONPatchOperator string

const (
	JSONPatchOpAdd     JSONPatchOperator = "add"
	JSONPatchOpRemove  JSONPatchOperator = "remove"
	JSONPatchOpReplace JSONPatchOperator = "replace"
)

// JSONPatchOverride is one RFC 6902 operation. Value may use the reserved variables
// ${MEMBER-CLUSTER-NAME} and ${MEMBER-CLUSTER-LABEL-KEY-<key>} (case-sensitive).
type JSONPatchOverride struct {
	Operator JSONPatchOperator `json:"op"`
	Path     string            `json:"path"`
	Value    JSON              `json:"value,omitzero"`
}

// JSON is an arbitrary JSON value kept as raw bytes, like apiextensions/v1 JSON: a JSON null
// and an absent value both decode to an empty Raw, which encodes as null.
type JSON struct {
	Raw []byte `json:"-"`
}

var jsonNull = []byte("null")

// MarshalJSON returns Raw, or null when it is empty.
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j.Raw) == 0 {
		return jsonNull, nil
	}
	return j.Raw, nil
}

// UnmarshalJSON keeps a copy of the raw value; null leaves Raw empty.
func (j *JSON) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || bytes.Equal(data, jsonNull) {
		j.Raw = nil
		return nil
	}
	j.Raw = append(j.Raw[:0:0], data...)
	return nil
}

// IsZero reports whether no value is set.
func (j JSON) IsZero() bool { return len(j.Raw) == 0 }

// RawJSON builds a JSON value from a JSON text (a test and scenario convenience).
func RawJSON(s string) JSON {
	if s == "" {
		return JSON{}
	}
	return JSON{Raw: []byte(s)}
}

// ParseClusterResourceOverride decodes a ClusterResourceOverride from YAML or JSON. The
// apiVersion must be placement.kubernetes-fleet.io/v1beta1 or /v1alpha1 (the documentation's); either
// way the result carries v1beta1.
func ParseClusterResourceOverride(data []byte) (*ClusterResourceOverride, error) {
	var o ClusterResourceOverride
	if err := yaml.Unmarshal(data, &o); err != nil {
		return nil, err
	}
	if err := checkTypeMeta(&o.TypeMeta, KindClusterResourceOverride); err != nil {
		return nil, err
	}
	return &o, nil
}

// ParseResourceOverride decodes a ResourceOverride from YAML or JSON, as
// ParseClusterResourceOverride does.
func ParseResourceOverride(data []byte) (*ResourceOverride, error) {
	var o ResourceOverride
	if err := yaml.Unmarshal(data, &o); err != nil {
		return nil, err
	}
	if err := checkTypeMeta(&o.TypeMeta, KindResourceOverride); err != nil {
		return nil, err
	}
	return &o, nil
}

func checkTypeMeta(tm *metav1.TypeMeta, kind string) error {
	switch tm.APIVersion {
	case GroupVersion, GroupVersionV1Alpha:
	default:
		return fmt.Errorf("apiVersion %q: want %s (or %s)", tm.APIVersion, GroupVersion, GroupVersionV1Alpha)
	}
	if tm.Kind != kind {
		return fmt.Errorf("kind %q: want %s", tm.Kind, kind)
	}
	tm.APIVersion = GroupVersion
	return nil
}
