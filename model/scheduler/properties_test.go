package scheduler_test

// Property tests for the scheduling decision (SCHED-*, CRP-POL-*, AFF-*, TOPO-*, TAINT-*,
// MC-HEARTBEAT-HEALTH). Every helper here is prefixed with prop so that it cannot clash with
// the table-driven tests' helpers in the same package.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
)

// propNow is the fixed decision time; heartbeats and health transitions are relative to it.
var propNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	propPlacementName = "crp"
	propCurrentSnap   = "crp-1"
	propOldSnap       = "crp-0"
	propGoneCluster   = "gone"
)

// Label keys and values: small sets so that selectors and topology domains collide often.
// "south" and "test" are carried by no member, "zone" by no member either.
var (
	propLabelValues = map[string][]string{
		"region": {"east", "west", "north", "south"},
		"env":    {"prod", "dev", "test"},
	}
	propLabelKeys = []string{"region", "env"}

	propTaints = []member.Taint{
		{Key: "dedicated", Value: "gpu", Effect: member.NoSchedule},
		{Key: "dedicated", Value: "infra", Effect: member.NoSchedule},
		{Key: "maint", Effect: member.NoSchedule},
		{Key: "spot", Value: "true", Effect: member.NoSchedule},
	}
	propTolerations = []placement.Toleration{
		{Key: "dedicated", Value: "gpu"},
		{Key: "dedicated", Operator: placement.TolerationOpEqual, Value: "infra", Effect: member.NoSchedule},
		{Key: "dedicated", Operator: placement.TolerationOpExists},
		{Key: "maint", Operator: placement.TolerationOpExists, Effect: member.NoSchedule},
		{Key: "maint"},
		{Operator: placement.TolerationOpExists},
	}
	propPropertyNames = []string{
		member.NodeCountProperty,
		member.ResourcePropertyPrefix + "total-cpu",
		member.ResourcePropertyPrefix + "allocatable-cpu",
		member.ResourcePropertyPrefix + "available-cpu",
		"example.com/unreported",
	}
	propPropertyValues = []string{"0", "1", "2", "2500m", "3", "5", "500m", "8"}
	propPropertyOps    = []placement.PropertySelectorOperator{
		placement.PropertyGt, placement.PropertyGe, placement.PropertyEq,
		placement.PropertyNe, placement.PropertyLt, placement.PropertyLe,
	}

	// Member names from a tiny alphabet: "a" < "ab" < "b" makes the name tie-break matter.
	propNameGen = rapid.StringOfN(rapid.RuneFrom([]rune("abcd")), 1, 3, -1)
)

// propCase is one generated scheduling situation.
type propCase struct {
	Members  []*member.Member
	Bindings []*placement.Binding
	Snapshot *placement.PolicySnapshot
}

func (c propCase) input() scheduler.Input {
	return scheduler.Input{Snapshot: c.Snapshot, Members: c.Members, Bindings: c.Bindings, Now: propNow}
}

// GoString renders the case readably; rapid prints draws with %#v.
func (c propCase) GoString() string { return propDescribeInput(c.input()) }

func (c propCase) policyType() placement.PlacementType { return c.Snapshot.Policy.Type() }

// ---------------------------------------------------------------------------------------
// Generators

func propDrawMember(t *rapid.T, name string) *member.Member {
	m := &member.Member{
		Name: name, Kind: member.KindCluster, Labels: map[string]string{},
		HeartbeatPeriod: member.DefaultHeartbeatPeriod,
	}
	for _, k := range propLabelKeys {
		// The first two values of each key are common; some members lack the key.
		vals := append([]string{""}, propLabelValues[k][:len(propLabelValues[k])-1]...)
		if v := rapid.SampledFrom(vals).Draw(t, k); v != "" {
			m.Labels[k] = v
		}
	}
	if rapid.IntRange(0, 3).Draw(t, "tainted") == 0 {
		m.Taints = rapid.SliceOfNDistinct(rapid.SampledFrom(propTaints), 1, 2, rapid.ID[member.Taint]).Draw(t, "taints")
	}
	if rapid.Bool().Draw(t, "hasNodeCount") {
		m.Properties = map[string]resource.Quantity{
			member.NodeCountProperty: *resource.NewQuantity(int64(rapid.IntRange(0, 8).Draw(t, "nodeCount")), resource.DecimalSI),
		}
	}
	cpu := func(label string) member.ResourceList {
		if !rapid.Bool().Draw(t, label+"Reported") {
			return nil
		}
		return member.ResourceList{"cpu": *resource.NewMilliQuantity(int64(500*rapid.IntRange(0, 12).Draw(t, label)), resource.DecimalSI)}
	}
	m.Resources = member.ResourceUsage{Capacity: cpu("capacity"), Allocatable: cpu("allocatable"), Available: cpu("available")}

	m.Agent = member.AgentStatus{
		Present: true, Joined: true,
		LastHeartbeat: propNow.Add(-rapid.SampledFrom([]time.Duration{0, 30 * time.Second, 4*time.Minute + 59*time.Second, 5 * time.Minute}).Draw(t, "heartbeatAge")),
		HealthKnown:   true, Healthy: true, HealthTransition: propNow.Add(-time.Hour),
	}
	// Mostly healthy; otherwise one of the eligibility failures (MC-HEARTBEAT-HEALTH).
	switch rapid.IntRange(0, 15).Draw(t, "health") {
	case 9: // stale heartbeat
		m.Agent.LastHeartbeat = propNow.Add(-rapid.SampledFrom([]time.Duration{5*time.Minute + time.Second, 6 * time.Minute, time.Hour}).Draw(t, "staleAge"))
	case 10:
		m.Agent.Joined = false
	case 11:
		m.Leaving = true
	case 12: // unhealthy, for long or only briefly
		m.Agent.Healthy = false
		m.Agent.HealthTransition = propNow.Add(-rapid.SampledFrom([]time.Duration{time.Minute, 5 * time.Minute, 5*time.Minute + time.Second, 2 * time.Hour}).Draw(t, "unhealthyFor"))
	case 13:
		m.Agent = member.AgentStatus{}
	case 14:
		m.Agent.HealthKnown, m.Agent.Healthy = false, false
	case 15: // leaving and stale: both at once
		m.Leaving = true
		m.Agent.LastHeartbeat = propNow.Add(-time.Hour)
	}
	return m
}

