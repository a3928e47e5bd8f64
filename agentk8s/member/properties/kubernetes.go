package properties

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/model/member"
)

// Kubernetes is the built-in provider (PROP-CORE, PROP-SEMANTICS): the node count, cpu and
// memory capacity and allocatable summed over the nodes, available being allocatable minus
// the requests of the pods bound to a node that are not finished, and the Kubernetes
// version.
type Kubernetes struct {
	// Client reads Nodes and Pods; Start builds one from the member's configuration when
	// nil.
	Client client.Reader
	// Version answers the API server's version; Start builds one when nil. Without it the
	// version property is left out.
	Version discovery.ServerVersionInterface
}

// Start builds what Collect needs from the member's configuration.
func (k *Kubernetes) Start(_ context.Context, cfg *rest.Config) error {
	if k.Client == nil {
		c, err := client.New(cfg, client.Options{})
		if err != nil {
			return fmt.Errorf("member client: %w", err)
		}
		k.Client = c
	}
	if k.Version == nil {
		d, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return fmt.Errorf("member discovery client: %w", err)
		}
		k.Version = d
	}
	return nil
}

// Collect lists the member's Nodes and Pods and asks its version.
func (k *Kubernetes) Collect(ctx context.Context) Collection {
	c, _ := k.collect(ctx)
	return c
}

// collect is Collect, also returning the nodes it listed.
func (k *Kubernetes) collect(ctx context.Context) (Collection, []corev1.Node) {
	var nodes corev1.NodeList
	if err := k.Client.List(ctx, &nodes); err != nil {
		return failed(fmt.Errorf("list nodes: %w", err)), nil
	}
	var pods corev1.PodList
	if err := k.Client.List(ctx, &pods); err != nil {
		return failed(fmt.Errorf("list pods: %w", err)), nil
	}
	props, usage := Usage(nodes.Items, pods.Items)
	c := Collection{Properties: props, Usage: usage}
	if k.Version != nil {
		v, err := k.Version.ServerVersion()
		if err != nil {
			// The figures the scheduler uses were collected: report them, and say what is
			// missing.
			degraded(&c, fmt.Sprintf("read the Kubernetes version: %v", err))
			return c, nodes.Items
		}
		props[KubernetesVersionProperty] = v.GitVersion
	}
	c.Conditions = []metav1.Condition{succeeded()}
	return c, nodes.Items
}

// degraded records that part of a collection failed: the condition's message lists every
// failure. The agent dates the condition when it writes it.
func degraded(c *Collection, msg string) {
	if old := meta.FindStatusCondition(c.Conditions, ConditionTypeCollectionSucceeded); old != nil && old.Reason == ReasonCollectionPartial {
		msg = old.Message + "; " + msg
	}
	c.Conditions = []metav1.Condition{{Type: ConditionTypeCollectionSucceeded, Status: metav1.ConditionFalse,
		Reason: ReasonCollectionPartial, Message: msg}}
}

func succeeded() metav1.Condition {
	return metav1.Condition{Type: ConditionTypeCollectionSucceeded, Status: metav1.ConditionTrue,
		Reason: ReasonCollected, Message: "the member's properties were collected"}
}

func failed(err error) Collection {
	return Collection{Err: err, Conditions: []metav1.Condition{{Type: ConditionTypeCollectionSucceeded, Status: metav1.ConditionFalse,
		Reason: ReasonCollectionFailed, Message: err.Error()}}}
}

// Usage computes the node count property and the resource usage of a member from its nodes
// and pods.
func Usage(nodes []corev1.Node, pods []corev1.Pod) (map[string]string, clusterv1beta1.ResourceUsage) {
	names := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
	capacity, allocatable, requested := corev1.ResourceList{}, corev1.ResourceList{}, corev1.ResourceList{}
	for _, n := range names {
		capacity[n], allocatable[n], requested[n] = resource.Quantity{}, resource.Quantity{}, resource.Quantity{}
	}
	add := func(into corev1.ResourceList, from corev1.ResourceList) {
		for _, n := range names {
			if q, ok := from[n]; ok {
				sum := into[n]
				sum.Add(q)
				into[n] = sum
			}
		}
	}
	for _, n := range nodes {
		add(capacity, n.Status.Capacity)
		add(allocatable, n.Status.Allocatable)
	}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Spec.NodeName == "" {
			continue
		}
		for _, c := range p.Spec.Containers {
			add(requested, c.Resources.Requests)
		}
	}
	available := corev1.ResourceList{}
	for _, n := range names {
		q := allocatable[n].DeepCopy()
		q.Sub(requested[n])
		if q.Sign() < 0 {
			q = resource.Quantity{}
		}
		available[n] = q
	}
	props := map[string]string{member.NodeCountProperty: strconv.Itoa(len(nodes))}
	return props, clusterv1beta1.ResourceUsage{Capacity: capacity, Allocatable: allocatable, Available: available}
}
