package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// indexView renders a fleet index by value (no ids), so an index maintained incrementally
// can be compared with one rebuilt from scratch.
type indexView struct {
	Kind     member.Kind
	Names    []string
	Rank     []int32
	ByRank   []int32
	Sorted   bool
	Tainted  []bool
	Taints   [][]member.Taint
	Labels   map[string][]string         // key → value per member ("∅" when absent)
	Domains  map[string]map[string]int32 // key → live value → members holding it
	Props    map[string][]string         // property → value per member ("∅" when absent)
	Spans    map[string][2]float64
	Identity []bool // every entry's recorded identity matches its member
}

func viewOf(ix *fleetIndex) indexView {
	v := indexView{
		Kind: ix.kind, Rank: slices.Clone(ix.rank), Sorted: ix.sortedByName,
		Labels: map[string][]string{}, Domains: map[string]map[string]int32{}, Props: map[string][]string{}, Spans: map[string][2]float64{},
	}
	if !ix.sortedByName {
		v.ByRank = slices.Clone(ix.byRank)
	}
	for i := range ix.ents {
		e := &ix.ents[i]
		v.Names = append(v.Names, e.name)
		v.Tainted = append(v.Tainted, ix.tainted.has(int32(i)))
		v.Taints = append(v.Taints, slices.Clone(e.taints))
		v.Identity = append(v.Identity, e.current(e.m))
	}
	for k, c := range ix.keys {
		vals := make([]string, len(ix.ents))
		for i, id := range c.ids {
			vals[i] = "∅"
			if id >= 0 {
				vals[i] = c.values[id]
			}
		}
		v.Labels[k] = vals
		live := map[string]int32{}
		for id, n := range c.count {
			if n > 0 {
				live[c.values[id]] = n
			}
		}
		v.Domains[k] = live
	}
	for ref, p := range ix.props {
		vals := make([]string, len(ix.ents))
		for i := range ix.ents {
			vals[i] = "∅"
			if p.has.has(int32(i)) {
				vals[i] = fmt.Sprintf("%s/%g", p.q[i].String(), p.f[i])
			}
		}
		name := fmt.Sprintf("%+v", ref)
		v.Props[name] = vals
		lo, hi := p.span()
		v.Spans[name] = [2]float64{lo, hi}
	}
	return v
}

var (
	fleetTestKeys   = []string{"region", "zone", "env"}
	fleetTestValues = []string{"a", "b", "c", "d"}
	fleetTestProps  = []member.PropertyRef{
		member.ParsePropertyName(member.NodeCountProperty),
		member.ParsePropertyName(member.ResourcePropertyPrefix + "available-cpu"),
	}
	fleetTestTaints = []member.Taint{{Key: "maint", Effect: member.NoSchedule}, {Key: "gpu", Value: "x", Effect: member.NoSchedule}}
)

func drawLabels(t *rapid.T) map[string]string {
	ls := map[string]string{}
	for _, k := range fleetTestKeys {
		if v := rapid.SampledFrom(append([]string{""}, fleetTestValues...)).Draw(t, k); v != "" {
			ls[k] = v
		}
	}
	return ls
}

func drawFleetMember(t *rapid.T, name string) *member.Member {
	m := &member.Member{Name: name, Kind: member.KindCluster, Labels: drawLabels(t)}
	if rapid.IntRange(0, 5).Draw(t, "machine") == 0 {
		m.Kind = member.KindMachine
	}
	if rapid.Bool().Draw(t, "nodes") {
		m.Properties = map[string]resource.Quantity{member.NodeCountProperty: *resource.NewQuantity(int64(rapid.IntRange(0, 9).Draw(t, "n")), resource.DecimalSI)}
	}
	if rapid.Bool().Draw(t, "cpu") {
		m.Resources.Available = member.ResourceList{"cpu": *resource.NewMilliQuantity(int64(rapid.IntRange(0, 5000).Draw(t, "m")), resource.DecimalSI)}
	}
	if rapid.IntRange(0, 3).Draw(t, "tainted") == 0 {
		m.Taints = []member.Taint{rapid.SampledFrom(fleetTestTaints).Draw(t, "taint")}
	}
	return m
}

