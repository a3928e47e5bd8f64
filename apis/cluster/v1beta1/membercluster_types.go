package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/member"
)

// Condition types of a MemberCluster (MC-JOIN), and of an agent's status entry.
const (
	ConditionTypeReadyToJoin = "ReadyToJoin"
	ConditionTypeJoined      = "Joined"
	ConditionTypeHealthy     = "Healthy"
)

// Heartbeat period limits and default, in seconds (MC-API).
const (
	DefaultHeartbeatPeriodSeconds = 60
	MinHeartbeatPeriodSeconds     = 1
	MaxHeartbeatPeriodSeconds     = 600
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cluster,categories={fleet,fleet-cluster}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Joined",type=string,JSONPath=`.status.conditions[?(@.type=="Joined")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Member-Agent-Last-Seen",type=date,JSONPath=`.status.agentStatus[?(@.type=="MemberAgent")].lastReceivedHeartbeat`
// +kubebuilder:printcolumn:name="Node-Count",type=string,JSONPath=`.status.properties.kubernetes-fleet\.io/node-count.value`
// +kubebuilder:printcolumn:name="Available-CPU",type=string,JSONPath=`.status.resourceUsage.available.cpu`
// +kubebuilder:printcolumn:name="Available-Memory",type=string,JSONPath=`.status.resourceUsage.available.memory`
// +kubebuilder:printcolumn:name="Allocatable-CPU",type=string,priority=1,JSONPath=`.status.resourceUsage.allocatable.cpu`
// +kubebuilder:printcolumn:name="Allocatable-Memory",type=string,priority=1,JSONPath=`.status.resourceUsage.allocatable.memory`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) < 64",message="metadata.name must be at most 63 characters: it names the member's namespace fleet-member-<name>"

// MemberCluster represents one member cluster of the fleet on the hub. Creating it makes the
// hub create the member's reserved namespace fleet-member-<name>, the RBAC for its identity
// and its InternalMemberCluster; deleting it makes the member leave.
type MemberCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// The desired state of MemberCluster.
	// +required
	Spec MemberClusterSpec `json:"spec"`

	// The observed status of MemberCluster.
	// +optional
	Status MemberClusterStatus `json:"status,omitempty"`
}

// MemberClusterSpec defines the desired state of MemberCluster.
type MemberClusterSpec struct {
	// The identity used by the member cluster to access the hub cluster. The hub grants it
	// the minimal permissions, scoped to the member's reserved namespace.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.kind in ['ServiceAccount', 'User', 'Group']",message="identity.kind must be ServiceAccount, User or Group"
	// +kubebuilder:validation:XValidation:rule="self.kind != 'ServiceAccount' || (has(self.__namespace__) && self.__namespace__ != '')",message="identity.namespace is required for a ServiceAccount"
	Identity rbacv1.Subject `json:"identity"`

	// How often (in seconds) for the member cluster to send a heartbeat to the hub cluster.
	// Default: 60 seconds. Min: 1 second. Max: 10 minutes.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	// +optional
	HeartbeatPeriodSeconds int32 `json:"heartbeatPeriodSeconds,omitempty"`

	// If specified, the MemberCluster's taints. A placement is scheduled on the cluster (PickAll
	// and PickN) only if it tolerates every taint; adding a taint never evicts.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Taints []Taint `json:"taints,omitempty"`

	// DeleteOptions says what the hub checks when the MemberCluster is deleted.
	// +optional
	DeleteOptions *DeleteOptions `json:"deleteOptions,omitempty"`
}

// DeleteOptions configures the deletion of a MemberCluster.
type DeleteOptions struct {
	// ValidationMode: Strict (the default) removes a deleted member once its agent has
	// acknowledged the leave (or stopped heartbeating) and its placements are gone; Skip
	// does not wait for the agent: the member is removed once its placements are gone.
	// +kubebuilder:default=Strict
	// +kubebuilder:validation:Enum=Skip;Strict
	// +optional
	ValidationMode member.DeleteValidationMode `json:"validationMode,omitempty"`
}

// Taint attached to a MemberCluster repels every ClusterResourcePlacement that does not
// tolerate it.
type Taint struct {
	// The taint key to be applied to a MemberCluster.
	// +kubebuilder:validation:MinLength=1
	// +required
	Key string `json:"key"`

	// The taint value corresponding to the taint key.
	// +optional
	Value string `json:"value,omitempty"`

	// The effect of the taint on ClusterResourcePlacements that do not tolerate the taint.
	// Only NoSchedule is supported.
	// +kubebuilder:validation:Enum=NoSchedule
	// +required
	Effect member.TaintEffect `json:"effect"`
}

// MemberClusterStatus defines the observed status of MemberCluster.
type MemberClusterStatus struct {
	// Conditions is an array of current observed conditions for the member cluster:
	// ReadyToJoin, Joined, Healthy, plus those of the property provider.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Properties are the non-resource properties observed for the member cluster (for
	// example kubernetes-fleet.io/node-count), keyed by property name.
	// +optional
	Properties map[PropertyName]PropertyValue `json:"properties,omitempty"`

	// The current observed resource usage of the member cluster. It is copied from the
	// corresponding InternalMemberCluster object.
	// +optional
	ResourceUsage ResourceUsage `json:"resourceUsage,omitempty"`

	// AgentStatus is an array of current observed status, each corresponding to one member
	// agent running in the member cluster.
	// +optional
	AgentStatus []AgentStatus `json:"agentStatus,omitempty"`
}

// PropertyName is the name of a cluster property; it should be a Kubernetes label name.
type PropertyName string

// PropertyValue is the value of a cluster property.
type PropertyValue struct {
	// Value is the value of the cluster property, a Kubernetes quantity.
	// +required
	Value string `json:"value"`

	// ObservationTime is when the cluster property was observed.
	// +optional
	ObservationTime metav1.Time `json:"observationTime,omitzero"`
}

// ResourceUsage contains the observed resource usage of a member cluster (PROP-SEMANTICS).
type ResourceUsage struct {
	// Capacity is the total resource capacity of all the nodes of the member cluster.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// Allocatable is capacity minus what is reserved for the OS, kubelet and the like.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// Available is allocatable minus what workloads requested. It is only populated when a
	// property provider is enabled.
	// +optional
	Available corev1.ResourceList `json:"available,omitempty"`

	// When the resource usage was observed.
	// +optional
	ObservationTime metav1.Time `json:"observationTime,omitzero"`
}

// AgentType defines a type of agent running in a member cluster.
type AgentType string

const (
	// MemberAgent handles joining and leaving and places resources from the hub.
	MemberAgent AgentType = "MemberAgent"
	// MultiClusterServiceAgent exposes multi-cluster services via L4 load balancers.
	MultiClusterServiceAgent AgentType = "MultiClusterServiceAgent"
	// ServiceExportImportAgent exports and imports services across clusters.
	ServiceExportImportAgent AgentType = "ServiceExportImportAgent"
)

// AgentStatus defines the observed status of the member agent of the given type.
type AgentStatus struct {
	// Type of the member agent.
	// +kubebuilder:validation:Enum=MemberAgent;MultiClusterServiceAgent;ServiceExportImportAgent
	// +required
	Type AgentType `json:"type"`

	// Conditions is an array of current observed conditions for the member agent: Joined
	// and Healthy.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Last time we received a heartbeat from the member agent.
	// +optional
	LastReceivedHeartbeat metav1.Time `json:"lastReceivedHeartbeat,omitzero"`
}

// +kubebuilder:object:root=true

// MemberClusterList contains a list of MemberCluster.
type MemberClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MemberCluster `json:"items"`
}
