package hubbench

// The objects of the write and list workloads beyond bindings and Works (writes.go): the
// policy and resource snapshots a placement's first decision creates, the statuses the hub
// writes on them and on the placement, and a heartbeat's two member status writes, each as
// large as the hub's or the agent's (prod/hub, agentk8s/member) for a placement of
// `decisions` clusters.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
)

// benchPolicy is a PickN policy with a label affinity, as the bench's PickN placements have.
func benchPolicy(decisions int) *v1beta1.PlacementPolicy {
	n := int32(decisions)
	return &v1beta1.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n,
		Affinity: &v1beta1.Affinity{ClusterAffinity: &v1beta1.ClusterAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1beta1.ClusterSelector{
			ClusterSelectorTerms: []v1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet-bench": "member"}}}},
		}}}}
}

// benchPolicySnapshot is a placement's first policy snapshot, as the hub creates it (its
// decisions come with the scheduler's status write, benchPolicyStatus).
func benchPolicySnapshot(round int64, i, decisions int) *v1beta1.ClusterSchedulingPolicySnapshot {
	crp := fmt.Sprintf("bench-%d-%05d", round, i)
	return &v1beta1.ClusterSchedulingPolicySnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: crp + "-0", Labels: map[string]string{v1beta1.CRPTrackingLabel: crp,
			v1beta1.PolicyIndexLabel: "0", v1beta1.IsLatestSnapshotLabel: "true"}},
		Spec: v1beta1.SchedulingPolicySnapshotSpec{Policy: benchPolicy(decisions),
			PolicyHash: []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")},
	}
}

// benchPolicyStatus is the scheduler's status on a policy snapshot: its conditions and one
// decision a cluster, with the cluster's scores and the reason.
func benchPolicyStatus(generation int64, decisions int) v1beta1.SchedulingPolicySnapshotStatus {
	st := v1beta1.SchedulingPolicySnapshotStatus{ObservedCRPGeneration: 1,
		Conditions: []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "SchedulingPolicyFulfilled",
			Message:            fmt.Sprintf("found all the %d clusters needed as specified by the scheduling policy", decisions),
			ObservedGeneration: generation, LastTransitionTime: metav1.Now()}}}
	for d := range decisions {
		a, p := int32(d%100), int32(0)
		st.ClusterDecisions = append(st.ClusterDecisions, v1beta1.ClusterDecision{ClusterName: fmt.Sprintf("member-%04d", d),
			Selected: true, ClusterScore: &v1beta1.ClusterScore{AffinityScore: &a, TopologySpreadScore: &p},
			Reason: "picked by scheduling policy"})
	}
	return st
}

// benchResourceSnapshot is a placement's resource snapshot of a namespace and a ConfigMap,
// as the hub bench's placements select.
func benchResourceSnapshot(round int64, i int) *v1beta1.ClusterResourceSnapshot {
	crp := fmt.Sprintf("bench-%d-%05d", round, i)
	var content []v1beta1.ResourceContent
	for _, m := range benchWork(round, i).Spec.Workload.Manifests {
		content = append(content, v1beta1.ResourceContent{RawExtension: runtime.RawExtension{Raw: m.Raw}})
	}
	return &v1beta1.ClusterResourceSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: crp + "-0-snapshot", Labels: map[string]string{v1beta1.CRPTrackingLabel: crp,
			v1beta1.ResourceIndexLabel: "0", v1beta1.IsLatestSnapshotLabel: "true"},
			Annotations: map[string]string{v1beta1.NumberOfResourceSnapshotsAnnotation: "1",
				v1beta1.ResourceGroupHashAnnotation: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}},
		Spec: v1beta1.ResourceSnapshotSpec{SelectedResources: content},
	}
}

// benchPlacement is a PickN placement of one namespace.
func benchPlacement(round int64, i, decisions int) *v1beta1.ClusterResourcePlacement {
	name := fmt.Sprintf("bench-%d-%05d", round, i)
	return &v1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: []v1beta1.ClusterResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}},
			Policy:            benchPolicy(decisions)}}
}

// placementConditions are the placement-wide and per-cluster condition types of an
// Available placement.
var placementConditions = []string{"Scheduled", "RolloutStarted", "Overridden", "WorkSynchronized", "Applied", "Available"}

// benchPlacementStatus is the status of an Available placement on decisions clusters: its
// selected resources, the conditions, and each cluster's status with its conditions.
func benchPlacementStatus(name string, generation int64, decisions int) v1beta1.PlacementStatus {
	now := metav1.Now()
	conds := func(prefix, subject string) []metav1.Condition {
		var out []metav1.Condition
		for _, t := range placementConditions {
			out = append(out, metav1.Condition{Type: prefix + t, Status: metav1.ConditionTrue, Reason: t,
				Message: fmt.Sprintf("%s: %s", subject, t), ObservedGeneration: generation, LastTransitionTime: now})
		}
		return out
	}
	st := v1beta1.PlacementStatus{ObservedResourceIndex: "0",
		SelectedResources: []v1beta1.ResourceIdentifier{{Version: "v1", Kind: "Namespace", Name: name}},
		Conditions:        conds("ClusterResourcePlacement", "all the "+fmt.Sprint(decisions)+" clusters")}
	for d := range decisions {
		member := fmt.Sprintf("member-%04d", d)
		st.PlacementStatuses = append(st.PlacementStatuses, v1beta1.ResourcePlacementStatus{ClusterName: member,
			ObservedResourceIndex: "0", Conditions: conds("", member)})
	}
	return st
}

