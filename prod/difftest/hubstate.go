package difftest

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// ReadHub reads the State from an API server the production hub runs on: bindings (by the
// placement their CRPTrackingLabel names), ClusterResourcePlacement statuses and
// MemberCluster conditions.
func ReadHub(ctx context.Context, c client.Reader) (State, error) {
	st := State{Bindings: []Binding{}, Placements: map[string]Placement{}, Members: map[string]Conditions{}}
	var bindings v1beta1.ClusterResourceBindingList
	if err := c.List(ctx, &bindings); err != nil {
		return State{}, fmt.Errorf("list ClusterResourceBindings: %w", err)
	}
	for _, b := range bindings.Items {
		st.Bindings = append(st.Bindings, Binding{
			Placement: b.Labels[v1beta1.CRPTrackingLabel], Cluster: b.Spec.TargetCluster, State: string(b.Spec.State),
			Deleting: b.DeletionTimestamp != nil,
		})
	}
	var crps v1beta1.ClusterResourcePlacementList
	if err := c.List(ctx, &crps); err != nil {
		return State{}, fmt.Errorf("list ClusterResourcePlacements: %w", err)
	}
	for _, crp := range crps.Items {
		conds := Conditions{}
		for _, x := range crp.Status.Conditions {
			conds[x.Type] = condition(string(x.Status), x.Reason)
		}
		p := placementState(conds, convert.PlacementStatusToModel(crp.Status))
		st.Placements[crp.Name] = p
	}
	var mcs clusterv1beta1.MemberClusterList
	if err := c.List(ctx, &mcs); err != nil {
		return State{}, fmt.Errorf("list MemberClusters: %w", err)
	}
	for _, mc := range mcs.Items {
		cs := Conditions{}
		for _, x := range mc.Status.Conditions {
			cs[x.Type] = condition(string(x.Status), x.Reason)
		}
		st.Members[mc.Name] = cs
	}
	st.normalize()
	return st, nil
}
