package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Machine is one systemd machine. Its agent creates it, named by the machine ID, and
// heartbeats in its status; the engine treats it as lost once the last heartbeat is older
// than the machine TTL.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=fm
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="IP",type=string,JSONPath=`.status.publicIP`
// +kubebuilder:printcolumn:name="Heartbeat",type=date,JSONPath=`.status.lastHeartbeat`
type Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineSpec   `json:"spec,omitempty"`
	Status MachineStatus `json:"status,omitempty"`
}

// MachineSpec is what users and the agent's flags set.
type MachineSpec struct {
	// Metadata is the machine's metadata, matched by [X-Fleet] MachineMetadata. The agent sets
	// the keys of its --metadata flag; the fleet API's PATCH /machines edits any key.
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// MachineStatus is what the agent reports.
type MachineStatus struct {
	// PublicIP is the address the agent advertises (fleet's primaryIP).
	// +optional
	PublicIP string `json:"publicIP,omitempty"`
	// LastHeartbeat is when the agent last reported.
	// +optional
	LastHeartbeat metav1.MicroTime `json:"lastHeartbeat,omitempty"`
	// Version is the agent's version.
	// +optional
	Version string `json:"version,omitempty"`
	// Units is what systemd on this machine reports for the agent's units, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Units []UnitState `json:"units,omitempty"`
}

// UnitState is one unit as systemd on a machine reports it (the fleet API's UnitState).
type UnitState struct {
	// Name is the unit name.
	Name string `json:"name"`
	// Hash is the hex hash of the unit file on the machine.
	Hash string `json:"hash"`
	// LoadState, ActiveState and SubState are systemd's, verbatim.
	LoadState   string `json:"loadState,omitempty"`
	ActiveState string `json:"activeState,omitempty"`
	SubState    string `json:"subState,omitempty"`
	// State is fleet's current state of the unit on the machine: the target state the agent
	// has acted on (inactive, loaded or launched), which the fleet API shows as the unit's
	// currentState. Empty from an agent that does not report it; systemd's states then
	// stand in.
	// +optional
	// +kubebuilder:validation:Enum=inactive;loaded;launched
	State string `json:"state,omitempty"`
}

// +kubebuilder:object:root=true

// MachineList is a list of Machines.
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Machine `json:"items"`
}

// Unit is one fleet unit. Its object name is derived from the unit name (lower-cased, other
// characters replaced by "-", a hash of the exact name appended), since unit names may hold
// characters object names may not; spec.name keeps the unit name.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=fu
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Unit",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Desired",type=string,JSONPath=`.spec.desiredState`
// +kubebuilder:printcolumn:name="Machine",type=string,JSONPath=`.status.machineID`
type Unit struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   UnitSpec   `json:"spec"`
	Status UnitStatus `json:"status,omitempty"`
}

// UnitSpec is what users set (fleetctl and the fleet API). Name and File are immutable.
type UnitSpec struct {
	// Name is the unit name, e.g. "web@1.service".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable"
	Name string `json:"name"`
	// File is the unit file in its canonical form.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the unit file is immutable: destroy the unit and submit it again"
	File string `json:"file"`
	// DesiredState is inactive, loaded or launched.
	// +kubebuilder:validation:Enum=inactive;loaded;launched
	DesiredState string `json:"desiredState"`
}

// UnitStatus is what the engine writes.
type UnitStatus struct {
	// MachineID is the machine the engine scheduled the unit to; empty if none (and always
	// for global units, which every matching machine runs).
	// +optional
	MachineID string `json:"machineID,omitempty"`
	// Reason says why the unit was last scheduled, unscheduled or could not be placed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// FenceToken is the engine lease token the last scheduling write was made under.
	// +optional
	FenceToken int64 `json:"fenceToken,omitempty"`
}

// +kubebuilder:object:root=true

// UnitList is a list of Units.
type UnitList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Unit `json:"items"`
}
