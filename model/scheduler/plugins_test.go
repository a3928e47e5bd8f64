package scheduler

// Tests of the plugin table (plugins.go): its entries are well formed, and every filter
// plugin's columnar variant agrees with its filter of one member. A plugin's own tests go
// here too.

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

func TestPluginTable(t *testing.T) {
	if int(codeRejected)+len(plugins) > 256 {
		t.Fatalf("%d plugins do not fit in a filter code", len(plugins))
	}
	seen := map[string]bool{}
	for i := range plugins {
		p := &plugins[i]
		switch {
		case p.name == "":
			t.Errorf("plugins[%d] has no name", i)
		case seen[p.name]:
			t.Errorf("plugins[%d]: %s is in the table twice", i, p.name)
		case p.scope == 0:
			t.Errorf("%s runs for no placement type", p.name)
		case p.reason == nil:
			t.Errorf("%s gives no reason for the members it filters out", p.name)
		case p.narrow != nil && p.filter == nil:
			t.Errorf("%s has a columnar filter but no filter of one member", p.name)
		case p.prepare != nil && p.score == nil:
			t.Errorf("%s prepares to score but does not score", p.name)
		}
		seen[p.name] = true
		if c := codeOf(p.name); c.plugin() != p {
			t.Errorf("codeOf(%s) = %d names %v", p.name, c, c.plugin())
		}
	}
	for _, c := range []filterCode{codeCandidate, codeKept, codeNotNamed, codeUnset} {
		if c.plugin() != nil {
			t.Errorf("code %d names a plugin", c)
		}
	}
}

// TestPluginFiltersAgree checks, for every filter plugin of the table, that its columnar
// variant (or the fast paths' fallback over its filter) keeps exactly the members its
// filter of one member admits, on random fleets and policies, with and without a status
// column (started afresh, then kept), over decisions at moving times.
func TestPluginFiltersAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 80).Draw(t, "members")
		ms := make([]*member.Member, n)
		for i := range ms {
			ms[i] = pluginTestMember(t, fmt.Sprintf("m%02d", i))
		}
		pol := pluginTestPolicy(t)
		var feed *member.StatusFeed
		if rapid.Bool().Draw(t, "feed") {
			feed = member.NewStatusFeed(0)
		}
		cp, err := compile(pol)
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		s := New(Options{})
		now := pluginTestNow
		for step := range 4 {
			// The members change only in their agent status: with a feed, the status column
			// starts afresh at the first decision and is kept at the next ones.
			in := Input{
				Snapshot: &placement.PolicySnapshot{Name: "p-0", Placement: "p", Policy: pol},
				Members:  ms, Now: now, TargetKind: member.KindCluster, Status: feed, MembersVersion: 1,
			}
			d := s.start(in, cp)
			for i := range plugins {
				p := &plugins[i]
				if p.filter == nil || !p.scope.has(cp.typ) {
					continue
				}
				each := d.newSet()
				each.fill(len(d.ix.ents))
				d.narrowEach(p, each)
				columnar := d.newSet()
				columnar.fill(len(d.ix.ents))
				if p.narrow != nil {
					p.narrow(d, columnar)
				} else {
					d.narrowEach(p, columnar)
				}
				for id := range int32(len(d.ix.ents)) {
					mm := memo{id: id, rank: d.ix.rank[id], slot: -1, code: codeCandidate}
					want := p.filter(d, &mm)
					if each.has(id) != want || columnar.has(id) != want {
						t.Fatalf("step %d, %s, member %s: filter admits it: %v; over each: %v; columnar: %v",
							step, p.name, d.ix.ents[id].name, want, each.has(id), columnar.has(id))
					}
				}
			}
			// Between decisions: some agents write their status, and the time moves.
			for _, m := range ms {
				if rapid.IntRange(0, 4).Draw(t, "write") == 0 {
					m.Agent = pluginTestAgent(t, now)
					if feed != nil {
						feed.Changed(m)
					}
				}
			}
			now = now.Add(rapid.SampledFrom([]time.Duration{0, time.Second, time.Minute, 10 * time.Minute}).Draw(t, "advance"))
		}
	})
}

var pluginTestNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var (
	pluginTestValues = map[string][]string{"region": {"east", "west", "north"}, "env": {"prod", "dev"}}
	pluginTestTaints = []member.Taint{
		{Key: "dedicated", Value: "gpu", Effect: member.NoSchedule},
		{Key: "maint", Effect: member.NoSchedule},
	}
	pluginTestTolerations = []placement.Toleration{
		{Key: "dedicated", Value: "gpu"},
		{Key: "maint", Operator: placement.TolerationOpExists},
		{Operator: placement.TolerationOpExists},
	}
)

func pluginTestMember(t *rapid.T, name string) *member.Member {
	m := &member.Member{Name: name, Kind: member.KindCluster, Labels: map[string]string{}, HeartbeatPeriod: member.DefaultHeartbeatPeriod}
	for _, k := range []string{"region", "env"} {
		if v := rapid.SampledFrom(append([]string{""}, pluginTestValues[k]...)).Draw(t, k); v != "" {
			m.Labels[k] = v
		}
	}
	if rapid.IntRange(0, 2).Draw(t, "tainted") == 0 {
		m.Taints = rapid.SliceOfNDistinct(rapid.SampledFrom(pluginTestTaints), 1, 2, rapid.ID[member.Taint]).Draw(t, "taints")
	}
	if rapid.Bool().Draw(t, "hasNodeCount") {
		m.Properties = map[string]resource.Quantity{
			member.NodeCountProperty: *resource.NewQuantity(int64(rapid.IntRange(0, 4).Draw(t, "nodeCount")), resource.DecimalSI),
		}
	}
	m.Leaving = rapid.IntRange(0, 9).Draw(t, "leaving") == 0
	m.Agent = pluginTestAgent(t, pluginTestNow)
	return m
}

// pluginTestAgent is an agent status written at now: mostly eligible, otherwise stale,
// unhealthy, not joined or absent.
func pluginTestAgent(t *rapid.T, now time.Time) member.AgentStatus {
	age := func(label string) time.Duration {
		return rapid.SampledFrom([]time.Duration{0, 30 * time.Second, 4 * time.Minute, 5 * time.Minute, 5*time.Minute + time.Second, time.Hour}).Draw(t, label)
	}
	a := member.AgentStatus{
		Present: true, Joined: true, HealthKnown: true, Healthy: true,
		LastHeartbeat: now.Add(-age("heartbeatAge")), HealthTransition: now.Add(-time.Hour),
	}
	switch rapid.IntRange(0, 7).Draw(t, "health") {
	case 4:
		a.Healthy, a.HealthTransition = false, now.Add(-age("unhealthyFor"))
	case 5:
		a.Joined = false
	case 6:
		a = member.AgentStatus{}
	case 7:
		a.HealthKnown, a.Healthy = false, false
	}
	return a
}

func pluginTestPolicy(t *rapid.T) *placement.PlacementPolicy {
	p := &placement.PlacementPolicy{PlacementType: rapid.SampledFrom([]placement.PlacementType{placement.PickAll, placement.PickN}).Draw(t, "type")}
	if p.PlacementType == placement.PickN {
		n := int32(rapid.IntRange(0, 5).Draw(t, "numberOfClusters"))
		p.NumberOfClusters = &n
	}
	p.Tolerations = rapid.SliceOfNDistinct(rapid.SampledFrom(pluginTestTolerations), 0, 2, func(x placement.Toleration) placement.Toleration { return x }).Draw(t, "tolerations")
	var terms []placement.ClusterSelectorTerm
	for range rapid.IntRange(0, 2).Draw(t, "terms") {
		var term placement.ClusterSelectorTerm
		if rapid.Bool().Draw(t, "labels") {
			k := rapid.SampledFrom([]string{"region", "env"}).Draw(t, "key")
			term.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{k: rapid.SampledFrom(pluginTestValues[k]).Draw(t, "value")}}
		}
		if rapid.Bool().Draw(t, "properties") {
			term.PropertySelector = &placement.PropertySelector{MatchExpressions: []placement.PropertySelectorRequirement{{
				Name:     member.NodeCountProperty,
				Operator: rapid.SampledFrom([]placement.PropertySelectorOperator{placement.PropertyGe, placement.PropertyLt}).Draw(t, "op"),
				Values:   []string{rapid.SampledFrom([]string{"1", "2", "3"}).Draw(t, "value")},
			}}}
		}
		terms = append(terms, term)
	}
	if len(terms) > 0 {
		p.Affinity = &placement.Affinity{ClusterAffinity: &placement.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placement.ClusterSelector{ClusterSelectorTerms: terms},
		}}
	}
	return p
}
