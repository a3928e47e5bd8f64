package hub

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/staged"
)

// state is the hub's objects as one decision sees them: read from the manager's cache at
// its start, scoped to what the decision is about (scope), converted to the model, changed
// in memory by the shared controllers (it implements mhub.Store), and written back by flush
// as the difference to what was read. Objects outside the scope are neither read nor
// written; each decision starts from what is stored, so nothing a crashed hub held in
// memory is needed by the next one.
type state struct {
	// hubObjects lists what placements may select; it is only called by the placement
	// controller, so other reconciles do not pay for it.
	hubObjects func() ([]*unstructured.Unstructured, error)
	err        error // the first failure of a lazy read; flush reports it and writes nothing
	// reader is the API server itself: flush re-reads with it what its own writes changed
	// and it must write again.
	reader client.Reader
	scope  scope

	members map[string]*mhub.MemberCluster

	crps            map[string]*v1beta1.ClusterResourcePlacement
	placements      map[string]*mhub.Placement
	removed         map[string]bool // placements the controller finished deleting
	policySnaps     map[string]*v1beta1.ClusterSchedulingPolicySnapshot
	resourceSnaps   map[string]*v1beta1.ClusterResourceSnapshot
	loadedScheduled map[string]*condition.Condition // each placement's Scheduled as loaded, to see whether the scheduler ran
	// mirrorObjs are the ClusterResourcePlacementStatus objects of each NamespaceAccessible
	// placement (statusReportingScope), in any namespace.
	mirrorObjs map[string][]*v1beta1.ClusterResourcePlacementStatus

	bindingObjs map[string]*v1beta1.ClusterResourceBinding
	bindings    map[string]*placement.Binding
	workObjs    map[string]*v1beta1.Work // by binding name
	works       map[string]*mhub.Work

	cros []override.CROSnapshot
	ros  []override.ROSnapshot

	evictionObjs map[string]*v1beta1.ClusterResourcePlacementEviction
	evictions    map[string]*eviction.Eviction
	budgets      map[string]*eviction.DisruptionBudget

	runObjs      map[string]*v1beta1.ClusterStagedUpdateRun
	runs         map[string]*staged.ClusterStagedUpdateRun
	strategies   map[string]*staged.ClusterStagedUpdateStrategy
	approvalObjs map[string]*v1beta1.ClusterApprovalRequest
	approvals    map[string]*staged.ClusterApprovalRequest

	warnings []error // objects that could not be read into the model and were left out

	// loadMembers reads every member, on first use: decisions about one binding (the
	// fan-in of a member's report) never ask, and a thousand members cost a pass each.
	loadMembers   func() (map[string]*mhub.MemberCluster, []error, error)
	membersLoaded bool
	// loadMember reads one member, for a decision that asks for one before the fleet
	// (the work generator's overrides); oneMember holds what it read.
	loadMember func(name string) (*mhub.MemberCluster, error, error)
	oneMember  map[string]*mhub.MemberCluster

	mu sync.Mutex // guards workObjs while flush writes in parallel
}

var _ mhub.Store = (*state)(nil)

// scope is what one decision reads: the placement it is about with its snapshots, and
// either all the placement's bindings and Works or one binding and its Work; an eviction
// or an update run with what it names. Overrides are always read; members when a
// controller first asks (through memberMemo).
type scope struct {
	placement   string
	allBindings bool   // every binding and Work of the placement
	binding     string // only this binding and its Work
	eviction    string
	run         string
}

// bindingOnly tells a decision about one binding, which writes nothing placement-wide.
func (sc scope) bindingOnly() bool { return sc.binding != "" }

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
		workObjs: map[string]*v1beta1.Work{}, works: map[string]*mhub.Work{},
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
		s.workObjs[m.Binding], s.works[m.Binding] = w, m
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

// The mhub.Store implementation. Objects are held by pointer, as in the simulator, so a
// controller's Put of an object it got changes nothing further.

// fleet is every member, read on first use. A read error leaves the decision without
// members and fails its flush, so nothing decided on a partial fleet is written.
func (s *state) fleet() map[string]*mhub.MemberCluster {
	if s.membersLoaded || s.loadMembers == nil { // a state made with its members
		if s.members == nil {
			s.members = map[string]*mhub.MemberCluster{}
		}
		return s.members
	}
	s.membersLoaded = true
	members, warnings, err := s.loadMembers()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		members = map[string]*mhub.MemberCluster{}
	}
	s.members = members
	s.warnings = append(s.warnings, warnings...)
	return s.members
}

func (s *state) MemberCluster(name string) *mhub.MemberCluster {
	if s.membersLoaded || s.loadMember == nil {
		return s.members[name]
	}
	if m, ok := s.oneMember[name]; ok {
		return m
	}
	m, warning, err := s.loadMember(name)
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return nil
	}
	if warning != nil {
		s.warnings = append(s.warnings, warning)
	}
	if s.oneMember == nil {
		s.oneMember = map[string]*mhub.MemberCluster{}
	}
	s.oneMember[name] = m
	return m
}
func (s *state) PutMemberCluster(m *mhub.MemberCluster) { s.fleet()[m.Member.Name] = m }
func (s *state) RemoveMemberCluster(name string)        { delete(s.fleet(), name) }
func (s *state) MemberClusterNames() []string           { return slices.Sorted(maps.Keys(s.fleet())) }

func (s *state) BindingsOnMember(name string) int {
	n := 0
	for _, b := range s.bindings {
		if b.TargetCluster == name {
			n++
		}
	}
	return n
}