// TestPropIndexIncrementalMatchesRebuild: after random member changes of every kind the
// stores make (labels and properties replaced, taints edited in place, members added,
// removed, reordered, turned into another kind), the index a Scheduler keeps up to date
// equals one rebuilt from scratch.
func TestPropIndexIncrementalMatchesRebuild(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		names := rapid.SliceOfNDistinct(rapid.StringOfN(rapid.RuneFrom([]rune("abcde")), 1, 3, -1), 1, 30, rapid.ID[string]).Draw(t, "names")
		var ms []*member.Member
		for _, n := range names {
			ms = append(ms, drawFleetMember(t, n))
		}
		if rapid.Bool().Draw(t, "sorted") {
			slices.SortFunc(ms, func(a, b *member.Member) int { return strings.Compare(a.Name, b.Name) })
		}
		kind := member.KindCluster
		var ix fleetIndex
		ix.sync(ms, kind)
		next := 0
		for step := range rapid.IntRange(1, 12).Draw(t, "steps") {
			label := fmt.Sprint("step", step)
			if len(ms) > 0 {
				m := ms[rapid.IntRange(0, len(ms)-1).Draw(t, label+"member")]
				switch rapid.IntRange(0, 9).Draw(t, label+"change") {
				case 0: // a label change replaces the map, as the simulator does
					ls := maps.Clone(m.Labels)
					k := rapid.SampledFrom(fleetTestKeys).Draw(t, label+"key")
					if v := rapid.SampledFrom(append([]string{""}, fleetTestValues...)).Draw(t, label+"value"); v == "" {
						delete(ls, k)
					} else {
						ls[k] = v
					}
					m.Labels = ls
				case 1:
					m.Properties = map[string]resource.Quantity{member.NodeCountProperty: *resource.NewQuantity(int64(rapid.IntRange(0, 20).Draw(t, label+"n")), resource.DecimalSI)}
				case 2:
					m.Resources = member.ResourceUsage{}
				case 3: // taints are edited in place
					m.Taints = slices.DeleteFunc(m.Taints, func(member.Taint) bool { return true })
					m.Taints = append(m.Taints, rapid.SampledFrom(fleetTestTaints).Draw(t, label+"taint"))
				case 4:
					if len(m.Taints) > 0 {
						m.Taints[0] = rapid.SampledFrom(fleetTestTaints).Draw(t, label+"retaint")
					}
				case 5:
					i := slices.Index(ms, m)
					ms = slices.Delete(ms, i, i+1)
				case 6:
					ms = append(ms, drawFleetMember(t, fmt.Sprint("new", next)))
					next++
				case 7:
					i, j := rapid.IntRange(0, len(ms)-1).Draw(t, label+"i"), rapid.IntRange(0, len(ms)-1).Draw(t, label+"j")
					ms[i], ms[j] = ms[j], ms[i]
				case 8:
					if m.Kind == member.KindMachine {
						m.Kind = member.KindCluster
					} else {
						m.Kind = member.KindMachine
					}
				case 9:
					m.Agent.Healthy = !m.Agent.Healthy // status: read at decision time, not indexed
				}
			}
			ix.sync(ms, kind)
			// Columns come into being as decisions need them.
			if rapid.Bool().Draw(t, label+"useKey") {
				ix.column(rapid.SampledFrom(fleetTestKeys).Draw(t, label+"col"))
			}
			if rapid.Bool().Draw(t, label+"useProp") {
				ix.property(rapid.SampledFrom(fleetTestProps).Draw(t, label+"prop"))
			}
			var fresh fleetIndex
			fresh.sync(ms, kind)
			for k := range ix.keys {
				fresh.column(k)
			}
			for ref := range ix.props {
				fresh.property(ref)
			}
			if diff := cmp.Diff(viewOf(&fresh), viewOf(&ix), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("step %d: incremental index differs from a rebuilt one (-rebuilt +incremental):\n%s", step, diff)
			}
		}
	})
}

// TestLabelColumnForgetsDeadValues: a label that takes ever new values (a timestamp, say)
// does not grow its column without bound: once most of its values are held by no member the
// column is dropped and rebuilt when next needed, equal to a rebuilt index.
func TestLabelColumnForgetsDeadValues(t *testing.T) {
	ms := []*member.Member{{Name: "a", Kind: member.KindCluster, Labels: map[string]string{"stamp": "0"}}, {Name: "b", Kind: member.KindCluster, Labels: map[string]string{"stamp": "x"}}}
	var ix fleetIndex
	ix.sync(ms, member.KindCluster)
	ix.column("stamp")
	most := 0
	for i := 1; i <= 1000; i++ {
		ms[0].Labels = map[string]string{"stamp": fmt.Sprint(i)}
		ix.sync(ms, member.KindCluster)
		c := ix.column("stamp")
		most = max(most, len(c.values))
	}
	if most > 200 {
		t.Errorf("the stamp column held up to %d values for 2 members, want it rebuilt long before", most)
	}
	var fresh fleetIndex
	fresh.sync(ms, member.KindCluster)
	fresh.column("stamp")
	if diff := cmp.Diff(viewOf(&fresh), viewOf(&ix), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("index after 1,000 label changes differs from a rebuilt one (-rebuilt +incremental):\n%s", diff)
	}
}

