// Package v1alpha1 is the fleet.fleetsim.io/v1alpha1 API group: the CoreOS-fleet half of the
// hub. A Machine is one systemd machine running `fleet agent`; a Unit is one fleet unit (a
// systemd unit file, its desired state and the machine the engine scheduled it to). Both are
// cluster-scoped. The CRDs in config/crd/bases are generated from these types (make generate).
//
// +kubebuilder:object:generate=true
// +groupName=fleet.fleetsim.io
package v1alpha1
