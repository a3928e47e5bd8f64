package clusterprofile

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
)

// Where profiles live and who owns them, as KubeFleet writes them: its hub's system
// namespace, and its name as the cluster manager (spec.clusterManager.name and the
// x-k8s.io/cluster-manager label).
const (
	Namespace          = "fleet-system"
	ClusterManagerName = "KubeFleet"
	// LabelClusterManager is the label the cluster inventory API asks every manager to put
	// on its profiles, valued with its name.
	LabelClusterManager = "x-k8s.io/cluster-manager"
)

// KubernetesVersionProperty is the reported property whose value becomes
// status.version.kubernetes.
const KubernetesVersionProperty = "k8s.io/k8s-version"

// The condition type the cluster inventory API defines, and KubeFleet's reasons for it.
const (
	TypeControlPlaneHealthy = "ControlPlaneHealthy"

	ReasonNoStatus      = "MemberAgentReportedNoStatus"
	ReasonHealthUnknown = "MemberAgentReportedNoHealthInfo"
	ReasonHeartbeatLost = "MemberAgentHeartbeatLost"
	ReasonUnhealthy     = "MemberClusterAPIServerUnhealthy"
	ReasonHealthy       = "MemberClusterAPIServerHealthy"
)

// Input is what one profile decision reads: the member as the hub sees it (nil when its
// MemberCluster does not exist), the time now, and the heartbeat timeout the membership
// decision uses too.
type Input struct {
	Member      *member.Member
	Now         time.Time
	Eligibility member.EligibilityConfig
}

// Profile is the ClusterProfile a member should have, without what the driver owns
// (timestamps, generations, resourceVersion). Its name is the member's.
type Profile struct {
	Name              string
	DisplayName       string
	ClusterManager    string
	KubernetesVersion string // "" when the member has not reported one
	Healthy           condition.Condition
}

// Decision is the profile the member should have (nil: none, delete any), why, and when
// the decision may change with no new input (the moment the heartbeat goes stale; zero: no
// timed look again).
type Decision struct {
	Profile      *Profile
	Reason       string
	RequeueAfter time.Duration
}

// Decide makes the profile decision for one member.
func Decide(in Input) Decision {
	m := in.Member
	switch {
	case m == nil:
		return Decision{Reason: "the MemberCluster does not exist"}
	case m.Kind == member.KindMachine:
		// Machines are fleetsim's systemd members: no Kubernetes control plane to describe.
		return Decision{Reason: "the member is a machine, not a Kubernetes cluster"}
	case m.Leaving:
		// KubeFleet removes the profile as soon as the MemberCluster is being deleted,
		// before the member has finished leaving.
		return Decision{Reason: "the member is leaving the fleet"}
	}
	p := &Profile{
		Name:              m.Name,
		DisplayName:       m.Name,
		ClusterManager:    ClusterManagerName,
		KubernetesVersion: m.TextProperties[KubernetesVersionProperty],
		Healthy:           healthy(m.Agent, in.Now, in.Eligibility.HeartbeatTimeout),
	}
	d := Decision{Profile: p, Reason: "the member is in the fleet: " + p.Healthy.Reason}
	if a := m.Agent; a.Present && a.HealthKnown {
		if stale := a.LastHeartbeat.Add(in.Eligibility.HeartbeatTimeout + time.Nanosecond); stale.After(in.Now) {
			d.RequeueAfter = stale.Sub(in.Now)
		}
	}
	return d
}

// healthy is the ControlPlaneHealthy condition, checked in KubeFleet's order: no report,
// no health in the report, a heartbeat older than the timeout, then the reported health.
func healthy(a member.AgentStatus, now time.Time, timeout time.Duration) condition.Condition {
	switch {
	case !a.Present:
		return condition.Condition{Type: TypeControlPlaneHealthy, Status: metav1.ConditionUnknown, Reason: ReasonNoStatus,
			Message: "the member agent has not reported its status yet"}
	case !a.HealthKnown:
		return condition.Condition{Type: TypeControlPlaneHealthy, Status: metav1.ConditionUnknown, Reason: ReasonHealthUnknown,
			Message: "the member agent has reported, but not its health"}
	case now.Sub(a.LastHeartbeat) > timeout:
		return condition.False(TypeControlPlaneHealthy, ReasonHeartbeatLost,
			fmt.Sprintf("no heartbeat from the member agent since %s, longer than the %s timeout", a.LastHeartbeat.UTC().Format(time.RFC3339), timeout))
	case !a.Healthy:
		return condition.False(TypeControlPlaneHealthy, ReasonUnhealthy, "the member agent reports the cluster's API server is unhealthy")
	}
	return condition.True(TypeControlPlaneHealthy, ReasonHealthy, "the member agent reports the cluster's API server is healthy")
}
