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
	// Trackable kinds are available when their status says so (deployments, services, ...).
	Trackable
	// Untrackable kinds count as available unavailablePeriodSeconds after a successful apply
	// (AVAIL-UNTRACKABLE); the hub, not the agent, waits out that period.
	Untrackable
)

func (t Tracking) String() string {
	return [...]string{"data-only", "trackable", "untrackable"}[t]
}

// dataOnly are the kinds KubeFleet's work applier counts as available once applied: they
// hold data and run nothing. The first seven are the ones the concept page lists
// ([Concepts › Placement › Resource availability], "data only objects"); KubeFleet's member
// agent treats the others the same, as its availability tracker shows: service accounts,
// network policies, limit ranges, resource quotas, storage, priority and ingress classes,
// controller revisions and the CSI objects. A kind not here, not in trackable and not a
// Service is untrackable: Jobs among them (KubeFleet does not track Jobs), and custom
// resources.
var dataOnly = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Secret"}: true, {Kind: "ConfigMap"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: true, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: true, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
	{Kind: "ServiceAccount"}: true, {Kind: "LimitRange"}: true, {Kind: "ResourceQuota"}: true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: true, {Group: "networking.k8s.io", Kind: "IngressClass"}: true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}: true, {Group: "storage.k8s.io", Kind: "CSIDriver"}: true,
	{Group: "storage.k8s.io", Kind: "CSINode"}: true, {Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}: true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: true, {Group: "apps", Kind: "ControllerRevision"}: true,
}

// Group kinds the agent judges from their status.
var (
	gkDeployment  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	gkStatefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	gkDaemonSet   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	gkService     = schema.GroupKind{Kind: "Service"}
	gkCRD         = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	gkPDB         = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}
)

// trackable are the kinds judged from their status (Available). The workloads are the
// concept page's ([Concepts › Placement › Resource availability]); KubeFleet's agent also
// tracks CustomResourceDefinitions (established, names accepted) and
// PodDisruptionBudgets (conditions up to date).
var trackable = map[schema.GroupKind]bool{
	gkDeployment: true, gkDaemonSet: true, gkStatefulSet: true, gkCRD: true, gkPDB: true,
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
	case gk == gkService:
		if t, _, _ := unstructured.NestedString(o.Object, "spec", "type"); t == "ExternalName" {
			return Untrackable
		}
		return Trackable
	}
	return Untrackable
}

// Available judges a trackable object from its status, as KubeFleet's member agent does
// with the live object ([Concepts › Placement › Resource availability] for the workloads;
// the agent's availability tracker for the exact fields). Every workload must have observed
// its latest generation (status.observedGeneration == metadata.generation): right after an
// update the status still describes the previous one.
//
//   - Deployment: available, updated and spec replicas (default 1) all equal, and no
//     unavailable replica.
//   - StatefulSet: available replicas equal spec replicas, current replicas equal updated
//     ones and the current revision is the update revision.
//   - DaemonSet: available pods equal desired scheduled pods and current scheduled pods
//     equal updated ones.
//   - Service: ClusterIP and NodePort when a cluster IP is assigned; LoadBalancer when its
//     first ingress has an IP or a hostname.
//   - CustomResourceDefinition: Established and NamesAccepted are True.
//   - PodDisruptionBudget: the controller has observed its generation and its
//     DisruptionAllowed condition agrees with disruptionsAllowed (True when > 0, else False).
//
// Any other object is available (data-only or untrackable).
func Available(o *unstructured.Unstructured) bool {
	if Classify(o) != Trackable {
		return true
	}
	num := func(path ...string) int64 { v, _ := number(o, path...); return v }
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(o.Object, path...); return v }
	observed := func() bool {
		g, ok := number(o, "status", "observedGeneration")
		want, _ := number(o, "metadata", "generation")
		return ok && g == want
	}
	replicas := func() int64 {
		if want, ok := number(o, "spec", "replicas"); ok {
			return want
		}
		return 1
	}
	switch o.GroupVersionKind().GroupKind() {
	case gkDeployment:
		want := replicas()
		return observed() && num("status", "availableReplicas") == want && num("status", "updatedReplicas") == want &&
			num("status", "unavailableReplicas") == 0
	case gkStatefulSet:
		return observed() && num("status", "availableReplicas") == replicas() &&
			num("status", "currentReplicas") == num("status", "updatedReplicas") &&
			str("status", "currentRevision") == str("status", "updateRevision")
	case gkDaemonSet:
		return observed() && num("status", "numberAvailable") == num("status", "desiredNumberScheduled") &&
			num("status", "currentNumberScheduled") == num("status", "updatedNumberScheduled")
	case gkService:
		if str("spec", "type") == "LoadBalancer" {
			ingress, _, _ := unstructured.NestedSlice(o.Object, "status", "loadBalancer", "ingress")
			if len(ingress) == 0 {
				return false
			}
			m, _ := ingress[0].(map[string]any)
			ip, _ := m["ip"].(string)
			host, _ := m["hostname"].(string)
			return ip != "" || host != ""
		}
		if ips, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "clusterIPs"); len(ips) > 0 {
			return ips[0] != ""
		}
		return str("spec", "clusterIP") != ""
	case gkCRD:
		return conditionStatus(o, "Established") == "True" && conditionStatus(o, "NamesAccepted") == "True"
	case gkPDB:
		want := "False"
		if num("status", "disruptionsAllowed") > 0 {
			want = "True"
		}
		s := conditionStatus(o, "DisruptionAllowed")
		return observed() && s != "" && s == want
	}
	return true
}

// conditionStatus is the status of the status condition of type typ, "" when absent.
func conditionStatus(o *unstructured.Unstructured, typ string) string {
	cs, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
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