func propGenLabelSelector() *rapid.Generator[*metav1.LabelSelector] {
	return rapid.Custom(func(t *rapid.T) *metav1.LabelSelector {
		ls := &metav1.LabelSelector{}
		if rapid.IntRange(0, 2).Draw(t, "hasMatchLabels") == 0 {
			k := rapid.SampledFrom(propLabelKeys).Draw(t, "key")
			ls.MatchLabels = map[string]string{k: rapid.SampledFrom(propLabelValues[k]).Draw(t, "value")}
		}
		for range rapid.IntRange(0, 2).Draw(t, "expressions") {
			k := rapid.SampledFrom(propLabelKeys).Draw(t, "key")
			op := rapid.SampledFrom([]metav1.LabelSelectorOperator{
				metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist,
			}).Draw(t, "op")
			req := metav1.LabelSelectorRequirement{Key: k, Operator: op}
			if op == metav1.LabelSelectorOpIn || op == metav1.LabelSelectorOpNotIn {
				req.Values = rapid.SliceOfNDistinct(rapid.SampledFrom(propLabelValues[k]), 1, 2, rapid.ID[string]).Draw(t, "values")
			}
			ls.MatchExpressions = append(ls.MatchExpressions, req)
		}
		return ls
	})
}

func propGenRequiredTerm() *rapid.Generator[placement.ClusterSelectorTerm] {
	return rapid.Custom(func(t *rapid.T) placement.ClusterSelectorTerm {
		var term placement.ClusterSelectorTerm
		if rapid.Bool().Draw(t, "hasLabelSelector") {
			term.LabelSelector = propGenLabelSelector().Draw(t, "labelSelector")
		}
		if rapid.Bool().Draw(t, "hasPropertySelector") {
			ps := &placement.PropertySelector{}
			for range rapid.IntRange(1, 2).Draw(t, "propertyExpressions") {
				ps.MatchExpressions = append(ps.MatchExpressions, placement.PropertySelectorRequirement{
					Name:     rapid.SampledFrom(propPropertyNames).Draw(t, "name"),
					Operator: rapid.SampledFrom(propPropertyOps).Draw(t, "op"),
					Values:   []string{rapid.SampledFrom(propPropertyValues).Draw(t, "value")},
				})
			}
			term.PropertySelector = ps
		}
		return term
	})
}

func propGenPreferred() *rapid.Generator[placement.PreferredClusterSelector] {
	return rapid.Custom(func(t *rapid.T) placement.PreferredClusterSelector {
		pref := placement.PreferredClusterSelector{Weight: int32(rapid.IntRange(placement.MinPreferenceWeight, placement.MaxPreferenceWeight).Draw(t, "weight"))}
		if rapid.Bool().Draw(t, "hasLabelSelector") {
			pref.Preference.LabelSelector = propGenLabelSelector().Draw(t, "labelSelector")
		}
		if rapid.Bool().Draw(t, "hasSorter") {
			pref.Preference.PropertySorter = &placement.PropertySorter{
				Name:      rapid.SampledFrom(propPropertyNames).Draw(t, "name"),
				SortOrder: rapid.SampledFrom([]placement.PropertySortOrder{placement.Ascending, placement.Descending}).Draw(t, "order"),
			}
		}
		return pref
	})
}

func propGenTopology() *rapid.Generator[placement.TopologySpreadConstraint] {
	return rapid.Custom(func(t *rapid.T) placement.TopologySpreadConstraint {
		c := placement.TopologySpreadConstraint{
			TopologyKey: rapid.SampledFrom([]string{"region", "region", "env", "zone"}).Draw(t, "key"),
			WhenUnsatisfiable: rapid.SampledFrom([]placement.UnsatisfiableConstraintAction{
				"", placement.DoNotSchedule, placement.ScheduleAnyway,
			}).Draw(t, "whenUnsatisfiable"),
		}
		if skew := int32(rapid.IntRange(0, 3).Draw(t, "maxSkew")); skew > 0 {
			c.MaxSkew = &skew
		}
		return c
	})
}