// memberNamespace holds the workload's InternalMemberClusters (one namespace for all: the
// size of a write does not depend on it).
const memberNamespace = benchNamespace

// benchMemberProperties and benchUsage are what a member agent reports on each heartbeat:
// the built-in provider's properties and the member's resource usage.
func benchMemberProperties(now metav1.Time) map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue {
	return map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{
		"kubernetes-fleet.io/node-count":                   {Value: "3", ObservationTime: now},
		"resources.kubernetes-fleet.io/total-cpu":          {Value: "12", ObservationTime: now},
		"resources.kubernetes-fleet.io/allocatable-memory": {Value: "45Gi", ObservationTime: now},
		"resources.kubernetes-fleet.io/available-cpu":      {Value: "7500m", ObservationTime: now},
		"k8s.io/kubernetes-version":                        {Value: "v1.34.1", ObservationTime: now},
	}
}

func benchUsage(now metav1.Time) clusterv1beta1.ResourceUsage {
	list := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	return clusterv1beta1.ResourceUsage{Capacity: list("12", "48Gi"), Allocatable: list("11500m", "45Gi"),
		Available: list("7500m", "30Gi"), ObservationTime: now}
}

// benchAgentStatus is the member agent's entry: its heartbeat and Joined and Healthy.
func benchAgentStatus(now metav1.Time, generation int64) []clusterv1beta1.AgentStatus {
	return []clusterv1beta1.AgentStatus{{Type: clusterv1beta1.MemberAgent, LastReceivedHeartbeat: now, Conditions: []metav1.Condition{
		{Type: clusterv1beta1.ConditionTypeJoined, Status: metav1.ConditionTrue, Reason: "MemberJoined",
			Message: "the member agent joined the fleet", ObservedGeneration: generation, LastTransitionTime: now},
		{Type: clusterv1beta1.ConditionTypeHealthy, Status: metav1.ConditionTrue, Reason: "MemberHealthy",
			Message: "the member's API server answers", ObservedGeneration: generation, LastTransitionTime: now},
	}}}
}

// benchIMC is a joined member's InternalMemberCluster, as the hub creates it.
func benchIMC(round int64, i int) *clusterv1beta1.InternalMemberCluster {
	return &clusterv1beta1.InternalMemberCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: memberNamespace, Name: fmt.Sprintf("bench-%d-%05d", round, i)},
		Spec:       clusterv1beta1.InternalMemberClusterSpec{State: membership.StateJoin, HeartbeatPeriodSeconds: 60},
	}
}

// benchIMCStatus is an agent's heartbeat on its InternalMemberCluster (agentk8s/member's
// heartbeat: the agent's entry, the properties and the resource usage).
func benchIMCStatus(generation int64) clusterv1beta1.InternalMemberClusterStatus {
	now := metav1.Now()
	return clusterv1beta1.InternalMemberClusterStatus{AgentStatus: benchAgentStatus(now, generation),
		Properties: benchMemberProperties(now), ResourceUsage: benchUsage(now)}
}

// benchMC is a MemberCluster as an administrator creates it.
func benchMC(round int64, i int) *clusterv1beta1.MemberCluster {
	return &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%d-%05d", round, i), Labels: map[string]string{"fleet-bench": "member"}},
		Spec: clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: 60,
			Identity: rbacv1.Subject{Kind: "User", Name: fmt.Sprintf("member-%05d-agent", i), APIGroup: "rbac.authorization.k8s.io"}},
	}
}

// benchMCStatus is the hub's MemberCluster status after a heartbeat (prod/hub's membership
// flush: its conditions, and the agent's report mirrored).
func benchMCStatus(generation int64) clusterv1beta1.MemberClusterStatus {
	now := metav1.Now()
	var conds []metav1.Condition
	for _, t := range []string{clusterv1beta1.ConditionTypeReadyToJoin, clusterv1beta1.ConditionTypeJoined, clusterv1beta1.ConditionTypeHealthy} {
		conds = append(conds, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t,
			Message: "set by the write benchmark", ObservedGeneration: generation, LastTransitionTime: now})
	}
	return clusterv1beta1.MemberClusterStatus{Conditions: conds, AgentStatus: benchAgentStatus(now, generation),
		Properties: benchMemberProperties(now), ResourceUsage: benchUsage(now)}
}
