package hub

// Loading a decision's state: reading from the manager's cache what the decision's scope
// names and converting it to the model, members on first use. Separate from state.go's
// Store implementation, which works on the state whatever read it, and from flush.go,
// which writes it back.

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/staged"
)

// memberReader is where a decision reads members: the memo, and what to do once before
// the first read (wait for the hub's own writes to members, consistency.go rule 1).
type memberReader struct {
	memo   *memberMemo
	before func()
}

// loadState reads from r (the manager's cache) what the decision's scope names; api is the
// API server, for flush.
func loadState(ctx context.Context, r, api client.Reader, sc scope, mm memberReader, hubObjects func() ([]*unstructured.Unstructured, error)) (*state, error) {
	s := &state{
		hubObjects: hubObjects,
		reader:     api,
		scope:      sc,
		crps:       map[string]*v1beta1.ClusterResourcePlacement{}, placements: map[string]*mhub.Placement{}, removed: map[string]bool{},
		policySnaps: map[string]*v1beta1.ClusterSchedulingPolicySnapshot{}, resourceSnaps: map[string]*v1beta1.ClusterResourceSnapshot{},
		loadedScheduled: map[string]*condition.Condition{},
		mirrorObjs:      map[string][]*v1beta1.ClusterResourcePlacementStatus{},
		bindingObjs:     map[string]*v1beta1.ClusterResourceBinding{}, bindings: map[string]*placement.Binding{},
		workObjs: map[string]map[string]*v1beta1.Work{}, works: map[string]map[string]*mhub.Work{},
		evictionObjs: map[string]*v1beta1.ClusterResourcePlacementEviction{}, evictions: map[string]*eviction.Eviction{},
		budgets: map[string]*eviction.DisruptionBudget{},
		runObjs: map[string]*v1beta1.ClusterStagedUpdateRun{}, runs: map[string]*staged.ClusterStagedUpdateRun{},
		strategies:   map[string]*staged.ClusterStagedUpdateStrategy{},
		approvalObjs: map[string]*v1beta1.ClusterApprovalRequest{}, approvals: map[string]*staged.ClusterApprovalRequest{},
	}
	s.loadMembers = func() (map[string]*mhub.MemberCluster, []error, error) {
		mm.before()
		return mm.memo.load(ctx, r)
	}
	s.loadMember = func(name string) (*mhub.MemberCluster, error, error) {
		mm.before()
		return mm.memo.one(ctx, r, name)
	}
	for _, step := range []func(context.Context, client.Reader) error{
		s.loadPlacements, s.loadBindings, s.loadOverrides, s.loadEvictions, s.loadStaged,
	} {
		if err := step(ctx, r); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func list(ctx context.Context, r client.Reader, l client.ObjectList, what string, opts ...client.ListOption) error {
	if err := r.List(ctx, l, opts...); err != nil {
		return fmt.Errorf("list %s: %w", what, err)
	}
	return nil
}

// get reads one object into o, reporting whether it exists.
func get(ctx context.Context, r client.Reader, name, namespace string, o client.Object) (bool, error) {
	switch err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, o); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get %T %s: %w", o, name, err)
	}
	return true, nil
}