// propGenPolicy builds a valid policy of one of the given types (all when none given). A
// nil policy (PickAll) is among the results when PickAll is allowed.
func propGenPolicy(names []string, types ...placement.PlacementType) *rapid.Generator[*placement.PlacementPolicy] {
	if len(types) == 0 {
		types = []placement.PlacementType{placement.PickAll, placement.PickN, placement.PickN, placement.PickFixed}
	}
	return rapid.Custom(func(t *rapid.T) *placement.PlacementPolicy {
		typ := rapid.SampledFrom(types).Draw(t, "type")
		p := &placement.PlacementPolicy{PlacementType: typ}
		if typ == placement.PickAll {
			switch rapid.IntRange(0, 4).Draw(t, "pickAllSpelling") {
			case 0:
				return nil
			case 1:
				p.PlacementType = "" // defaults to PickAll
			}
		}
		switch typ {
		case placement.PickFixed:
			name := rapid.Custom(func(t *rapid.T) string {
				switch rapid.IntRange(0, 5).Draw(t, "which") {
				case 0:
					return propGoneCluster
				case 1:
					return propNameGen.Draw(t, "any")
				}
				return rapid.SampledFrom(names).Draw(t, "member")
			})
			p.ClusterNames = rapid.SliceOfNDistinct(name, 0, 6, rapid.ID[string]).Draw(t, "clusterNames")
		case placement.PickN:
			n := int32(rapid.IntRange(0, 10).Draw(t, "numberOfClusters"))
			p.NumberOfClusters = &n
			p.TopologySpreadConstraints = rapid.SliceOfN(propGenTopology(), 0, 2).Draw(t, "topologySpreadConstraints")
		}
		if typ != placement.PickFixed && rapid.IntRange(0, 2).Draw(t, "hasAffinity") > 0 {
			ca := &placement.ClusterAffinity{}
			if rapid.IntRange(0, 2).Draw(t, "hasRequired") > 0 {
				ca.RequiredDuringSchedulingIgnoredDuringExecution = &placement.ClusterSelector{
					ClusterSelectorTerms: rapid.SliceOfN(propGenRequiredTerm(), 0, 3).Draw(t, "required"),
				}
			}
			ca.PreferredDuringSchedulingIgnoredDuringExecution = rapid.SliceOfN(propGenPreferred(), 0, 3).Draw(t, "preferred")
			p.Affinity = &placement.Affinity{ClusterAffinity: ca}
		}
		if rapid.Bool().Draw(t, "hasTolerations") {
			p.Tolerations = rapid.SliceOfN(rapid.SampledFrom(propTolerations), 1, 3).Draw(t, "tolerations")
		}
		return p
	}).Filter(func(p *placement.PlacementPolicy) bool {
		return len(placement.ValidatePolicy(p, nil)) == 0
	})
}

// propGenBindings builds the placement's existing bindings, with unique names. Names come
// from placement.BindingName with a small attempt number, so they collide with the names
// the scheduler would pick; a few name another cluster than the one they target.
func propGenBindings(names []string) *rapid.Generator[[]*placement.Binding] {
	cluster := rapid.Custom(func(t *rapid.T) string {
		switch rapid.IntRange(0, 7).Draw(t, "which") {
		case 0:
			return propGoneCluster
		case 1:
			return propNameGen.Draw(t, "any")
		}
		return rapid.SampledFrom(names).Draw(t, "member")
	})
	one := rapid.Custom(func(t *rapid.T) *placement.Binding {
		target := cluster.Draw(t, "target")
		nameCluster := target
		if rapid.IntRange(0, 5).Draw(t, "foreignName") == 0 {
			nameCluster = cluster.Draw(t, "nameCluster")
		}
		b := &placement.Binding{
			Name:                         placement.BindingName(propPlacementName, nameCluster, rapid.IntRange(0, 2).Draw(t, "attempt")),
			Placement:                    propPlacementName,
			TargetCluster:                target,
			State:                        rapid.SampledFrom([]placement.BindingState{placement.Scheduled, placement.Bound, placement.Unscheduled}).Draw(t, "state"),
			SchedulingPolicySnapshotName: rapid.SampledFrom([]string{propCurrentSnap, propOldSnap}).Draw(t, "snapshot"),
			Deleting:                     rapid.IntRange(0, 6).Draw(t, "deleting") == 0,
		}
		if b.State == placement.Unscheduled {
			b.PreviousState = rapid.SampledFrom([]placement.BindingState{"", placement.Scheduled, placement.Bound}).Draw(t, "previousState")
		}
		if b.State == placement.Bound || b.PreviousState == placement.Bound {
			b.ResourceSnapshotName = propPlacementName + "-0-snapshot"
		}
		b.ClusterDecision = placement.ClusterDecision{ClusterName: target, Selected: b.State != placement.Unscheduled, Reason: scheduler.ReasonPicked}
		if rapid.Bool().Draw(t, "scored") {
			b.ClusterDecision.ClusterScore = &placement.ClusterScore{
				AffinityScore:       int32(rapid.IntRange(-100, 100).Draw(t, "affinityScore")),
				TopologySpreadScore: int32(rapid.IntRange(-2, 1).Draw(t, "topologyScore")),
			}
		}
		return b
	})
	return rapid.Custom(func(t *rapid.T) []*placement.Binding {
		var out []*placement.Binding
		seen := map[string]bool{}
		for i := range rapid.IntRange(0, 24).Draw(t, "size") {
			// A binding whose name is taken is dropped: names are unique, as in the API.
			if b := one.Draw(t, fmt.Sprint("binding", i)); !seen[b.Name] {
				seen[b.Name] = true
				out = append(out, b)
			}
		}
		return out
	})
}

