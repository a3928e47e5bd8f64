package scheduler_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
)

const (
	fulfilled   = condition.ReasonSchedulingPolicyFulfilled
	unfulfilled = condition.ReasonSchedulingPolicyUnfulfilled
	yes         = metav1.ConditionTrue
	no          = metav1.ConditionFalse
)

// wantDecision is what a case expects about one cluster's decision.
type wantDecision struct {
	Selected bool
	Score    *placement.ClusterScore
	Reason   string
	Plugin   string
}

// TestWorkedExamples reproduces the worked examples of the documentation's how-to guides on
// affinity, topology spread, property-based scheduling and placement types; each case's doc
// names the sections of the KubeFleet documentation it comes from.
func TestWorkedExamples(t *testing.T) {
	fourAnimals := []*member.Member{
		cluster("bravelion", labels("region=east", "system=critical")),
		cluster("smartfish", labels("region=east")),
		cluster("jumpingcat", labels("region=west", "system=critical")),
		cluster("flyingpenguin", labels("region=west")),
	}
	cases := []struct {
		name    string
		doc     string
		members []*member.Member
		policy  string
		// stored: a policy that validation now refuses but a hub may hold from before; it
		// is scheduled without being validated.
		stored    bool
		want      outcome
		decisions map[string]wantDecision
	}{
		{
			name: "matchLabels picks clusters with every label",
			doc:  "Using Affinity to Pick Clusters",
			members: []*member.Member{
				cluster("a", labels("system=critical")), cluster("b", labels("system=standard")), cluster("c"),
			},
			policy: `
placementType: PickAll
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels:
            system: critical`,
			want: outcome{Create: []string{"a"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"a": {Selected: true, Reason: scheduler.ReasonPicked},
				"b": {Reason: "ClusterUnschedulable, cluster does not match with any of the required cluster affinity terms", Plugin: scheduler.PluginClusterAffinity},
			},
		},
		{
			name: "matchExpressions In accepts any listed value",
			doc:  "Using Affinity to Pick Clusters",
			members: []*member.Member{
				cluster("a", labels("system=critical")), cluster("b", labels("system=standard")), cluster("c", labels("system=test")), cluster("d"),
			},
			policy: `
placementType: PickAll
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchExpressions:
          - key: system
            operator: In
            values: [critical, standard]`,
			want: outcome{Create: []string{"a", "b"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name: "matchLabels and matchExpressions in one term are ANDed",
			doc:  "Using Affinity to Pick Clusters",
			members: []*member.Member{
				cluster("a", labels("region=east", "system=x")), cluster("b", labels("region=east")), cluster("c", labels("region=west", "system=x")),
			},
			policy: `
placementType: PickAll
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels:
            region: east
          matchExpressions:
          - key: system
            operator: Exists`,
			want: outcome{Create: []string{"a"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name: "several required terms are ORed",
			doc:  "Using Affinity to Pick Clusters",
			members: []*member.Member{
				cluster("a", labels("region=west", "system=x")), cluster("b", labels("region=east")), cluster("c", labels("region=east", "system=x")),
			},
			policy: `
placementType: PickAll
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels:
            region: west
      - labelSelector:
          matchExpressions:
          - key: system
            operator: DoesNotExist`,
			want: outcome{Create: []string{"a", "b"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name: "a preferred term adds its weight",
			doc:  "Using Affinity to Pick Clusters › Using multiple affinity terms",
			members: []*member.Member{
				cluster("a", labels("region=west")), cluster("b", labels("region=east")),
			},
			policy: `
placementType: PickN
numberOfClusters: 1
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 20
      preference:
        labelSelector:
          matchLabels:
            region: west`,
			want: outcome{Create: []string{"a"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"a": {Selected: true, Score: score(20, 0), Reason: scheduler.ReasonPicked},
				"b": {Score: score(0, 0), Reason: scheduler.ReasonNotHighEnough},
			},
		},
		{
			name: "preferred weights are summed: 20 + (-20) = 0 (AFF-SUM-1)",
			doc:  "Using Affinity to Pick Clusters › Each term features",
			members: []*member.Member{
				cluster("west-prod", labels("region=west", "environment=prod")), cluster("west-only", labels("region=west")),
			},
			policy: `
placementType: PickN
numberOfClusters: 2
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 20
      preference:
        labelSelector:
          matchLabels:
            region: west
    - weight: -20
      preference:
        labelSelector:
          matchLabels:
            environment: prod`,
			want: outcome{Create: []string{"west-only", "west-prod"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"west-prod": {Selected: true, Score: score(0, 0), Reason: scheduler.ReasonPicked},
				"west-only": {Selected: true, Score: score(20, 0), Reason: scheduler.ReasonPicked},
			},
		},
		{
			name: "required terms filter first, preferred terms rank the rest",
			doc:  "Using Affinity to Pick Clusters › Use both types of affinity terms",
			members: []*member.Member{
				cluster("a", labels("system=x", "region=west")), cluster("b", labels("system=x")), cluster("z", labels("region=west")),
			},
			policy: `
placementType: PickN
numberOfClusters: 1
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchExpressions:
          - key: system
            operator: Exists
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 20
      preference:
        labelSelector:
          matchLabels:
            region: west`,
			want: outcome{Create: []string{"a"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"a": {Selected: true, Score: score(20, 0), Reason: scheduler.ReasonPicked},
				"b": {Score: score(0, 0), Reason: scheduler.ReasonNotHighEnough},
				"z": {Reason: "ClusterUnschedulable, cluster does not match with any of the required cluster affinity terms", Plugin: scheduler.PluginClusterAffinity},
			},
		},
		{
			name:    "with all scores equal the greatest name wins (TIE-1, DC-2)",
			doc:     "Using the ClusterResourcePlacement API › PickN placement type; Using Topology Spread Constraints to Spread Resources › Specifying a topology spread constraint",
			members: fourAnimals,
			policy:  "placementType: PickN\nnumberOfClusters: 1",
			want:    outcome{Create: []string{"smartfish"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name:    "topology spread picks one per region (TOPO-1)",
			doc:     "Using Topology Spread Constraints to Spread Resources › Specifying a topology spread constraint",
			members: fourAnimals,
			policy: `
placementType: PickN
numberOfClusters: 2
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: region
    whenUnsatisfiable: DoNotSchedule`,
			want: outcome{Create: []string{"jumpingcat", "smartfish"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				// Round 1: every cluster would raise the skew, so all score -1 and the name decides.
				"smartfish": {Selected: true, Score: score(0, -1), Reason: scheduler.ReasonPicked},
				// Round 2: the west clusters would reduce the skew (+1); east would break maxSkew.
				"jumpingcat":    {Selected: true, Score: score(0, 1), Reason: scheduler.ReasonPicked},
				"flyingpenguin": {Score: score(0, 1), Reason: scheduler.ReasonNotHighEnough},
				"bravelion":     {Reason: `ClusterUnschedulable, violated topology spread constraint "region" (max skew 1)`, Plugin: scheduler.PluginTopologySpread},
			},
		},
		{
			name: "clusters are grouped by the topology key's value only",
			doc:  "Using Topology Spread Constraints to Spread Resources › Specifying a topology spread constraint",
			members: []*member.Member{
				cluster("bravelion", labels("system=critical", "region=east")),
				cluster("smartfish", labels("system=critical", "region=west")),
				cluster("jumpingcat", labels("system=normal", "region=east")),
			},
			policy: `
placementType: PickN
numberOfClusters: 3
topologySpreadConstraints:
  - maxSkew: 2
    topologyKey: system
    whenUnsatisfiable: DoNotSchedule`,
			want: outcome{Create: []string{"bravelion", "jumpingcat", "smartfish"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"smartfish":  {Selected: true, Score: score(0, -1), Reason: scheduler.ReasonPicked},
				"jumpingcat": {Selected: true, Score: score(0, 1), Reason: scheduler.ReasonPicked},
				"bravelion":  {Selected: true, Score: score(0, -1), Reason: scheduler.ReasonPicked},
			},
		},
		{
			name: "a ScheduleAnyway violation scores -1000 and is still picked when nothing better exists",
			doc:  "Using Topology Spread Constraints to Spread Resources › Specifying a topology spread constraint",
			members: []*member.Member{
				cluster("e1", labels("region=east")), cluster("e2", labels("region=east")), cluster("e3", labels("region=east")),
				cluster("w1", labels("region=west")),
			},
			policy: `
placementType: PickN
numberOfClusters: 4
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: region
    whenUnsatisfiable: ScheduleAnyway`,
			want: outcome{Create: []string{"e1", "e2", "e3", "w1"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				// Picks: w1 (all -1, greatest name), e3 (+1), e2 (-1, one each), e1 (breaks maxSkew).
				"w1": {Selected: true, Score: score(0, -1), Reason: scheduler.ReasonPicked},
				"e3": {Selected: true, Score: score(0, 1), Reason: scheduler.ReasonPicked},
				"e2": {Selected: true, Score: score(0, -1), Reason: scheduler.ReasonPicked},
				"e1": {Selected: true, Score: score(0, scheduler.ScheduleAnywayPenalty), Reason: scheduler.ReasonPicked},
			},
		},
		{
			name: "empty domains count, so a filtered zone can block a DoNotSchedule spread (TOPO-SKEW)",
			doc:  "spec TOPO-SKEW [UPSTREAM]",
			members: []*member.Member{
				cluster("a1", labels("env=prod", "zone=a")), cluster("a2", labels("env=prod", "zone=a")), cluster("b1", labels("env=dev", "zone=b")),
			},
			policy: `
placementType: PickN
numberOfClusters: 2
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels:
            env: prod
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: zone`,
			want: outcome{Create: []string{"a2"}, Scheduled: no, Reason: unfulfilled},
			decisions: map[string]wantDecision{
				"a1": {Reason: `ClusterUnschedulable, violated topology spread constraint "zone" (max skew 1)`, Plugin: scheduler.PluginTopologySpread},
			},
		},
		{
			name: "clusters without the topology key score 0 and are preferred over keyed ones",
			doc:  "Using Topology Spread Constraints to Spread Resources › Specifying a topology spread constraint, spec TOPO-SKEW [UPSTREAM]",
			members: []*member.Member{
				cluster("a", labels("zone=1")), cluster("b", labels("zone=2")), cluster("c"),
			},
			policy: `
placementType: PickN
numberOfClusters: 1
topologySpreadConstraints:
  - topologyKey: zone`,
			want: outcome{Create: []string{"c"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"c": {Selected: true, Score: score(0, 0), Reason: scheduler.ReasonPicked},
				"b": {Score: score(0, -1), Reason: scheduler.ReasonNotHighEnough},
			},
		},
		{
			name: "property selector: node count at least 5; a cluster without the property fails",
			doc:  "Using Property-Based Scheduling",
			members: []*member.Member{
				cluster("big", property(member.NodeCountProperty, "7")), cluster("five", property(member.NodeCountProperty, "5")),
				cluster("small", property(member.NodeCountProperty, "3")), cluster("unknown"),
			},
			policy: `
placementType: PickAll
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - propertySelector:
          matchExpressions:
          - name: "kubernetes-fleet.io/node-count"
            operator: Ge
            values:
            - "5"`,
			want: outcome{Create: []string{"big", "five"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"unknown": {Reason: "ClusterUnschedulable, cluster does not match with any of the required cluster affinity terms", Plugin: scheduler.PluginClusterAffinity},
			},
		},
		{
			name: "label selector and property selector in one term are ANDed",
			doc:  "Using Property-Based Scheduling",
			members: []*member.Member{
				cluster("a", labels("region=east"), property(member.NodeCountProperty, "5")),
				cluster("b", labels("region=west"), property(member.NodeCountProperty, "9")),
				cluster("c", labels("region=east"), property(member.NodeCountProperty, "4")),
			},
			policy: `
placementType: PickAll
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels:
            region: east
        propertySelector:
          matchExpressions:
          - name: "kubernetes-fleet.io/node-count"
            operator: Ge
            values:
            - "5"`,
			want: outcome{Create: []string{"a"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name: "resource properties are addressed as resources.kubernetes-fleet.io/<type>-<name>",
			doc:  "Using Property-Based Scheduling",
			members: []*member.Member{
				cluster("a", resources("16", "14", "10")), cluster("b", resources("16", "14", "2")),
			},
			policy: `
placementType: PickAll
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - propertySelector:
          matchExpressions:
          - name: resources.kubernetes-fleet.io/available-cpu
            operator: Gt
            values: ["4"]
          - name: resources.kubernetes-fleet.io/allocatable-cpu
            operator: Eq
            values: ["14"]`,
			want: outcome{Create: []string{"a"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name: "descending sorter: 100%, 11.11% and 0% of the weight (SORTER-1)",
			doc:  "Using Property-Based Scheduling › A property sorter consists of",
			members: []*member.Member{
				cluster("bravelion", resources("", "", "100")), cluster("smartfish", resources("", "", "20")), cluster("jumpingcat", resources("", "", "10")),
			},
			policy: `
placementType: PickN
numberOfClusters: 3
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 20
      preference:
        propertySorter:
          name: resources.kubernetes-fleet.io/available-cpu
          sortOrder: Descending`,
			want: outcome{Create: []string{"bravelion", "jumpingcat", "smartfish"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"bravelion":  {Selected: true, Score: score(20, 0), Reason: scheduler.ReasonPicked},
				"smartfish":  {Selected: true, Score: score(2, 0), Reason: scheduler.ReasonPicked},
				"jumpingcat": {Selected: true, Score: score(0, 0), Reason: scheduler.ReasonPicked},
			},
		},
		{
			name: "descending sorter with weight 100: 11.11% rounds to 11 (SORTER-2)",
			doc:  "Using Property-Based Scheduling › A property sorter consists of; API Reference › Underlying type: string",
			members: []*member.Member{
				cluster("bravelion", resources("", "", "100")), cluster("smartfish", resources("", "", "20")), cluster("jumpingcat", resources("", "", "10")),
			},
			policy: `
placementType: PickN
numberOfClusters: 1
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      preference:
        propertySorter:
          name: resources.kubernetes-fleet.io/available-cpu
          sortOrder: Descending`,
			want: outcome{Create: []string{"bravelion"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"bravelion":  {Selected: true, Score: score(100, 0), Reason: scheduler.ReasonPicked},
				"smartfish":  {Score: score(11, 0), Reason: scheduler.ReasonNotHighEnough},
				"jumpingcat": {Score: score(0, 0), Reason: scheduler.ReasonNotHighEnough},
			},
		},
		{
			name: "ascending sorter on cost: 0%, 88.89% and 100% of the weight (SORTER-3)",
			doc:  "Using Property-Based Scheduling › The sorter would yield the weights below; API Reference › Underlying type: string",
			members: []*member.Member{
				cluster("bravelion", property("per-cpu-core-cost", "1")), cluster("smartfish", property("per-cpu-core-cost", "0.2")),
				cluster("jumpingcat", property("per-cpu-core-cost", "0.1")),
			},
			policy: `
placementType: PickN
numberOfClusters: 1
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      preference:
        propertySorter:
          name: per-cpu-core-cost
          sortOrder: Ascending`,
			want: outcome{Create: []string{"jumpingcat"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"jumpingcat": {Selected: true, Score: score(100, 0), Reason: scheduler.ReasonPicked},
				"smartfish":  {Score: score(89, 0), Reason: scheduler.ReasonNotHighEnough},
				"bravelion":  {Score: score(0, 0), Reason: scheduler.ReasonNotHighEnough},
			},
		},
		{
			name: "label selector with a sorter: non-matching clusters get nothing, min/max span the fleet",
			doc:  "Using Property-Based Scheduling › The sorter would yield the weights below",
			members: []*member.Member{
				cluster("prod-big", labels("env=prod"), resources("64", "", "")),
				cluster("prod-small", labels("env=prod"), resources("16", "", "")),
				cluster("dev-huge", labels("env=dev"), resources("128", "", "")),
			},
			policy: `
placementType: PickN
numberOfClusters: 1
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 20
      preference:
        labelSelector:
          matchLabels:
            env: prod
        propertySorter:
          name: resources.kubernetes-fleet.io/total-cpu
          sortOrder: Descending`,
			want: outcome{Create: []string{"prod-big"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				// (64-16)/(128-16) × 20 = 8.57 → 9: dev-huge sets the maximum though it gets no weight.
				"prod-big":   {Selected: true, Score: score(9, 0), Reason: scheduler.ReasonPicked},
				"dev-huge":   {Score: score(0, 0), Reason: scheduler.ReasonNotHighEnough},
				"prod-small": {Score: score(0, 0), Reason: scheduler.ReasonNotHighEnough},
			},
		},
		{
			name:   "PickAll ignores preferred terms of a stored policy",
			doc:    "Using the ClusterResourcePlacement API › PickAll placement type; API Reference › ClusterAffinity",
			stored: true,
			members: []*member.Member{
				cluster("a", labels("region=west")), cluster("b"),
			},
			policy: `
placementType: PickAll
affinity:
  clusterAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 20
      preference:
        labelSelector:
          matchLabels:
            region: west`,
			want: outcome{Create: []string{"a", "b"}, Scheduled: yes, Reason: fulfilled},
			decisions: map[string]wantDecision{
				"a": {Selected: true, Reason: scheduler.ReasonPicked},
				"b": {Selected: true, Reason: scheduler.ReasonPicked},
			},
		},
		{
			name:    "PickFixed places on exactly the named clusters",
			doc:     "Using the ClusterResourcePlacement API › PickFixed placement type",
			members: fourAnimals,
			policy:  "placementType: PickFixed\nclusterNames:\n  - bravelion\n  - smartfish",
			want:    outcome{Create: []string{"bravelion", "smartfish"}, Scheduled: yes, Reason: fulfilled},
		},
		{
			name: "PickFixed ignores taints; a missing or disconnected cluster leaves it unfulfilled",
			doc:  "MemberCluster › Taints; CRP Schedule Failure TSG › Instances where this condition may arise, spec CRP-POL-PICKFIXED",
			members: []*member.Member{
				cluster("tainted", taint("k", "v")),
				cluster("silent", agent(func(a *member.AgentStatus) { a.LastHeartbeat = now.Add(-10 * time.Minute) })),
			},
			policy: "placementType: PickFixed\nclusterNames: [tainted, silent, ghost]",
			want:   outcome{Create: []string{"tainted"}, Scheduled: no, Reason: unfulfilled},
			decisions: map[string]wantDecision{
				"tainted": {Selected: true, Reason: scheduler.ReasonPicked},
				"ghost":   {Reason: scheduler.ReasonNotFound},
				"silent": {
					Reason: "cluster is not eligible for resource placement yet: cluster is not connected to the fleet: no recent heartbeat signals (last received 10.00 minutes ago)",
					Plugin: scheduler.PluginClusterEligibility,
				},
			},
		},
		{
			name: "PickN keeps looking when too few clusters fit, and places what it found",
			doc:  "Using the ClusterResourcePlacement API › PickN placement type; CRP Schedule Failure TSG › ClusterResourcePlacement status",
			members: []*member.Member{
				cluster("a", labels("env=prod")), cluster("b", labels("env=dev")),
			},
			policy: `
placementType: PickN
numberOfClusters: 2
affinity:
  clusterAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      clusterSelectorTerms:
      - labelSelector:
          matchLabels:
            env: prod`,
			want: outcome{Create: []string{"a"}, Scheduled: no, Reason: unfulfilled},
		},
		{
			name:    "PickN with numberOfClusters 0 picks nothing and is fulfilled",
			doc:     "API Reference › PlacementPolicy",
			members: fourAnimals,
			policy:  "placementType: PickN\nnumberOfClusters: 0",
			want:    outcome{Scheduled: yes, Reason: fulfilled},
		},
		{
			name:    "a nil policy means PickAll",
			doc:     "Using the ClusterResourcePlacement API › Scheduling policy",
			members: fourAnimals,
			want:    outcome{Create: []string{"bravelion", "flyingpenguin", "jumpingcat", "smartfish"}, Scheduled: yes, Reason: fulfilled},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p *placement.PlacementPolicy
			switch {
			case tc.stored:
				p = &placement.PlacementPolicy{}
				if err := yaml.UnmarshalStrict([]byte(tc.policy), p); err != nil {
					t.Fatal(err)
				}
			case tc.policy != "":
				p = policy(t, tc.policy)
			}
			in := scheduler.Input{Snapshot: snapshot(p, 0), Members: tc.members, Now: now}
			plan, err := scheduler.Schedule(in)
			if err != nil {
				t.Fatalf("Schedule(%s) error: %v", tc.doc, err)
			}
			if diff := cmp.Diff(tc.want, outcomeOf(plan)); diff != "" {
				t.Errorf("Schedule(%s) outcome mismatch (-want +got):\n%s", tc.doc, diff)
			}
			for name, want := range tc.decisions {
				got, ok := decisionFor(plan, name)
				if !ok {
					t.Errorf("Schedule(%s): no decision for %s in %v", tc.doc, name, plan.Decisions)
					continue
				}
				gotW := wantDecision{Selected: got.Selected, Score: got.ClusterScore, Reason: got.Reason, Plugin: got.Plugin}
				if diff := cmp.Diff(want, gotW); diff != "" {
					t.Errorf("Schedule(%s) decision for %s mismatch (-want +got):\n%s", tc.doc, name, diff)
				}
			}
		})
	}
}