func (s *state) Clusters() []*member.Member {
	var out []*member.Member
	for _, n := range s.MemberClusterNames() {
		if m := s.fleet()[n].Member; m.Kind == member.KindCluster {
			out = append(out, m)
		}
	}
	return out
}

func (s *state) Placement(name string) *mhub.Placement { return s.placements[name] }
func (s *state) PlacementNames() []string              { return slices.Sorted(maps.Keys(s.placements)) }
func (s *state) PutPlacement(p *mhub.Placement)        { s.placements[p.CRP.Name] = p }

func (s *state) RemovePlacement(name string) {
	delete(s.placements, name)
	s.removed[name] = true
}

func (s *state) Binding(name string) *placement.Binding { return s.bindings[name] }

func (s *state) Bindings(placementName string) []*placement.Binding {
	var out []*placement.Binding
	for _, n := range slices.Sorted(maps.Keys(s.bindings)) {
		if b := s.bindings[n]; b.Placement == placementName {
			out = append(out, b)
		}
	}
	return out
}

// PutBinding creates or replaces a binding; replacing keeps the stored pointer, so slices
// handed to decisions stay valid.
func (s *state) PutBinding(b placement.Binding) {
	if old := s.bindings[b.Name]; old != nil {
		*old = b
		return
	}
	s.bindings[b.Name] = &b
}

// DeleteBinding deletes a binding and, as garbage collection would, its Work.
func (s *state) DeleteBinding(name string) *placement.Binding {
	b := s.bindings[name]
	delete(s.bindings, name)
	delete(s.works, name)
	return b
}

func (s *state) HubObjects() []*unstructured.Unstructured {
	objs, err := s.hubObjects()
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("list the resources placements select: %w", err)
	}
	return objs
}

func (s *state) Work(binding string) *mhub.Work { return s.works[binding] }
func (s *state) PutWork(w *mhub.Work)           { s.works[w.Binding] = w }
func (s *state) DeleteWork(binding string)      { delete(s.works, binding) }

func (s *state) LatestOverrides() ([]override.CROSnapshot, []override.ROSnapshot) {
	var cros []override.CROSnapshot
	for i, sn := range s.cros {
		if i+1 == len(s.cros) || s.cros[i+1].Override != sn.Override {
			cros = append(cros, sn)
		}
	}
	var ros []override.ROSnapshot
	for i, sn := range s.ros {
		if i+1 == len(s.ros) || s.ros[i+1].Override != sn.Override || s.ros[i+1].Namespace != sn.Namespace {
			ros = append(ros, sn)
		}
	}
	slices.SortFunc(ros, func(a, b override.ROSnapshot) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return cros, ros
}

func (s *state) NamedOverrides(cro []string, ro []placement.NamespacedName) ([]override.CROSnapshot, []override.ROSnapshot) {
	var cs []override.CROSnapshot
	for _, sn := range s.cros {
		if slices.Contains(cro, sn.Name) {
			cs = append(cs, sn)
		}
	}
	var rs []override.ROSnapshot
	for _, sn := range s.ros {
		if slices.Contains(ro, sn.NamespacedName()) {
			rs = append(rs, sn)
		}
	}
	slices.SortFunc(rs, func(a, b override.ROSnapshot) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return cs, rs
}

func (s *state) Eviction(name string) *eviction.Eviction { return s.evictions[name] }
func (s *state) EvictionNames() []string                 { return slices.Sorted(maps.Keys(s.evictions)) }
func (s *state) PutEviction(e *eviction.Eviction)        { s.evictions[e.Name] = e }
func (s *state) DisruptionBudget(name string) *eviction.DisruptionBudget {
	return s.budgets[name]
}

func (s *state) UpdateRun(name string) *staged.ClusterStagedUpdateRun { return s.runs[name] }
func (s *state) UpdateRunNames() []string                             { return slices.Sorted(maps.Keys(s.runs)) }
func (s *state) PutUpdateRun(r *staged.ClusterStagedUpdateRun)        { s.runs[r.Name] = r }
func (s *state) Strategy(name string) *staged.ClusterStagedUpdateStrategy {
	return s.strategies[name]
}

func (s *state) ApprovalRequests(run string) []*staged.ClusterApprovalRequest {
	var out []*staged.ClusterApprovalRequest
	for _, n := range slices.Sorted(maps.Keys(s.approvals)) {
		if a := s.approvals[n]; a.Labels[staged.LabelTargetUpdateRun] == run {
			out = append(out, a)
		}
	}
	return out
}

func (s *state) PutApprovalRequest(a staged.ClusterApprovalRequest) { s.approvals[a.Name] = &a }

// resourceIndex reads a resource snapshot's index label.
func resourceIndex(rs *v1beta1.ClusterResourceSnapshot) int {
	n, _ := strconv.Atoi(rs.Labels[v1beta1.ResourceIndexLabel])
	return n
}

// placementOf names the placement an object a decision recorded belongs to: the subject
// itself when it is a placement, else the placement of the binding, eviction or run so named.
func (s *state) placementOf(subject string) string {
	switch {
	case s.crps[subject] != nil:
		return subject
	case s.bindingObjs[subject] != nil:
		return s.bindingObjs[subject].Labels[v1beta1.CRPTrackingLabel]
	case s.bindings[subject] != nil:
		return s.bindings[subject].Placement
	case s.evictions[subject] != nil:
		return s.evictions[subject].Spec.PlacementName
	case s.runs[subject] != nil:
		return s.runs[subject].Spec.PlacementName
	}
	return ""
}