// propGenCase builds a fleet of 1..40 clusters with distinct names, a valid policy of one of
// the given types (all when none given) as snapshot crp-1, and pre-existing bindings.
func propGenCase(types ...placement.PlacementType) *rapid.Generator[propCase] {
	return rapid.Custom(func(t *rapid.T) propCase {
		size := rapid.IntRange(1, 40).Draw(t, "size")
		names := rapid.SliceOfNDistinct(propNameGen, size, size, rapid.ID[string]).Draw(t, "names")
		var c propCase
		for _, n := range names {
			c.Members = append(c.Members, propDrawMember(t, n))
		}
		p := propGenPolicy(names, types...).Draw(t, "policy")
		c.Snapshot = &placement.PolicySnapshot{Name: propCurrentSnap, Placement: propPlacementName, Index: 1, Policy: p}
		if p != nil && p.NumberOfClusters != nil {
			c.Snapshot.NumberOfClusters = *p.NumberOfClusters
		}
		c.Bindings = propGenBindings(names).Draw(t, "bindings")
		return c
	})
}

// ---------------------------------------------------------------------------------------
// Oracles: written independently of the scheduler's compiled policy.

func propLive(b *placement.Binding) bool {
	return !b.Deleting && (b.State == placement.Scheduled || b.State == placement.Bound)
}

func propMemberByName(ms []*member.Member) map[string]*member.Member {
	out := make(map[string]*member.Member, len(ms))
	for _, m := range ms {
		out[m.Name] = m
	}
	return out
}

func propBindingByName(bs []*placement.Binding) map[string]*placement.Binding {
	out := make(map[string]*placement.Binding, len(bs))
	for _, b := range bs {
		out[b.Name] = b
	}
	return out
}

func propPropertyValue(m *member.Member, name string) (resource.Quantity, bool) {
	var list member.ResourceList
	switch name {
	case member.ResourcePropertyPrefix + "total-cpu":
		list = m.Resources.Capacity
	case member.ResourcePropertyPrefix + "allocatable-cpu":
		list = m.Resources.Allocatable
	case member.ResourcePropertyPrefix + "available-cpu":
		list = m.Resources.Available
	default:
		q, ok := m.Properties[name]
		return q, ok
	}
	q, ok := list["cpu"]
	return q, ok
}

func propTolerationsOf(p *placement.PlacementPolicy) []placement.Toleration {
	if p == nil {
		return nil
	}
	return p.Tolerations
}

func propMatchesTerm(term placement.ClusterSelectorTerm, m *member.Member) bool {
	if term.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			panic(err) // the generator only makes valid selectors
		}
		if !sel.Matches(klabels.Set(m.Labels)) {
			return false
		}
	}
	if term.PropertySelector != nil {
		for _, r := range term.PropertySelector.MatchExpressions {
			v, ok := propPropertyValue(m, r.Name)
			if !ok {
				return false
			}
			c := v.Cmp(resource.MustParse(r.Values[0]))
			pass := map[placement.PropertySelectorOperator]bool{
				placement.PropertyGt: c > 0, placement.PropertyGe: c >= 0, placement.PropertyEq: c == 0,
				placement.PropertyNe: c != 0, placement.PropertyLt: c < 0, placement.PropertyLe: c <= 0,
			}[r.Operator]
			if !pass {
				return false
			}
		}
	}
	return true
}

// propPassesRequired: at least one required term matches, or there are none (AFF-REQUIRED).
func propPassesRequired(p *placement.PlacementPolicy, m *member.Member) bool {
	if p == nil || p.Affinity == nil || p.Affinity.ClusterAffinity == nil || p.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	terms := p.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution.ClusterSelectorTerms
	if len(terms) == 0 {
		return true
	}
	for _, term := range terms {
		if propMatchesTerm(term, m) {
			return true
		}
	}
	return false
}

// propApplyPlan writes a plan into a binding list as a driver would: Create adds, Update
// and Unschedule replace the binding of the same name (or add it, if there is none, which
// the name checks of TestPropOneLiveBindingPerCluster then report).
func propApplyPlan(bs []*placement.Binding, p scheduler.Plan) []*placement.Binding {
	out := slices.Clone(bs)
	for _, c := range p.Create {
		nb := c.Binding
		out = append(out, &nb)
	}
	for _, c := range slices.Concat(p.Update, p.Unschedule) {
		nb := c.Binding
		if i := slices.IndexFunc(out, func(b *placement.Binding) bool { return b.Name == nb.Name }); i >= 0 {
			out[i] = &nb
		} else {
			out = append(out, &nb)
		}
	}
	return out
}

// propLiveClusters maps each cluster to its live (Scheduled or Bound, not deleting) bindings.
func propLiveClusters(bs []*placement.Binding) map[string][]string {
	out := map[string][]string{}
	for _, b := range bs {
		if propLive(b) {
			out[b.TargetCluster] = append(out[b.TargetCluster], b.Name)
		}
	}
	return out
}

func propSchedule(t *rapid.T, c propCase) scheduler.Plan {
	plan, err := scheduler.Schedule(c.input())
	if err != nil {
		t.Fatalf("Schedule(%#v) error = %v, want nil", c, err)
	}
	return plan
}

// ---------------------------------------------------------------------------------------
// Rendering for failure messages.

func propDescribeInput(in scheduler.Input) string {
	var b strings.Builder
	pol, err := json.Marshal(in.Snapshot.Policy)
	if err != nil {
		pol = []byte(err.Error())
	}
	fmt.Fprintf(&b, "\n  snapshot %s numberOfClusters=%d policy=%s\n  now=%s\n  members (%d):\n",
		in.Snapshot.Name, in.Snapshot.NumberOfClusters, pol, in.Now.Format(time.RFC3339), len(in.Members))
	for _, m := range in.Members {
		fmt.Fprintf(&b, "    %s\n", propDescribeMember(m, in.Now))
	}
	fmt.Fprintf(&b, "  bindings (%d):\n", len(in.Bindings))
	for _, bd := range in.Bindings {
		fmt.Fprintf(&b, "    %s\n", propDescribeBinding(bd))
	}
	return b.String()
}

