package difftest

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	multiclusterv1alpha1 "github.com/fleetsim/fleetsim/apis/multicluster/v1alpha1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/clusterprofile"
)

// ReadHub reads the State from an API server the production hub runs on: bindings (by the
// placement their CRPTrackingLabel names), ClusterResourcePlacement statuses, MemberCluster
// conditions, Works (listed, converted to the model's), staged update runs, approval
// requests, evictions and the ClusterProfiles in fleet-system.
func ReadHub(ctx context.Context, c client.Reader) (State, error) {
	st := newState()
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
	var works v1beta1.WorkList
	if err := c.List(ctx, &works); err != nil {
		return State{}, fmt.Errorf("list Works: %w", err)
	}
	for i := range works.Items {
		w, _, err := convert.WorkToModel(&works.Items[i])
		if err != nil {
			return State{}, fmt.Errorf("Work %s/%s: %w", works.Items[i].Namespace, works.Items[i].Name, err)
		}
		name, x := workState(w)
		st.Works[name] = x
	}
	var runs v1beta1.ClusterStagedUpdateRunList
	if err := c.List(ctx, &runs); err != nil {
		return State{}, fmt.Errorf("list ClusterStagedUpdateRuns: %w", err)
	}
	for i := range runs.Items {
		r := convert.UpdateRunToModel(&runs.Items[i])
		st.Runs[r.Name] = runState(r.Spec.PlacementName, r.Status)
	}
	var approvals v1beta1.ClusterApprovalRequestList
	if err := c.List(ctx, &approvals); err != nil {
		return State{}, fmt.Errorf("list ClusterApprovalRequests: %w", err)
	}
	for i := range approvals.Items {
		a := convert.ApprovalRequestToModel(&approvals.Items[i])
		st.Approvals[a.Name] = timedConditions(a.Status.Conditions)
	}
	var evictions v1beta1.ClusterResourcePlacementEvictionList
	if err := c.List(ctx, &evictions); err != nil {
		return State{}, fmt.Errorf("list ClusterResourcePlacementEvictions: %w", err)
	}
	for _, e := range evictions.Items {
		cs := Conditions{}
		for _, x := range e.Status.Conditions {
			cs[x.Type] = condition(string(x.Status), x.Reason)
		}
		st.Evictions[e.Name] = cs
	}
	var profiles multiclusterv1alpha1.ClusterProfileList
	if err := c.List(ctx, &profiles, client.InNamespace(clusterprofile.Namespace)); err != nil {
		return State{}, fmt.Errorf("list ClusterProfiles: %w", err)
	}
	for _, p := range profiles.Items {
		cs := Conditions{}
		for _, x := range p.Status.Conditions {
			cs[x.Type] = condition(string(x.Status), x.Reason)
		}
		st.Profiles[p.Name] = cs
	}
	st.normalize()
	return st, nil
}