func (s *state) loadPlacements(ctx context.Context, r client.Reader) error {
	if s.scope.placement == "" {
		return nil
	}
	var crps v1beta1.ClusterResourcePlacementList
	var pss v1beta1.ClusterSchedulingPolicySnapshotList
	var rss v1beta1.ClusterResourceSnapshotList
	crp := &v1beta1.ClusterResourcePlacement{}
	if ok, err := get(ctx, r, s.scope.placement, "", crp); err != nil || !ok {
		return err
	}
	crps.Items = append(crps.Items, *crp)
	byPlacement := client.MatchingFields{indexPlacement: s.scope.placement}
	if err := list(ctx, r, &pss, "ClusterSchedulingPolicySnapshots", byPlacement); err != nil {
		return err
	}
	if err := list(ctx, r, &rss, "ClusterResourceSnapshots", byPlacement); err != nil {
		return err
	}
	for i := range crps.Items {
		crp := &crps.Items[i]
		s.crps[crp.Name] = crp
		p := convert.PlacementToModel(crp)
		s.placements[crp.Name] = p
		if p.CRP.Spec.StatusReportingScope != placement.NamespaceAccessible {
			continue // the scope is immutable: such a placement never had a status copy
		}
		var ms v1beta1.ClusterResourcePlacementStatusList
		if err := list(ctx, r, &ms, "ClusterResourcePlacementStatuses", client.MatchingLabels{v1beta1.CRPTrackingLabel: crp.Name}); err != nil {
			return err
		}
		for j := range ms.Items {
			m := &ms.Items[j]
			s.mirrorObjs[crp.Name] = append(s.mirrorObjs[crp.Name], m)
			if m.Name == crp.Name && m.Namespace == p.CRP.Spec.StatusNamespace() {
				p.Mirror = convert.PlacementStatusObjectToModel(m)
			}
		}
	}
	for i := range pss.Items {
		ps := &pss.Items[i]
		s.policySnaps[ps.Name] = ps
		p := s.placements[ps.Labels[v1beta1.CRPTrackingLabel]]
		if p == nil {
			continue // an orphan: garbage collection removes it with its owner
		}
		snap, err := convert.PolicySnapshotToModel(ps)
		if err != nil {
			s.warnings = append(s.warnings, err) // not one the hub wrote: left out
			continue
		}
		p.PolicySnapshots = append(p.PolicySnapshots, snap)
	}
	groups := map[string]map[string][]*v1beta1.ClusterResourceSnapshot{}
	for i := range rss.Items {
		rs := &rss.Items[i]
		s.resourceSnaps[rs.Name] = rs
		crp := rs.Labels[v1beta1.CRPTrackingLabel]
		if groups[crp] == nil {
			groups[crp] = map[string][]*v1beta1.ClusterResourceSnapshot{}
		}
		idx := rs.Labels[v1beta1.ResourceIndexLabel]
		groups[crp][idx] = append(groups[crp][idx], rs)
	}
	for name, p := range s.placements {
		slices.SortFunc(p.PolicySnapshots, func(a, b *placement.PolicySnapshot) int { return cmp.Compare(a.Index, b.Index) })
		for _, g := range groups[name] {
			snap, err := convert.ResourceSnapshotToModel(g)
			if err != nil {
				// An incomplete group (a hub cut while writing it, leads go last): left out,
				// so the placement controller writes it again over the parts.
				s.warnings = append(s.warnings, err)
				continue
			}
			p.ResourceSnapshots = append(p.ResourceSnapshots, snap)
		}
		slices.SortFunc(p.ResourceSnapshots, func(a, b *resources.Snapshot) int { return cmp.Compare(a.Index, b.Index) })
		if latest := p.LatestResources(); latest != nil {
			// What the placement selected is what its latest snapshot holds; the placement
			// controller selects afresh when it runs.
			p.Selected = latest.Manifests
		}
		if latest := p.LatestPolicySnapshot(); latest != nil {
			sc := convert.SchedulingToModel(s.policySnaps[latest.Name])
			p.Scheduled, p.ScheduledGeneration, p.Decisions = sc.Condition, sc.ObservedPlacementGeneration, sc.Decisions
			p.Conditions = convert.ConditionsToModel(s.policySnaps[latest.Name].Status.Conditions)
			for _, d := range sc.Decisions {
				if d.Selected {
					p.ObservedClusterCount++
				}
			}
		}
		s.loadedScheduled[name] = p.Scheduled
	}
	return nil
}

func (s *state) loadBindings(ctx context.Context, r client.Reader) error {
	var bs v1beta1.ClusterResourceBindingList
	var ws v1beta1.WorkList
	switch {
	case s.scope.binding != "":
		b := &v1beta1.ClusterResourceBinding{}
		ok, err := get(ctx, r, s.scope.binding, "", b)
		if err != nil {
			return err
		}
		if ok {
			bs.Items = append(bs.Items, *b)
		}
		if err := list(ctx, r, &ws, "Works", client.MatchingFields{indexBinding: s.scope.binding}); err != nil {
			return err
		}
	case s.scope.allBindings && s.scope.placement != "":
		byPlacement := client.MatchingFields{indexPlacement: s.scope.placement}
		if err := list(ctx, r, &bs, "ClusterResourceBindings", byPlacement); err != nil {
			return err
		}
		if err := list(ctx, r, &ws, "Works", byPlacement); err != nil {
			return err
		}
	default:
		return nil
	}
	for i := range bs.Items {
		b := &bs.Items[i]
		s.bindingObjs[b.Name] = b
		s.bindings[b.Name] = convert.BindingToModel(b)
	}
	for i := range ws.Items {
		w := &ws.Items[i]
		m, _, err := convert.WorkToModel(w)
		if err != nil || m.Binding == "" {
			continue // not one of the hub's Works
		}
		if s.workObjs[m.Binding] == nil {
			s.workObjs[m.Binding], s.works[m.Binding] = map[string]*v1beta1.Work{}, map[string]*mhub.Work{}
		}
		s.workObjs[m.Binding][w.Name], s.works[m.Binding][w.Name] = w, m
	}
	return nil
}