func propDescribeMember(m *member.Member, now time.Time) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		parts = append(parts, k+"="+m.Labels[k])
	}
	var taints []string
	for _, tn := range m.Taints {
		taints = append(taints, tn.String())
	}
	var props []string
	for _, k := range slices.Sorted(maps.Keys(m.Properties)) {
		q := m.Properties[k]
		props = append(props, k+"="+q.String())
	}
	cpu := func(l member.ResourceList) string {
		if q, ok := l["cpu"]; ok {
			return q.String()
		}
		return "-"
	}
	a := m.Agent
	return fmt.Sprintf("%-3s labels{%s} taints[%s] props{%s} cpu{total=%s alloc=%s avail=%s} agent{present=%t joined=%t heartbeat=-%s healthKnown=%t healthy=%t transition=-%s} leaving=%t => %s",
		m.Name, strings.Join(parts, ","), strings.Join(taints, ","), strings.Join(props, ","),
		cpu(m.Resources.Capacity), cpu(m.Resources.Allocatable), cpu(m.Resources.Available),
		a.Present, a.Joined, now.Sub(a.LastHeartbeat), a.HealthKnown, a.Healthy, now.Sub(a.HealthTransition),
		m.Leaving, m.CheckEligibility(now, member.DefaultEligibility))
}

func propDescribeBinding(b *placement.Binding) string {
	score := "nil"
	if s := b.ClusterDecision.ClusterScore; s != nil {
		score = fmt.Sprintf("{affinity=%d topology=%d}", s.AffinityScore, s.TopologySpreadScore)
	}
	return fmt.Sprintf("%s -> %s state=%s prev=%q snap=%s deleting=%t score=%s",
		b.Name, b.TargetCluster, b.State, b.PreviousState, b.SchedulingPolicySnapshotName, b.Deleting, score)
}

func propDescribePlan(p scheduler.Plan) string {
	var b strings.Builder
	for _, part := range []struct {
		kind    string
		changes []scheduler.Change
	}{{"create", p.Create}, {"update", p.Update}, {"unschedule", p.Unschedule}} {
		for _, c := range part.changes {
			fmt.Fprintf(&b, "\n    %-10s %s (%s)", part.kind, propDescribeBinding(&c.Binding), c.Reason)
		}
	}
	fmt.Fprintf(&b, "\n    scheduled=%s/%s wanted=%d placed=%d", p.Scheduled.Status, p.Scheduled.Reason, p.Wanted, p.Placed)
	return b.String()
}

// ---------------------------------------------------------------------------------------
// Properties

// Property 1: every new pick is feasible. New picks are Plan.Create and Plan.Update (which
// only ever moves an obsolete or Unscheduled binding back to live). The member exists and is
// eligible; for PickAll/PickN it matches a required term (if any) and tolerates every taint;
// for PickFixed it is named. The written binding is live and points at the current snapshot.
func TestPropNewPicksAreFeasible(t *testing.T) {
	type facts struct {
		MemberExists        bool
		Eligible            bool
		PassesRequiredTerms bool
		ToleratesTaints     bool
		NamedByPickFixed    bool
		WasUnschedOrObsol   bool // Update only: the binding was Unscheduled or obsolete before
		LiveOnCurrentSnap   bool
		CreatedAsScheduled  bool // Create only
		State               placement.BindingState
	}
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		members := propMemberByName(c.Members)
		before := propBindingByName(c.Bindings)
		p := c.Snapshot.Policy
		named := map[string]bool{}
		if p != nil {
			for _, n := range p.ClusterNames {
				named[n] = true
			}
		}
		got, want := map[string]facts{}, map[string]facts{}
		check := func(kind string, ch scheduler.Change) {
			b := ch.Binding
			m := members[b.TargetCluster]
			f := facts{
				MemberExists:      m != nil,
				LiveOnCurrentSnap: propLive(&b) && b.SchedulingPolicySnapshotName == propCurrentSnap,
			}
			if m != nil {
				f.Eligible = m.CheckEligibility(propNow, member.DefaultEligibility).OK()
				f.PassesRequiredTerms = propPassesRequired(p, m)
				f.ToleratesTaints = placement.FirstUntolerated(m.Taints, propTolerationsOf(p)) == -1
			}
			f.NamedByPickFixed = named[b.TargetCluster]
			w := facts{MemberExists: true, Eligible: true, PassesRequiredTerms: true, ToleratesTaints: true, NamedByPickFixed: true, LiveOnCurrentSnap: true}
			if c.policyType() == placement.PickFixed {
				// Taints and affinity do not apply to PickFixed (TAINT-SCOPE, CRP-POL-FIELDS).
				w.PassesRequiredTerms, w.ToleratesTaints = f.PassesRequiredTerms, f.ToleratesTaints
			} else {
				w.NamedByPickFixed = f.NamedByPickFixed
			}
			switch kind {
			case "create":
				f.CreatedAsScheduled = b.State == placement.Scheduled && b.ResourceSnapshotName == ""
				w.CreatedAsScheduled = true
			case "update":
				// An obsolete binding keeps its state; an Unscheduled one gets its previous
				// state back, Bound or else Scheduled (SCHED-BIND).
				f.State, w.State = b.State, b.State
				if old := before[b.Name]; old != nil {
					f.WasUnschedOrObsol = !old.Deleting && (old.State == placement.Unscheduled || old.SchedulingPolicySnapshotName != propCurrentSnap)
					switch {
					case old.State != placement.Unscheduled:
						w.State = old.State
					case old.PreviousState == placement.Bound:
						w.State = placement.Bound
					default:
						w.State = placement.Scheduled
					}
				}
				w.WasUnschedOrObsol = true
			}
			key := kind + " " + b.Name + " -> " + b.TargetCluster
			got[key], want[key] = f, w
		}
		for _, ch := range plan.Create {
			check("create", ch)
		}
		for _, ch := range plan.Update {
			check("update", ch)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nnew picks are not all feasible (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 2: PickN places at most numberOfClusters, and Plan.Placed is the number of
// clusters holding a live binding once the plan is applied.
func TestPropPickNPlacesAtMostN(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickN).Draw(t, "case")
		plan := propSchedule(t, c)
		live := propLiveClusters(propApplyPlan(c.Bindings, plan))
		n := int(c.Snapshot.NumberOfClusters)
		if len(live) > n {
			t.Fatalf("Schedule(%#v) = %s\nlive clusters after the plan = %d %v, want <= numberOfClusters %d", c, propDescribePlan(plan), len(live), slices.Sorted(maps.Keys(live)), n)
		}
		if diff := cmp.Diff(len(live), plan.Placed); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nPlaced = %d, want %d live clusters after the plan %v (-want +got):\n%s", c, propDescribePlan(plan), plan.Placed, len(live), slices.Sorted(maps.Keys(live)), diff)
		}
		if plan.Wanted != n {
			t.Fatalf("Schedule(%#v) = %s\nWanted = %d, want %d", c, propDescribePlan(plan), plan.Wanted, n)
		}
	})
}

