package snapshot

// A hub's bindings and Works in the form a what-if preview predicts them, so that a
// prediction and a real hub's outcome compare field for field.

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/rollout"
	"github.com/fleetsim/fleetsim/scenarios/whatif"
)

// ReadState reads every placement's Scheduled and Bound bindings (cluster, state, the
// scheduler's reason, ready as the rollout counts it at now) and the manifests of their
// Works.
func ReadState(ctx context.Context, c client.Reader, now time.Time) (whatif.State, error) {
	st := whatif.State{Placements: map[string]*whatif.PlacementState{}}
	var crps v1beta1.ClusterResourcePlacementList
	if err := c.List(ctx, &crps); err != nil {
		return st, fmt.Errorf("list ClusterResourcePlacements: %w", err)
	}
	periods := map[string]time.Duration{}
	for _, crp := range crps.Items {
		if crp.DeletionTimestamp != nil {
			continue
		}
		st.Placements[crp.Name] = &whatif.PlacementState{Clusters: map[string]*whatif.ClusterState{}}
		periods[crp.Name] = time.Duration(rollout.DefaultUnavailablePeriodSeconds) * time.Second
		if ru := crp.Spec.Strategy.RollingUpdate; ru != nil && ru.UnavailablePeriodSeconds != nil {
			periods[crp.Name] = time.Duration(max(*ru.UnavailablePeriodSeconds, 0)) * time.Second
		}
	}
	var bindings v1beta1.ClusterResourceBindingList
	if err := c.List(ctx, &bindings); err != nil {
		return st, fmt.Errorf("list ClusterResourceBindings: %w", err)
	}
	for i := range bindings.Items {
		b := convert.BindingToModel(&bindings.Items[i])
		p := st.Placements[bindings.Items[i].Labels[v1beta1.CRPTrackingLabel]]
		if p == nil || b.Deleting || (b.State != placement.Scheduled && b.State != placement.Bound) {
			continue
		}
		ready, _ := rollout.Ready(b, now, periods[b.Placement])
		reason := b.ClusterDecision.Reason
		if b.ClusterDecision.Plugin != "" {
			reason += " (" + b.ClusterDecision.Plugin + ")"
		}
		p.Clusters[b.TargetCluster] = &whatif.ClusterState{Binding: b.State, Reason: reason, Available: ready}
	}
	var works v1beta1.WorkList
	if err := c.List(ctx, &works); err != nil {
		return st, fmt.Errorf("list Works: %w", err)
	}
	var ws []mhub.Work
	for i := range works.Items {
		if works.Items[i].DeletionTimestamp != nil {
			continue
		}
		w, _, err := convert.WorkToModel(&works.Items[i])
		if err != nil {
			return st, fmt.Errorf("work %s/%s: %w", works.Items[i].Namespace, works.Items[i].Name, err)
		}
		ws = append(ws, *w)
	}
	whatif.AddWorks(st, ws)
	return st, nil
}