func (s *state) loadOverrides(ctx context.Context, r client.Reader) error {
	var cs v1beta1.ClusterResourceOverrideSnapshotList
	var rs v1beta1.ResourceOverrideSnapshotList
	if err := list(ctx, r, &cs, "ClusterResourceOverrideSnapshots"); err != nil {
		return err
	}
	if err := list(ctx, r, &rs, "ResourceOverrideSnapshots"); err != nil {
		return err
	}
	for i := range cs.Items {
		sn, err := convert.ClusterResourceOverrideSnapshotToModel(&cs.Items[i])
		if err != nil {
			s.warnings = append(s.warnings, err)
			continue
		}
		s.cros = append(s.cros, sn)
	}
	for i := range rs.Items {
		sn, err := convert.ResourceOverrideSnapshotToModel(&rs.Items[i])
		if err != nil {
			s.warnings = append(s.warnings, err)
			continue
		}
		s.ros = append(s.ros, sn)
	}
	// By override, then index: the last of each override's run is its latest.
	slices.SortFunc(s.cros, func(a, b override.CROSnapshot) int {
		return cmp.Or(cmp.Compare(a.Override, b.Override), cmp.Compare(a.Index, b.Index))
	})
	slices.SortFunc(s.ros, func(a, b override.ROSnapshot) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Override, b.Override), cmp.Compare(a.Index, b.Index))
	})
	return nil
}

func (s *state) loadEvictions(ctx context.Context, r client.Reader) error {
	var es v1beta1.ClusterResourcePlacementEvictionList
	var ds v1beta1.ClusterResourcePlacementDisruptionBudgetList
	if s.scope.eviction != "" {
		e := &v1beta1.ClusterResourcePlacementEviction{}
		if ok, err := get(ctx, r, s.scope.eviction, "", e); err != nil || !ok {
			return err
		}
		es.Items = append(es.Items, *e)
		d := &v1beta1.ClusterResourcePlacementDisruptionBudget{}
		ok, err := get(ctx, r, e.Spec.PlacementName, "", d)
		if err != nil {
			return err
		}
		if ok {
			ds.Items = append(ds.Items, *d)
		}
	}
	for i := range es.Items {
		e := &es.Items[i]
		s.evictionObjs[e.Name], s.evictions[e.Name] = e, convert.EvictionToModel(e)
	}
	for i := range ds.Items {
		s.budgets[ds.Items[i].Name] = convert.DisruptionBudgetToModel(&ds.Items[i])
	}
	return nil
}

func (s *state) loadStaged(ctx context.Context, r client.Reader) error {
	if s.scope.run == "" {
		return nil
	}
	var runs v1beta1.ClusterStagedUpdateRunList
	var strategies v1beta1.ClusterStagedUpdateStrategyList
	var approvals v1beta1.ClusterApprovalRequestList
	for _, l := range []struct {
		list client.ObjectList
		what string
		opts []client.ListOption
	}{{&runs, "ClusterStagedUpdateRuns", nil}, {&strategies, "ClusterStagedUpdateStrategies", nil},
		{&approvals, "ClusterApprovalRequests", []client.ListOption{client.MatchingFields{indexRun: s.scope.run}}}} {
		if err := list(ctx, r, l.list, l.what, l.opts...); err != nil {
			return err
		}
	}
	for i := range runs.Items {
		x := &runs.Items[i]
		s.runObjs[x.Name], s.runs[x.Name] = x, convert.UpdateRunToModel(x)
	}
	for i := range strategies.Items {
		s.strategies[strategies.Items[i].Name] = convert.StrategyToModel(&strategies.Items[i])
	}
	for i := range approvals.Items {
		x := &approvals.Items[i]
		s.approvalObjs[x.Name], s.approvals[x.Name] = x, convert.ApprovalRequestToModel(x)
	}
	return nil
}
