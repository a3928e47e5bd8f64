package apis

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	fleetv1alpha1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	multiclusterv1alpha1 "github.com/fleetsim/fleetsim/apis/multicluster/v1alpha1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

var schemeBuilder = runtime.NewSchemeBuilder(clientgoscheme.AddToScheme, clusterv1beta1.AddToScheme, placementv1beta1.AddToScheme, fleetv1alpha1.AddToScheme, multiclusterv1alpha1.AddToScheme)

// AddToScheme registers what the hub reads and writes: Kubernetes' built-in kinds, both
// KubeFleet API groups, fleetsim's own fleet.fleetsim.io (machines and units) and the
// cluster inventory's multicluster.x-k8s.io (the ClusterProfiles the hub publishes).
var AddToScheme = schemeBuilder.AddToScheme
