package scheduler_test

// The property tests' generated scheduling situations: the case, its generators and the
// rendering of a case for failure messages (see properties_test.go).

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