// derivedView renders the state a Scheduler derives for PickN decisions by value: the
// status column's valid entries and cached eligibility bits, and the policy cache.
type derivedView struct {
	Digests  map[string]statusDigest
	Eligible map[string]bool // known members: eligible at the column's cut-offs
	Static   []string        // the cache's order, by name
	Keys     []uint64
	Affinity map[string]int32
	Domains  []string // per position, the member's topology domains by value (ids differ between indexes)
}

func derivedOf(t *rapid.T, s *Scheduler, p *compiledPolicy, fresh bool) derivedView {
	v := derivedView{Digests: map[string]statusDigest{}, Eligible: map[string]bool{}, Affinity: map[string]int32{}}
	st := &s.status
	for i := range s.ix.ents {
		id := int32(i)
		name := s.ix.ents[i].name
		if fresh || st.valid.has(id) {
			m := s.ix.ents[i].m
			if fresh {
				v.Digests[name] = digestOf(m.Leaving, &m.Agent)
			} else {
				v.Digests[name] = st.digest[id]
			}
		}
		if st.known.has(id) {
			if fresh {
				w := emptyWindow()
				g := digestOf(s.ix.ents[i].m.Leaving, &s.ix.ents[i].m.Agent)
				v.Eligible[name] = g.exact && w.decide(&g, &st.cut)
			} else {
				v.Eligible[name] = st.elig.has(id)
			}
		}
	}
	c := s.pcache[p.fingerprint()]
	if c == nil || c.ver != s.ix.ver {
		t.Fatalf("no current policy cache after a PickN decision")
	}
	for pos, id := range c.order {
		name := s.ix.ents[id].name
		v.Static = append(v.Static, name)
		v.Affinity[name] = c.affinity[id]
		if c.names[pos] != name {
			t.Fatalf("cache position %d names %q, its member is %q", pos, c.names[pos], name)
		}
		var doms []string
		for _, tc := range p.topology {
			col := s.ix.column(tc.key)
			if vid := col.ids[id]; vid >= 0 {
				doms = append(doms, col.values[vid])
			} else {
				doms = append(doms, "∅")
			}
		}
		v.Domains = append(v.Domains, strings.Join(doms, "/"))
	}
	v.Keys = slices.Clone(c.keys)
	return v
}