// Property 2b: for every placement type, Plan.Placed is the number of clusters holding a
// live binding once the plan is applied (its documented meaning).
func TestPropPlacedMatchesAppliedPlan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		live := propLiveClusters(propApplyPlan(c.Bindings, plan))
		if diff := cmp.Diff(len(live), plan.Placed); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nPlaced = %d, want %d live clusters after the plan %v (-want +got):\n%s", c, propDescribePlan(plan), plan.Placed, len(live), slices.Sorted(maps.Keys(live)), diff)
		}
	})
}

// Property 3: the plan does not depend on the order of members or bindings.
func TestPropPermutationInvariance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		shuffled := c
		shuffled.Members = rapid.Permutation(c.Members).Draw(t, "members")
		shuffled.Bindings = rapid.Permutation(c.Bindings).Draw(t, "bindings")
		plan2 := propSchedule(t, shuffled)
		if diff := cmp.Diff(plan, plan2, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nwant the plan of the unshuffled input %#v = %s\n(-unshuffled +shuffled):\n%s", shuffled, propDescribePlan(plan2), c, propDescribePlan(plan), diff)
		}
	})
}

// Property 3b: a Scheduler reused across decisions (scratch memory) decides as a fresh one.
func TestPropReusedSchedulerMatchesFresh(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := scheduler.New(scheduler.Options{})
		for i := range rapid.IntRange(2, 4).Draw(t, "decisions") {
			c := propGenCase().Draw(t, fmt.Sprintf("case%d", i))
			fresh := propSchedule(t, c)
			reused, err := s.Schedule(c.input())
			if err != nil {
				t.Fatalf("reused Scheduler: Schedule(%#v) error = %v, want nil", c, err)
			}
			if diff := cmp.Diff(fresh, reused); diff != "" {
				t.Fatalf("reused Scheduler (decision %d): Schedule(%#v) = %s, want %s\n(-fresh +reused):\n%s", i, c, propDescribePlan(reused), propDescribePlan(fresh), diff)
			}
		}
	})
}

// Property 3c: Schedule does not modify its input.
func TestPropScheduleDoesNotMutateInput(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		before := propCloneCase(c)
		plan := propSchedule(t, c)
		if diff := cmp.Diff(before, c, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Schedule(%#v) = %s modified its input (-before +after):\n%s", before, propDescribePlan(plan), diff)
		}
	})
}

func propCloneCase(c propCase) propCase {
	out := propCase{}
	for _, m := range c.Members {
		nm := *m
		nm.Labels = maps.Clone(m.Labels)
		nm.Taints = slices.Clone(m.Taints)
		nm.Properties = maps.Clone(m.Properties)
		nm.Resources = member.ResourceUsage{Capacity: maps.Clone(m.Resources.Capacity), Allocatable: maps.Clone(m.Resources.Allocatable), Available: maps.Clone(m.Resources.Available)}
		out.Members = append(out.Members, &nm)
	}
	for _, b := range c.Bindings {
		nb := *b
		if s := b.ClusterDecision.ClusterScore; s != nil {
			ns := *s
			nb.ClusterDecision.ClusterScore = &ns
		}
		out.Bindings = append(out.Bindings, &nb)
	}
	snap := *c.Snapshot
	if c.Snapshot.Policy != nil {
		raw, err := json.Marshal(c.Snapshot.Policy)
		if err != nil {
			panic(err)
		}
		var p placement.PlacementPolicy
		if err := json.Unmarshal(raw, &p); err != nil {
			panic(err)
		}
		snap.Policy = &p
	}
	out.Snapshot = &snap
	return out
}

