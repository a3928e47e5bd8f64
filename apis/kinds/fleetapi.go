package kinds

import "strings"

// The KubeFleet API groups and the version objects are stored at.
const (
	ClusterGroup   = "cluster.kubernetes-fleet.io"
	PlacementGroup = "placement.kubernetes-fleet.io"
	StorageVersion = "v1beta1"
)

// Kind is one KubeFleet kind and the versions it is served at, highest priority first (the
// version `kubectl get` prefers comes first).
type Kind struct {
	Group    string
	Kind     string
	Versions []string
}

var (
	v1Beta1        = []string{"v1", "v1beta1"}
	v1Alpha1Beta1  = []string{"v1", "v1beta1", "v1alpha1"}
	alpha1Beta1    = []string{"v1beta1", "v1alpha1"}
	beta1Only      = []string{"v1beta1"}
	placementKinds = []Kind{
		{PlacementGroup, "ClusterResourcePlacement", v1Beta1},
		{PlacementGroup, "ClusterSchedulingPolicySnapshot", v1Beta1},
		{PlacementGroup, "ClusterResourceSnapshot", v1Beta1},
		{PlacementGroup, "ClusterResourceBinding", v1Beta1},
		{PlacementGroup, "Work", v1Beta1},
		{PlacementGroup, "ClusterResourceOverride", v1Alpha1Beta1},
		{PlacementGroup, "ClusterResourceOverrideSnapshot", v1Alpha1Beta1},
		{PlacementGroup, "ResourceOverride", v1Alpha1Beta1},
		{PlacementGroup, "ResourceOverrideSnapshot", v1Alpha1Beta1},
		{PlacementGroup, "ClusterStagedUpdateStrategy", v1Alpha1Beta1},
		{PlacementGroup, "ClusterStagedUpdateRun", v1Alpha1Beta1},
		{PlacementGroup, "ClusterApprovalRequest", v1Alpha1Beta1},
		{PlacementGroup, "ClusterResourcePlacementEviction", alpha1Beta1},
		{PlacementGroup, "ClusterResourcePlacementDisruptionBudget", alpha1Beta1},
		{PlacementGroup, "ClusterResourceEnvelope", beta1Only},
		{PlacementGroup, "ResourceEnvelope", beta1Only},
		{PlacementGroup, "ClusterResourcePlacementStatus", v1Beta1},
	}
	clusterKinds = []Kind{
		{ClusterGroup, "MemberCluster", v1Beta1},
		{ClusterGroup, "InternalMemberCluster", v1Beta1},
	}
)

// Kinds returns every KubeFleet kind this project serves, in a fixed order.
func Kinds() []Kind {
	out := make([]Kind, 0, len(clusterKinds)+len(placementKinds))
	for _, k := range append(append([]Kind{}, clusterKinds...), placementKinds...) {
		k.Versions = append([]string(nil), k.Versions...)
		out = append(out, k)
	}
	return out
}

// IsFleetGroup reports whether group is one of the KubeFleet groups.
func IsFleetGroup(group string) bool { return group == ClusterGroup || group == PlacementGroup }

// Lookup returns the kind of a KubeFleet group.
func Lookup(group, kind string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.Group == group && k.Kind == kind {
			return k, true
		}
	}
	return Kind{}, false
}

// Stored maps an apiVersion ("group/version") and kind a user wrote to the apiVersion the
// object is stored at. ok is false when the group is a KubeFleet group but the kind is not
// served at that version (the message says which versions are); for a group that is not
// KubeFleet's, Stored returns apiVersion unchanged.
func Stored(apiVersion, kind string) (stored string, ok bool, why string) {
	group, version, found := strings.Cut(apiVersion, "/")
	if !found || !IsFleetGroup(group) {
		return apiVersion, true, ""
	}
	k, known := Lookup(group, kind)
	if !known {
		return "", false, "no kind " + kind + " is served in group " + group
	}
	for _, v := range k.Versions {
		if v == version {
			return group + "/" + StorageVersion, true, ""
		}
	}
	return "", false, kind + " is served at " + group + "/" + strings.Join(k.Versions, ", "+group+"/") + ", not at " + version
}
