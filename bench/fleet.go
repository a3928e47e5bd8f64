package bench

import (
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Epoch is the fixed "now" of generated fleets.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	regions = []string{"east", "west", "north", "south", "central"}
	envs    = []string{"prod", "staging", "dev"}
	zones   = []string{"zone-1", "zone-2", "zone-3"}
)

// Fleet generates n joined, healthy clusters named member-00001..., with region, env and
// zone labels, a node-count property and cpu usage, all drawn from a source seeded by seed.
func Fleet(n int, seed uint64) []*member.Member {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ms := make([]*member.Member, n)
	for i := range ms {
		nodes := 1 + rng.IntN(50)
		cpu := int64(nodes) * 16
		ms[i] = &member.Member{
			Name: fmt.Sprintf("member-%05d", i+1),
			Kind: member.KindCluster,
			Labels: map[string]string{
				"region": regions[rng.IntN(len(regions))],
				"env":    envs[rng.IntN(len(envs))],
				"zone":   zones[rng.IntN(len(zones))],
			},
			Properties: map[string]resource.Quantity{member.NodeCountProperty: *resource.NewQuantity(int64(nodes), resource.DecimalSI)},
			Resources: member.ResourceUsage{
				Capacity:    member.ResourceList{"cpu": *resource.NewQuantity(cpu, resource.DecimalSI)},
				Allocatable: member.ResourceList{"cpu": *resource.NewQuantity(cpu-2, resource.DecimalSI)},
				Available:   member.ResourceList{"cpu": *resource.NewQuantity(rng.Int64N(cpu-2), resource.DecimalSI)},
			},
			HeartbeatPeriod: member.DefaultHeartbeatPeriod,
			Agent: member.AgentStatus{
				Present: true, Joined: true, LastHeartbeat: Epoch.Add(-time.Duration(rng.IntN(60)) * time.Second),
				HealthKnown: true, Healthy: true, HealthTransition: Epoch.Add(-time.Hour),
			},
		}
	}
	return ms
}

// PickNPolicy is the benchmark's PickN policy: one required label term, two preferred terms
// (a label and a property sorter) and one topology spread constraint.
func PickNPolicy(n int32) *placement.PlacementPolicy {
	skew := int32(1)
	return &placement.PlacementPolicy{
		PlacementType:    placement.PickN,
		NumberOfClusters: &n,
		Affinity: &placement.Affinity{ClusterAffinity: &placement.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placement.ClusterSelector{ClusterSelectorTerms: []placement.ClusterSelectorTerm{{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "staging"},
				}}},
			}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []placement.PreferredClusterSelector{
				{Weight: 40, Preference: placement.ClusterSelectorTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "east"}}}},
				{Weight: 30, Preference: placement.ClusterSelectorTerm{PropertySorter: &placement.PropertySorter{Name: member.NodeCountProperty, SortOrder: placement.Descending}}},
			},
		}},
		TopologySpreadConstraints: []placement.TopologySpreadConstraint{{MaxSkew: &skew, TopologyKey: "zone", WhenUnsatisfiable: placement.DoNotSchedule}},
	}
}

// PickAllPolicy is the benchmark's PickAll policy: the same required term.
func PickAllPolicy() *placement.PlacementPolicy {
	p := PickNPolicy(0)
	return &placement.PlacementPolicy{
		PlacementType: placement.PickAll,
		Affinity: &placement.Affinity{ClusterAffinity: &placement.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: p.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		}},
	}
}
