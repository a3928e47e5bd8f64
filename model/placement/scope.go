package placement

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// placementGroup is the API group of KubeFleet's placement kinds.
const placementGroup = "placement.kubernetes-fleet.io"

// namespacedKinds are the built-in and fleet kinds served namespaced, by group and kind: the
// kinds a ClusterResourcePlacement's selector may not name. A namespaced object is placed by
// selecting its namespace ([Concepts › ClusterResourcePlacement › Resource selection]: the
// selectors pick cluster-scoped resources, namespaces with their contents). A kind missing
// here (a custom resource's) is judged where the served kinds are known: the production
// hub asks its API server's discovery.
var namespacedKinds = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}: true, {Kind: "Secret"}: true, {Kind: "Service"}: true, {Kind: "ServiceAccount"}: true,
	{Kind: "Pod"}: true, {Kind: "PodTemplate"}: true, {Kind: "Endpoints"}: true, {Kind: "Event"}: true,
	{Kind: "PersistentVolumeClaim"}: true, {Kind: "LimitRange"}: true, {Kind: "ResourceQuota"}: true,
	{Kind: "ReplicationController"}: true, {Kind: "Binding"}: true,
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "StatefulSet"}: true, {Group: "apps", Kind: "DaemonSet"}: true,
	{Group: "apps", Kind: "ReplicaSet"}: true, {Group: "apps", Kind: "ControllerRevision"}: true,
	{Group: "batch", Kind: "Job"}: true, {Group: "batch", Kind: "CronJob"}: true,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: true,
	{Group: "networking.k8s.io", Kind: "Ingress"}:           true, {Group: "networking.k8s.io", Kind: "NetworkPolicy"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: true, {Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: true,
	{Group: "policy", Kind: "PodDisruptionBudget"}: true, {Group: "coordination.k8s.io", Kind: "Lease"}: true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: true, {Group: "events.k8s.io", Kind: "Event"}: true,
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}: true,
	{Group: placementGroup, Kind: "ResourceEnvelope"}:     true, {Group: placementGroup, Kind: "ResourceOverride"}: true,
	{Group: placementGroup, Kind: "ResourceOverrideSnapshot"}: true, {Group: placementGroup, Kind: "Work"}: true,
	{Group: placementGroup, Kind: "ResourcePlacement"}: true, {Group: placementGroup, Kind: "ResourceBinding"}: true,
	{Group: placementGroup, Kind: "ResourceSnapshot"}: true, {Group: placementGroup, Kind: "SchedulingPolicySnapshot"}: true,
	{Group: placementGroup, Kind: "ClusterResourcePlacementStatus"}:       true,
	{Group: "cluster.kubernetes-fleet.io", Kind: "InternalMemberCluster"}: true,
}

// KnownNamespaced reports whether a kind is one this table knows to be namespaced.
func KnownNamespaced(group, kind string) bool {
	return namespacedKinds[schema.GroupKind{Group: group, Kind: kind}]
}

// SelectorScopeError is why a ClusterResourcePlacement may not select what s names: s
// names a namespaced kind (namespaced reports the kind's scope as the caller knows it),
// worded as KubeFleet's admission webhook refuses it. "" when s may be selected.
func SelectorScopeError(s ResourceSelector, namespaced func(group, kind string) bool) string {
	if !namespaced(s.Group, s.Kind) {
		return ""
	}
	gvk := schema.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}
	return fmt.Sprintf("the resource is not found in schema (please retry) or it is not a cluster scoped resource: %v", gvk)
}
