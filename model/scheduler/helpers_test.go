package scheduler_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clusterOpt tweaks a test member.
type clusterOpt func(*member.Member)

// cluster builds a joined, healthy cluster with labels given as "key=value".
func cluster(name string, opts ...clusterOpt) *member.Member {
	m := &member.Member{
		Name: name, Kind: member.KindCluster, Labels: map[string]string{},
		Agent: member.AgentStatus{
			Present: true, Joined: true, LastHeartbeat: now.Add(-30 * time.Second),
			HealthKnown: true, Healthy: true, HealthTransition: now.Add(-time.Hour),
		},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

func labels(kv ...string) clusterOpt {
	return func(m *member.Member) {
		for _, s := range kv {
			k, v, _ := strings.Cut(s, "=")
			m.Labels[k] = v
		}
	}
}

func taint(key, value string) clusterOpt {
	return func(m *member.Member) {
		m.Taints = append(m.Taints, member.Taint{Key: key, Value: value, Effect: member.NoSchedule})
	}
}

func property(name, value string) clusterOpt {
	return func(m *member.Member) {
		if m.Properties == nil {
			m.Properties = map[string]resource.Quantity{}
		}
		m.Properties[name] = resource.MustParse(value)
	}
}

func resources(capacity, allocatable, available string) clusterOpt {
	return func(m *member.Member) {
		set := func(v string) member.ResourceList {
			if v == "" {
				return nil
			}
			return member.ResourceList{"cpu": resource.MustParse(v)}
		}
		m.Resources = member.ResourceUsage{Capacity: set(capacity), Allocatable: set(allocatable), Available: set(available)}
	}
}

func agent(f func(*member.AgentStatus)) clusterOpt {
	return func(m *member.Member) { f(&m.Agent) }
}

func leaving(m *member.Member) { m.Leaving = true }

// policy decodes a scheduling policy written as in the KubeFleet docs.
func policy(t *testing.T, doc string) *placement.PlacementPolicy {
	t.Helper()
	var p placement.PlacementPolicy
	if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
		t.Fatalf("policy %q: %v", doc, err)
	}
	if errs := placement.ValidatePolicy(&p, nil); len(errs) > 0 {
		t.Fatalf("policy %q is invalid: %v", doc, errs.ToAggregate())
	}
	return &p
}

// snapshot wraps a policy as snapshot crp-<index>.
func snapshot(p *placement.PlacementPolicy, index int) *placement.PolicySnapshot {
	s := &placement.PolicySnapshot{Name: placement.PolicySnapshotName("crp", index), Placement: "crp", Index: index, Policy: p}
	if p != nil && p.NumberOfClusters != nil {
		s.NumberOfClusters = *p.NumberOfClusters
	}
	return s
}

// binding builds an existing binding of crp.
func binding(cluster string, state placement.BindingState, snap string) *placement.Binding {
	return &placement.Binding{
		Name: "crp-" + cluster + "-b", Placement: "crp", TargetCluster: cluster, State: state,
		SchedulingPolicySnapshotName: snap,
		ClusterDecision:              placement.ClusterDecision{ClusterName: cluster, Selected: true, Reason: scheduler.ReasonPicked},
	}
}

// outcome is the part of a plan most cases assert on.
type outcome struct {
	Create, Update, Unschedule []string
	Scheduled                  metav1.ConditionStatus
	Reason                     string
}

func outcomeOf(p scheduler.Plan) outcome {
	names := func(cs []scheduler.Change) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Binding.TargetCluster)
		}
		return out
	}
	return outcome{
		Create: names(p.Create), Update: names(p.Update), Unschedule: names(p.Unschedule),
		Scheduled: p.Scheduled.Status, Reason: p.Scheduled.Reason,
	}
}

func decisionFor(p scheduler.Plan, cluster string) (placement.ClusterDecision, bool) {
	i := slices.IndexFunc(p.Decisions, func(d placement.ClusterDecision) bool { return d.ClusterName == cluster })
	if i < 0 {
		return placement.ClusterDecision{}, false
	}
	return p.Decisions[i], true
}

func score(aff, topo int32) *placement.ClusterScore {
	return &placement.ClusterScore{AffinityScore: aff, TopologySpreadScore: topo}
}

// apply writes a plan's changes into a binding list, as a driver would.
func apply(bs []*placement.Binding, p scheduler.Plan) []*placement.Binding {
	out := slices.Clone(bs)
	replace := func(c scheduler.Change) {
		nb := c.Binding
		for i, b := range out {
			if b.Name == nb.Name {
				out[i] = &nb
				return
			}
		}
		out = append(out, &nb)
	}
	for _, cs := range [][]scheduler.Change{p.Create, p.Update, p.Unschedule} {
		for _, c := range cs {
			replace(c)
		}
	}
	return out
}
