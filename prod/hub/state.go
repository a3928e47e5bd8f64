package hub

// A decision's state: the hub's objects as one decision holds them, the scope it reads,
// and its implementation of mhub.Store, which the shared controllers read and change.
// Reading the objects in is load.go; writing back what changed is flush.go.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
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
	workObjs    map[string]map[string]*v1beta1.Work // by binding name, then Work name
	works       map[string]map[string]*mhub.Work

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

// Works lists a binding's Works by name.
func (s *state) Works(binding string) []*mhub.Work {
	ws := s.works[binding]
	out := make([]*mhub.Work, 0, len(ws))
	for _, n := range slices.Sorted(maps.Keys(ws)) {
		out = append(out, ws[n])
	}
	return out
}

func (s *state) PutWork(w *mhub.Work) {
	if s.works[w.Binding] == nil {
		s.works[w.Binding] = map[string]*mhub.Work{}
	}
	s.works[w.Binding][w.Name] = w
}

// RemoveWork drops one Work of a binding; the flush deletes it.
func (s *state) RemoveWork(binding, name string) {
	delete(s.works[binding], name)
	if len(s.works[binding]) == 0 {
		delete(s.works, binding)
	}
}

func (s *state) DeleteWork(binding string) { delete(s.works, binding) }

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
