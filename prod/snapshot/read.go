package snapshot

// Reading a hub: every kind a scenario can start from, with list calls only.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	fleetv1alpha1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Hub is what was read from a hub.
type Hub struct {
	Members     []clusterv1beta1.MemberCluster
	Machines    []fleetv1alpha1.Machine
	Units       []fleetv1alpha1.Unit
	Placements  []v1beta1.ClusterResourcePlacement
	Bindings    []v1beta1.ClusterResourceBinding
	Snapshots   []v1beta1.ClusterResourceSnapshot
	CROs        []v1beta1.ClusterResourceOverride
	ROs         []v1beta1.ResourceOverride
	Strategies  []v1beta1.ClusterStagedUpdateStrategy
	Runs        []v1beta1.ClusterStagedUpdateRun
	Approvals   []v1beta1.ClusterApprovalRequest
	Evictions   []v1beta1.ClusterResourcePlacementEviction
	Budgets     []v1beta1.ClusterResourcePlacementDisruptionBudget
	listsFailed []string
}

// Read lists every kind a snapshot captures. A kind the hub does not serve (a KubeFleet
// hub has no fleet.fleetsim.io machines) is noted, not fatal; any other error is.
func Read(ctx context.Context, c client.Reader) (*Hub, error) {
	h := &Hub{}
	lists := []struct {
		what     string
		list     client.ObjectList
		optional bool
	}{
		{"MemberClusters", &clusterv1beta1.MemberClusterList{}, false},
		{"Machines", &fleetv1alpha1.MachineList{}, true},
		{"Units", &fleetv1alpha1.UnitList{}, true},
		{"ClusterResourcePlacements", &v1beta1.ClusterResourcePlacementList{}, false},
		{"ClusterResourceBindings", &v1beta1.ClusterResourceBindingList{}, false},
		{"ClusterResourceSnapshots", &v1beta1.ClusterResourceSnapshotList{}, false},
		{"ClusterResourceOverrides", &v1beta1.ClusterResourceOverrideList{}, true},
		{"ResourceOverrides", &v1beta1.ResourceOverrideList{}, true},
		{"ClusterStagedUpdateStrategies", &v1beta1.ClusterStagedUpdateStrategyList{}, true},
		{"ClusterStagedUpdateRuns", &v1beta1.ClusterStagedUpdateRunList{}, true},
		{"ClusterApprovalRequests", &v1beta1.ClusterApprovalRequestList{}, true},
		{"ClusterResourcePlacementEvictions", &v1beta1.ClusterResourcePlacementEvictionList{}, true},
		{"ClusterResourcePlacementDisruptionBudgets", &v1beta1.ClusterResourcePlacementDisruptionBudgetList{}, true},
	}
	for _, l := range lists {
		if err := c.List(ctx, l.list); err != nil {
			if l.optional {
				h.listsFailed = append(h.listsFailed, fmt.Sprintf("%s: %v", l.what, err))
				continue
			}
			return nil, fmt.Errorf("list %s: %w", l.what, err)
		}
		switch l := l.list.(type) {
		case *clusterv1beta1.MemberClusterList:
			h.Members = l.Items
		case *fleetv1alpha1.MachineList:
			h.Machines = l.Items
		case *fleetv1alpha1.UnitList:
			h.Units = l.Items
		case *v1beta1.ClusterResourcePlacementList:
			h.Placements = l.Items
		case *v1beta1.ClusterResourceBindingList:
			h.Bindings = l.Items
		case *v1beta1.ClusterResourceSnapshotList:
			h.Snapshots = l.Items
		case *v1beta1.ClusterResourceOverrideList:
			h.CROs = l.Items
		case *v1beta1.ResourceOverrideList:
			h.ROs = l.Items
		case *v1beta1.ClusterStagedUpdateStrategyList:
			h.Strategies = l.Items
		case *v1beta1.ClusterStagedUpdateRunList:
			h.Runs = l.Items
		case *v1beta1.ClusterApprovalRequestList:
			h.Approvals = l.Items
		case *v1beta1.ClusterResourcePlacementEvictionList:
			h.Evictions = l.Items
		case *v1beta1.ClusterResourcePlacementDisruptionBudgetList:
			h.Budgets = l.Items
		}
	}
	return h, nil
}

// selectedResources are the manifests of every placement's latest resource snapshot, each
// identity once (two placements may select the same object), sorted: namespaces first, so
// that applying them in order creates a namespace before what it holds.
func (h *Hub) selectedResources() ([]*unstructured.Unstructured, []string) {
	var missed []string
	groups := map[string][]*v1beta1.ClusterResourceSnapshot{}
	latest := map[string]int{}
	for i := range h.Snapshots {
		s := &h.Snapshots[i]
		crp := s.Labels[v1beta1.CRPTrackingLabel]
		idx, err := strconv.Atoi(s.Labels[v1beta1.ResourceIndexLabel])
		if crp == "" || err != nil {
			missed = append(missed, fmt.Sprintf("ClusterResourceSnapshot %s: no placement or resource index label", s.Name))
			continue
		}
		key := crp + "/" + strconv.Itoa(idx)
		groups[key] = append(groups[key], s)
		if cur, ok := latest[crp]; !ok || idx > cur {
			latest[crp] = idx
		}
	}
	seen := map[string]*unstructured.Unstructured{}
	for _, crp := range sortedKeys(latest) {
		snap, err := convert.ResourceSnapshotToModel(groups[crp+"/"+strconv.Itoa(latest[crp])])
		if err != nil {
			missed = append(missed, fmt.Sprintf("placement %s: its latest resource snapshot: %v", crp, err))
			continue
		}
		for _, m := range snap.Manifests {
			seen[identity(m)] = m
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(seen))
	for _, k := range sortedKeys(seen) {
		out = append(out, seen[k])
	}
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int {
		return cmp.Compare(rank(a), rank(b))
	})
	return out, missed
}

func rank(o *unstructured.Unstructured) int {
	if o.GetAPIVersion() == "v1" && o.GetKind() == "Namespace" {
		return 0
	}
	return 1
}

func identity(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// liveBindings are each placement's clusters with a Scheduled or Bound binding not being
// deleted, sorted.
func (h *Hub) liveBindings() map[string][]string {
	out := map[string][]string{}
	for _, b := range h.Bindings {
		if b.DeletionTimestamp != nil {
			continue
		}
		switch placement.BindingState(b.Spec.State) {
		case placement.Scheduled, placement.Bound:
			crp := b.Labels[v1beta1.CRPTrackingLabel]
			out[crp] = append(out[crp], b.Spec.TargetCluster)
		}
	}
	for k := range out {
		slices.Sort(out[k])
		out[k] = slices.Compact(out[k])
	}
	return out
}

// toUnstructured converts a typed object to a manifest as a user writes it: apiVersion,
// kind, metadata (name, namespace, labels, annotations) and the rest without status.
func toUnstructured(o runtime.Object, apiVersion, kind string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return clean(u), nil
}

// clean keeps what a user wrote of an object.
func clean(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range u.Object {
		switch k {
		case "status", "metadata":
		default:
			out.Object[k] = v
		}
	}
	out.SetName(u.GetName())
	if ns := u.GetNamespace(); ns != "" {
		out.SetNamespace(ns)
	}
	if l := u.GetLabels(); len(l) > 0 {
		out.SetLabels(l)
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		if len(a) > 0 {
			out.SetAnnotations(a)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
