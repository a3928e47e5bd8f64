package member

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/model/member"
)

// collect gathers what KubeFleet's default property provider reports (PROP-FALLBACK,
// PROP-CORE, PROP-SEMANTICS): the node count, and cpu and memory capacity and allocatable
// summed over the nodes, available being allocatable minus the requests of the pods that
// are not finished.
func (a *Agent) collect(ctx context.Context) (map[string]string, clusterv1beta1.ResourceUsage, error) {
	var nodes corev1.NodeList
	if err := a.Member.List(ctx, &nodes); err != nil {
		return nil, clusterv1beta1.ResourceUsage{}, fmt.Errorf("list nodes: %w", err)
	}
	var pods corev1.PodList
	if err := a.Member.List(ctx, &pods); err != nil {
		return nil, clusterv1beta1.ResourceUsage{}, fmt.Errorf("list pods: %w", err)
	}
	return Usage(nodes.Items, pods.Items)
}

// Usage computes the properties and resource usage of a member from its nodes and pods.
func Usage(nodes []corev1.Node, pods []corev1.Pod) (map[string]string, clusterv1beta1.ResourceUsage, error) {
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
	return props, clusterv1beta1.ResourceUsage{Capacity: capacity, Allocatable: allocatable, Available: available}, nil
}