// Property 4: applying the plan and deciding again changes nothing.
func TestPropIdempotent(t *testing.T) {
	type outcome struct {
		Create, Update, Unschedule []scheduler.Change
		Scheduled                  any
		Placed                     int
	}
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		again := c
		again.Bindings = propApplyPlan(c.Bindings, plan)
		plan2 := propSchedule(t, again)
		want := outcome{Scheduled: plan.Scheduled, Placed: plan.Placed}
		got := outcome{Create: plan2.Create, Update: plan2.Update, Unschedule: plan2.Unschedule, Scheduled: plan2.Scheduled, Placed: plan2.Placed}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || !plan2.Empty() {
			t.Fatalf("Schedule(%#v) = %s\nafter applying the first plan %s of %#v,\nwant an empty plan with the same Scheduled condition (-want +got):\n%s",
				again, propDescribePlan(plan2), propDescribePlan(plan), c, diff)
		}
	})
}

// Property 5: after the plan, no cluster has two live bindings, binding names are unique,
// and the plan writes each binding once: creates new names, updates and unschedules
// existing ones.
func TestPropOneLiveBindingPerCluster(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		before := propBindingByName(c.Bindings)
		var problems []string
		written := map[string]int{}
		for _, part := range []struct {
			kind    string
			changes []scheduler.Change
		}{{"create", plan.Create}, {"update", plan.Update}, {"unschedule", plan.Unschedule}} {
			for _, ch := range part.changes {
				written[ch.Binding.Name]++
				_, existed := before[ch.Binding.Name]
				if existed == (part.kind == "create") {
					problems = append(problems, fmt.Sprintf("%s %s: existed before = %t", part.kind, ch.Binding.Name, existed))
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(written)) {
			if written[name] > 1 {
				problems = append(problems, fmt.Sprintf("binding %s written %d times", name, written[name]))
			}
		}
		after := propApplyPlan(c.Bindings, plan)
		names := map[string]int{}
		for _, b := range after {
			names[b.Name]++
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			if names[name] > 1 {
				problems = append(problems, fmt.Sprintf("binding name %s used %d times after the plan", name, names[name]))
			}
		}
		live := propLiveClusters(after)
		for _, cl := range slices.Sorted(maps.Keys(live)) {
			if len(live[cl]) > 1 {
				problems = append(problems, fmt.Sprintf("cluster %s has %d live bindings after the plan: %v", cl, len(live[cl]), live[cl]))
			}
		}
		if diff := cmp.Diff([]string(nil), problems); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nbinding invariants broken (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 6: IgnoredDuringExecution (CRP-POL-IDE). A current, non-deleting Scheduled or
// Bound binding whose member is present and not leaving is never unscheduled, however the
// member's labels, taints, properties or health changed, except:
//   - PickN scale-in: when such bindings sit on more clusters than numberOfClusters, at most
//     the surplus clusters lose theirs;
//   - PickFixed, when its cluster is not in clusterNames;
//   - duplicates: a cluster holding several such bindings may lose all but one of them
//     (SamePlacementAntiAffinity; property 5 requires it).
func TestPropIgnoredDuringExecution(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase().Draw(t, "case")
		plan := propSchedule(t, c)
		members := propMemberByName(c.Members)
		protected := map[string][]string{} // cluster → protected binding names
		for _, b := range c.Bindings {
			if m := members[b.TargetCluster]; propLive(b) && b.SchedulingPolicySnapshotName == propCurrentSnap && m != nil && !m.Leaving {
				protected[b.TargetCluster] = append(protected[b.TargetCluster], b.Name)
			}
		}
		unscheduled := map[string]string{} // name → reason
		for _, ch := range plan.Unschedule {
			unscheduled[ch.Binding.Name] = ch.Reason
		}
		named := map[string]bool{}
		if p := c.Snapshot.Policy; p != nil {
			for _, n := range p.ClusterNames {
				named[n] = true
			}
		}
		var violations, lost []string
		for _, cl := range slices.Sorted(maps.Keys(protected)) {
			var gone []string
			for _, n := range protected[cl] {
				if why, ok := unscheduled[n]; ok {
					gone = append(gone, fmt.Sprintf("%s (%s)", n, why))
				}
			}
			if len(gone) < len(protected[cl]) {
				continue // at least one stays: only duplicates were dropped
			}
			entry := fmt.Sprintf("cluster %s lost every current binding: %v", cl, gone)
			switch c.policyType() {
			case placement.PickN:
				lost = append(lost, entry)
			case placement.PickFixed:
				if named[cl] {
					violations = append(violations, entry+" although it is in clusterNames")
				}
			default:
				violations = append(violations, entry)
			}
		}
		if c.policyType() == placement.PickN {
			if surplus := len(protected) - int(c.Snapshot.NumberOfClusters); len(lost) > max(surplus, 0) {
				for _, e := range lost {
					violations = append(violations, fmt.Sprintf("%s; scale-in may remove only %d of %d clusters (numberOfClusters %d)", e, max(surplus, 0), len(protected), c.Snapshot.NumberOfClusters))
				}
			}
		}
		if diff := cmp.Diff([]string(nil), violations); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nIgnoredDuringExecution broken (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 8 (TOPO-SKEW, TOPO-SCORE): a DoNotSchedule constraint is never broken by a pick.
// Upstream's rule rejects any pick after which the skew would exceed maxSkew, and a pick on
// a member without the key changes no count, so whenever the plan newly picks a member
// carrying the key, the skew once the plan is applied is at most maxSkew. Domains are the
// key's values over every member; counts are the clusters holding a live binding.
func TestPropDoNotScheduleSkewRespected(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickN).Draw(t, "case")
		plan := propSchedule(t, c)
		members := propMemberByName(c.Members)
		live := propLiveClusters(propApplyPlan(c.Bindings, plan))
		var problems []string
		for i, tc := range c.Snapshot.Policy.TopologySpreadConstraints {
			if tc.Action() != placement.DoNotSchedule {
				continue
			}
			var keyedPicks []string
			for _, ch := range slices.Concat(plan.Create, plan.Update) {
				if m := members[ch.Binding.TargetCluster]; m != nil {
					if _, ok := m.Labels[tc.TopologyKey]; ok {
						keyedPicks = append(keyedPicks, m.Name)
					}
				}
			}
			if len(keyedPicks) == 0 {
				continue
			}
			counts := map[string]int{}
			for _, m := range c.Members {
				if v, ok := m.Labels[tc.TopologyKey]; ok {
					counts[v] += min(len(live[m.Name]), 1)
				}
			}
			lo, hi := slices.Min(slices.Collect(maps.Values(counts))), slices.Max(slices.Collect(maps.Values(counts)))
			if int32(hi-lo) > tc.Skew() {
				problems = append(problems, fmt.Sprintf("constraint %d (key %q, maxSkew %d): picks %v leave domain counts %v, skew %d", i, tc.TopologyKey, tc.Skew(), keyedPicks, counts, hi-lo))
			}
		}
		if diff := cmp.Diff([]string(nil), problems); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\nDoNotSchedule topology spread broken (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 9 (SCHED-SORT): without topology constraints, PickN picks by rank: no new pick
// scores lower (affinity score) than a candidate reported "does not score high enough".
func TestPropPickNPicksByScore(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickN).Draw(t, "case")
		if len(c.Snapshot.Policy.TopologySpreadConstraints) > 0 {
			return
		}
		plan := propSchedule(t, c)
		lowestPick, lowestName := int32(math.MaxInt32), ""
		for _, ch := range slices.Concat(plan.Create, plan.Update) {
			if s := ch.Binding.ClusterDecision.ClusterScore; s == nil {
				t.Fatalf("Schedule(%#v) = %s\nPickN pick %s has no score, want one", c, propDescribePlan(plan), ch.Binding.Name)
			} else if s.AffinityScore < lowestPick {
				lowestPick, lowestName = s.AffinityScore, ch.Binding.TargetCluster
			}
		}
		var problems []string
		for _, d := range plan.Decisions {
			if d.Reason == scheduler.ReasonNotHighEnough && d.ClusterScore != nil && d.ClusterScore.AffinityScore > lowestPick {
				problems = append(problems, fmt.Sprintf("%s (affinity %d) passed over for %s (affinity %d)", d.ClusterName, d.ClusterScore.AffinityScore, lowestName, lowestPick))
			}
		}
		if diff := cmp.Diff([]string(nil), problems); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\ncandidates passed over for lower-scoring ones (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}

// Property 10 (AFF-PREFERRED, AFF-PROPERTY-SORTER): the affinity score the scheduler reports
// for a PickN candidate it scored now (a new pick, or one passed over) is the documented sum:
// a label-only term adds its weight when its selector matches; a sorter term adds
// round(weight × (v − min)/(max − min)) (Descending) or round(weight × (1 − (v − min)/(max − min)))
// (Ascending) when its selector (if any) matches, the member reports the property and
// max > min, with min and max over every member reporting it.
func TestPropAffinityScoreFormula(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := propGenCase(placement.PickN).Draw(t, "case")
		plan := propSchedule(t, c)
		var prefs []placement.PreferredClusterSelector
		if a := c.Snapshot.Policy.Affinity; a != nil && a.ClusterAffinity != nil {
			prefs = a.ClusterAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
		expected := func(m *member.Member) int32 {
			var total int32
			for _, p := range prefs {
				if ls := p.Preference.LabelSelector; ls != nil {
					sel, err := metav1.LabelSelectorAsSelector(ls)
					if err != nil {
						panic(err)
					}
					if !sel.Matches(klabels.Set(m.Labels)) {
						continue
					}
				}
				s := p.Preference.PropertySorter
				if s == nil {
					total += p.Weight
					continue
				}
				q, ok := propPropertyValue(m, s.Name)
				if !ok {
					continue
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, o := range c.Members {
					if oq, ok := propPropertyValue(o, s.Name); ok {
						lo, hi = min(lo, oq.AsApproximateFloat64()), max(hi, oq.AsApproximateFloat64())
					}
				}
				if hi <= lo {
					continue
				}
				r := (q.AsApproximateFloat64() - lo) / (hi - lo)
				if s.SortOrder == placement.Ascending {
					r = 1 - r
				}
				total += int32(math.Round(float64(p.Weight) * r))
			}
			return total
		}
		members := propMemberByName(c.Members)
		got, want := map[string]int32{}, map[string]int32{}
		record := func(cluster string, s *placement.ClusterScore) {
			m := members[cluster]
			if m == nil || s == nil {
				return
			}
			got[cluster], want[cluster] = s.AffinityScore, expected(m)
		}
		for _, ch := range slices.Concat(plan.Create, plan.Update) {
			record(ch.Binding.TargetCluster, ch.Binding.ClusterDecision.ClusterScore)
		}
		for _, d := range plan.Decisions {
			if d.Reason == scheduler.ReasonNotHighEnough {
				record(d.ClusterName, d.ClusterScore)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Schedule(%#v) = %s\naffinity scores differ from the documented formula (-want +got):\n%s", c, propDescribePlan(plan), diff)
		}
	})
}
