package properties

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
)

// Well-known property names beyond model/member's node count and resource names.
const (
	// KubernetesVersionProperty is the member's Kubernetes version as its API server reports
	// it (the git version, e.g. v1.33.0). It is not a quantity: it is shown in the
	// MemberCluster's status, and a property selector or sorter on it never matches.
	KubernetesVersionProperty = "k8s.io/k8s-version"
)

// Condition types and reasons a provider reports on the InternalMemberCluster's status.
const (
	ConditionTypeStarted             = "ClusterPropertyProviderStarted"
	ConditionTypeCollectionSucceeded = "ClusterPropertyCollectionSucceeded"

	ReasonStarted           = "ClusterPropertyProviderStarted"
	ReasonStartFailed       = "ClusterPropertyProviderFailedToStart"
	ReasonCollected         = "ClusterPropertyCollectionSucceeded"
	ReasonCollectionFailed  = "ClusterPropertyCollectionFailed"
	ReasonCollectionPartial = "ClusterPropertyCollectionDegraded"
)

// Collection is what one Collect returns. Properties map a property name (label-key
// format) to its value, a Kubernetes quantity except for KubernetesVersionProperty; Usage is
// the resource usage (observation time left for the agent to set). Conditions are the
// provider's own; the agent writes them on the InternalMemberCluster.
type Collection struct {
	Properties map[string]string
	Usage      clusterv1beta1.ResourceUsage
	Conditions []metav1.Condition
	// Err is set when nothing could be collected; the agent then reports Healthy False and
	// keeps the last properties it wrote.
	Err error
}

// Provider reports a member's properties ([Properties and Resource Usage › Property
// provider], PROP-PROVIDER). Start is called once when the agent starts, with the member's
// API server configuration, and must not block; Collect is called on every heartbeat and
// must return when ctx ends.
type Provider interface {
	Start(ctx context.Context, member *rest.Config) error
	Collect(ctx context.Context) Collection
}

// Config is what `fleet member`'s flags say about properties.
type Config struct {
	// Provider names an entry of Providers ("" is kubernetes).
	Provider string
	// NodeLabels maps a property name to the node label whose value (a quantity) it
	// reports: the mean over the nodes that carry the label. configurable only.
	NodeLabels map[string]string
	// ConfigMap is namespace/name of a ConfigMap on the member whose data are properties
	// (name: quantity). configurable only.
	ConfigMap string
}

// Providers is the table of providers by name: adding a provider is one entry here.
var Providers = map[string]func(Config) (Provider, error){
	"kubernetes": func(c Config) (Provider, error) {
		if len(c.NodeLabels) > 0 || c.ConfigMap != "" {
			return nil, fmt.Errorf("node-label properties and a properties ConfigMap need --property-provider configurable")
		}
		return &Kubernetes{}, nil
	},
	"configurable": newConfigurable,
}

// Names lists Providers' names, sorted.
func Names() []string {
	var out []string
	for n := range Providers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// New returns the provider c names, checking c.
func New(c Config) (Provider, error) {
	name := c.Provider
	if name == "" {
		name = "kubernetes"
	}
	mk, ok := Providers[name]
	if !ok {
		return nil, fmt.Errorf("unknown property provider %q: must be one of %s", name, strings.Join(Names(), ", "))
	}
	return mk(c)
}
