package member

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Kind tells what a member runs: Kubernetes manifests or systemd units.
type Kind string

const (
	KindCluster Kind = "Cluster"
	KindMachine Kind = "Machine"
)

// TaintEffect is the effect of a taint. KubeFleet defines only NoSchedule.
type TaintEffect string

const NoSchedule TaintEffect = "NoSchedule"

// Taint repels placements that do not tolerate it (MC-TAINTS).
type Taint struct {
	Key    string      `json:"key"`
	Value  string      `json:"value,omitempty"`
	Effect TaintEffect `json:"effect"`
}

func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// ResourceList maps a resource name (cpu, memory, ...) to a quantity.
type ResourceList map[string]resource.Quantity

// ResourceUsage is what the member agent reports about capacity (PROP-EXPOSE). Available is
// optional (DC-14).
type ResourceUsage struct {
	Capacity    ResourceList `json:"capacity,omitempty"`
	Allocatable ResourceList `json:"allocatable,omitempty"`
	Available   ResourceList `json:"available,omitempty"`
}

// AgentStatus is the member agent's report as the hub last received it: the MemberAgent
// entry of MemberCluster.status.agentStatus.
type AgentStatus struct {
	// Present is false until the agent has reported at least once.
	Present bool
	// Joined mirrors the agent's Joined condition.
	Joined bool
	// LastHeartbeat is when the hub last received a heartbeat, by the hub's clock.
	LastHeartbeat time.Time
	// HealthKnown is false while the agent has not reported a Healthy condition.
	HealthKnown bool
	Healthy     bool
	// HealthTransition is the Healthy condition's lastTransitionTime.
	HealthTransition time.Time
}

// Member is one fleet member as the hub sees it.
type Member struct {
	Name   string
	Kind   Kind
	Labels map[string]string
	Taints []Taint
	// Properties are non-resource properties such as kubernetes-fleet.io/node-count.
	Properties map[string]resource.Quantity
	// TextProperties are the reported properties whose value is not a quantity (the
	// Kubernetes version, k8s.io/k8s-version): shown in the MemberCluster's status, never
	// matched by a property selector or sorter.
	TextProperties map[string]string
	Resources      ResourceUsage
	// HeartbeatPeriod is spec.heartbeatPeriodSeconds as a duration.
	HeartbeatPeriod time.Duration
	// Leaving is true once the member has been asked to leave (its MemberCluster is being
	// deleted). A leaving member is never picked and loses its placements.
	Leaving bool
	// DeleteValidation is spec.deleteOptions.validationMode: how much the hub checks before
	// a leaving member is removed ("" means Strict).
	DeleteValidation DeleteValidationMode
	Agent            AgentStatus
}

// DeleteValidationMode is a MemberCluster's spec.deleteOptions.validationMode.
type DeleteValidationMode string

const (
	// DeleteValidationStrict (the default): the hub removes a leaving member only once its
	// agent acknowledged the leave (or its heartbeat timed out) and its bindings are gone.
	DeleteValidationStrict DeleteValidationMode = "Strict"
	// DeleteValidationSkip: the hub does not wait for the agent's acknowledgement; the
	// member is removed as soon as its bindings are gone (a forced removal).
	DeleteValidationSkip DeleteValidationMode = "Skip"
)

// Well-known property names (PROP-CORE, PROP-NAMING-FOR-SELECTORS).
const (
	NodeCountProperty = "kubernetes-fleet.io/node-count"
	// ResourcePropertyPrefix addresses resource usage: resources.kubernetes-fleet.io/<total|allocatable|available>-<resource>.
	ResourcePropertyPrefix = "resources.kubernetes-fleet.io/"
)

// Defaults and limits for heartbeatPeriodSeconds (MC-API).
const (
	DefaultHeartbeatPeriod = 60 * time.Second
	MinHeartbeatPeriod     = 1 * time.Second
	MaxHeartbeatPeriod     = 600 * time.Second
)