// TestPropDerivedStateMatchesRebuild: the state a Scheduler keeps between PickN decisions
// with store versions and a status feed (the status column, its eligibility bits and the
// policy cache) equals the same state derived from scratch, after random changes of every
// kind the stores make and the time moving.
func TestPropDerivedStateMatchesRebuild(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		names := rapid.SliceOfNDistinct(rapid.StringOfN(rapid.RuneFrom([]rune("abcde")), 1, 3, -1), 1, 20, rapid.ID[string]).Draw(t, "names")
		var ms []*member.Member
		for _, n := range names {
			m := drawFleetMember(t, n)
			m.Agent = member.AgentStatus{Present: true, Joined: true, HealthKnown: true, Healthy: rapid.Bool().Draw(t, "healthy"),
				LastHeartbeat: now0.Add(-time.Duration(rapid.IntRange(0, 400).Draw(t, "age")) * time.Second), HealthTransition: now0.Add(-time.Duration(rapid.IntRange(0, 400).Draw(t, "sick")) * time.Second)}
			ms = append(ms, m)
		}
		slices.SortFunc(ms, func(a, b *member.Member) int { return strings.Compare(a.Name, b.Name) })
		n := int32(rapid.IntRange(0, 5).Draw(t, "n"))
		skew := int32(1)
		pol := &placement.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n,
			Affinity: &placement.Affinity{ClusterAffinity: &placement.ClusterAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &placement.ClusterSelector{ClusterSelectorTerms: []placement.ClusterSelectorTerm{{
					LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"d"}}}},
				}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []placement.PreferredClusterSelector{
					{Weight: 40, Preference: placement.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "a"}}}},
					{Weight: 30, Preference: placement.ClusterSelectorTerm{PropertySorter: &placement.PropertySorter{Name: member.NodeCountProperty, SortOrder: placement.Descending}}},
				},
			}},
			Tolerations:               []placement.Toleration{{Key: "gpu", Operator: placement.TolerationOpExists}},
			TopologySpreadConstraints: []placement.TopologySpreadConstraint{{MaxSkew: &skew, TopologyKey: "zone", WhenUnsatisfiable: placement.DoNotSchedule}},
		}
		if rapid.Bool().Draw(t, "noSpread") {
			pol.TopologySpreadConstraints = nil
		}
		cp, err := compile(pol)
		if err != nil {
			t.Fatal(err)
		}
		snap := &placement.PolicySnapshot{Name: "crp-0", Placement: "crp", Policy: pol, NumberOfClusters: n}
		s := New(Options{})
		feed := member.NewStatusFeed(rapid.IntRange(0, 4).Draw(t, "feedSize"))
		at := now0
		var version uint64 = 1
		next := 0
		for step := range rapid.IntRange(1, 10).Draw(t, "steps") {
			label := fmt.Sprint("step", step)
			in := Input{Snapshot: snap, Members: ms, Now: at, MembersVersion: version, Status: feed}
			for range 2 { // the second decision at an index derives the policy cache
				if _, err := s.Schedule(in); err != nil {
					t.Fatal(err)
				}
			}
			got := derivedOf(t, s, cp, false)
			rebuilt := New(Options{})
			for range 2 {
				if _, err := rebuilt.Schedule(in); err != nil {
					t.Fatal(err)
				}
			}
			want := derivedOf(t, rebuilt, cp, true)
			// The rebuilt column holds every member; the kept one those it read: compare those.
			for name := range want.Digests {
				if _, ok := got.Digests[name]; !ok {
					delete(want.Digests, name)
				}
			}
			fromScratch := derivedOf(t, s, cp, true)
			if diff := cmp.Diff(fromScratch.Eligible, got.Eligible); diff != "" {
				t.Fatalf("step %d: kept eligibility bits differ from bits decided afresh at the same cut-offs (-fresh +kept):\n%s", step, diff)
			}
			got.Eligible, want.Eligible = nil, nil
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(statusDigest{})); diff != "" {
				t.Fatalf("step %d: kept derived state differs from a rebuilt one (-rebuilt +kept):\n%s", step, diff)
			}
			checkGroups(t, s, cp)
			for range rapid.IntRange(0, 3).Draw(t, label+"changes") {
				i := rapid.IntRange(0, len(ms)-1).Draw(t, label+"member")
				m := ms[i]
				switch rapid.IntRange(0, 7).Draw(t, label+"change") {
				case 0, 1, 2: // a status write, told to the feed
					m.Agent.LastHeartbeat = at.Add(-time.Duration(rapid.IntRange(0, 400).Draw(t, label+"age")) * time.Second)
					if rapid.Bool().Draw(t, label+"flip") {
						m.Agent.Healthy = !m.Agent.Healthy
						m.Agent.HealthTransition = at
					}
					feed.Changed(m)
				case 3:
					ls := maps.Clone(m.Labels)
					ls[rapid.SampledFrom(fleetTestKeys).Draw(t, label+"key")] = rapid.SampledFrom(fleetTestValues).Draw(t, label+"value")
					m.Labels = ls
					version++
				case 4:
					m.Properties = map[string]resource.Quantity{member.NodeCountProperty: *resource.NewQuantity(int64(rapid.IntRange(0, 20).Draw(t, label+"n")), resource.DecimalSI)}
					version++
				case 5:
					m.Taints = append(m.Taints[:0], rapid.SampledFrom(fleetTestTaints).Draw(t, label+"taint"))
					version++
				case 6:
					m.Leaving = !m.Leaving
					version++
				case 7:
					nm := drawFleetMember(t, fmt.Sprint("zz", next))
					nm.Kind = member.KindCluster
					next++
					ms = append(ms, nm)
					version++
				}
			}
			at = at.Add(time.Duration(rapid.SampledFrom([]int{0, 1, 30, 60, 300}).Draw(t, label+"elapse")) * time.Second)
		}
	})
}

var now0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// checkGroups: each position's group in the policy cache holds the member's domains (ids in
// the index's columns), and each group lists exactly its positions, in order.
func checkGroups(t *rapid.T, s *Scheduler, cp *compiledPolicy) {
	c := s.pcache[cp.fingerprint()]
	if c.sgroup == nil {
		return
	}
	members := make([][]int32, len(c.groups))
	for pos, id := range c.order {
		for i, tc := range cp.topology {
			if got, want := c.groups[c.sgroup[pos]][i], s.ix.column(tc.key).ids[id]; got != want {
				t.Fatalf("cache position %d: group domain %d, member's %d", pos, got, want)
			}
		}
		members[c.sgroup[pos]] = append(members[c.sgroup[pos]], int32(pos))
	}
	if diff := cmp.Diff(members, c.members); diff != "" {
		t.Fatalf("cache groups' members differ from their positions' groups (-positions +members):\n%s", diff)
	}
}
