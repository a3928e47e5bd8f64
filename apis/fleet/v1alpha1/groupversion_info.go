package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is fleet.fleetsim.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "fleet.fleetsim.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this group version with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&Machine{}, &MachineList{}, &Unit{}, &UnitList{})
}
