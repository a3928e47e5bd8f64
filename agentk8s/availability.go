package agentk8s

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Tracking says how the agent can tell that an applied object is available.
type Tracking uint8

const (
	// DataOnly kinds are available as soon as they are applied (AVAIL-DATA-ONLY).
	DataOnly Tracking = iota
	// Trackable kinds are available when their status says so (deployments, jobs, ...).
	Trackable
	// Untrackable kinds count as available unavailablePeriodSeconds after a successful apply
	// (AVAIL-UNTRACKABLE); the hub, not the agent, waits out that period.
	Untrackable
)

func (t Tracking) String() string {
	return [...]string{"data-only", "trackable", "untrackable"}[t]
}

var dataOnly = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Secret"}: true, {Kind: "ConfigMap"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: true, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: true, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
}

var trackable = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "DaemonSet"}: true,
	{Group: "apps", Kind: "StatefulSet"}: true, {Group: "batch", Kind: "Job"}: true,
}

// Classify says how an object's availability is tracked. A Service is trackable unless it
// is an ExternalName service, which has nothing to wait for (AVAIL-SERVICE).
func Classify(o *unstructured.Unstructured) Tracking {
	gk := o.GroupVersionKind().GroupKind()
	switch {
	case dataOnly[gk]:
		return DataOnly
	case trackable[gk]:
		return Trackable
	case gk == schema.GroupKind{Kind: "Service"}:
		if t, _, _ := unstructured.NestedString(o.Object, "spec", "type"); t == "ExternalName" {
			return Untrackable
		}
		return Trackable
	}
	return Untrackable
}

// Available judges a trackable object from its status, as the member agent does with the
// live object: a Deployment or StatefulSet when every replica is updated, ready and
// available; a DaemonSet when every scheduled pod is updated and available; a Job when a
// pod succeeded or is ready; a Service when it has a cluster IP, or, for a load balancer,
// an ingress IP or hostname (AVAIL-*).
func Available(o *unstructured.Unstructured) bool {
	if Classify(o) != Trackable {
		return true
	}
	gk := o.GroupVersionKind().GroupKind()
	num := func(path ...string) int64 { v, _ := number(o, path...); return v }
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		want, ok := number(o, "spec", "replicas")
		if !ok {
			want = 1
		}
		ready := num("status", "readyReplicas")
		updated := num("status", "updatedReplicas")
		if gk.Kind == "Deployment" {
			return updated >= want && ready >= want && num("status", "availableReplicas") >= want
		}
		return updated >= want && ready >= want
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		desired := num("status", "desiredNumberScheduled")
		return num("status", "updatedNumberScheduled") >= desired && num("status", "numberAvailable") >= desired
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		return num("status", "succeeded") > 0 || num("status", "ready") > 0
	case schema.GroupKind{Kind: "Service"}:
		t, _, _ := unstructured.NestedString(o.Object, "spec", "type")
		if t == "LoadBalancer" {
			ingress, _, _ := unstructured.NestedSlice(o.Object, "status", "loadBalancer", "ingress")
			for _, in := range ingress {
				if m, ok := in.(map[string]any); ok && (m["ip"] != nil || m["hostname"] != nil) {
					return true
				}
			}
			return false
		}
		ip, _, _ := unstructured.NestedString(o.Object, "spec", "clusterIP")
		return ip != ""
	}
	return true
}

// number reads an integer field whether it was decoded as int64 (from the API server) or
// float64 (from YAML or plain JSON).
func number(o *unstructured.Unstructured, path ...string) (int64, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}
