package convert_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/status"
)

// serverMetadata is what the API server sets and the model does not carry.
var serverMetadata = cmpopts.IgnoreFields(metav1.ObjectMeta{}, "UID", "ResourceVersion", "Generation", "CreationTimestamp", "OwnerReferences")

func TestPolicySnapshotToModel(t *testing.T) {
	s := &v1beta1.ClusterSchedulingPolicySnapshot{}
	load(t, "policysnapshot-crp-1-1.yaml", s)
	got, err := convert.PolicySnapshotToModel(s)
	if err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	want := &placement.PolicySnapshot{
		Name: "crp-1-1", Placement: "crp-1", Index: 1,
		Policy:     &placement.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &two},
		PolicyHash: "479f405eb7808cfc58366b2648680a3a815ef914fe6756ae8df0d6f74885416a",
		// DC-10: numberOfClusters is the annotation.
		NumberOfClusters: 2, PlacementGeneration: 5,
	}
	diff(t, "PolicySnapshotToModel(documented crp-1-1)", want, got)

	sc := convert.SchedulingToModel(s)
	fulfilled := condition.True(condition.TypeScheduled, condition.ReasonSchedulingPolicyFulfilled, condition.MessageFulfilled)
	zero := &placement.ClusterScore{}
	diff(t, "SchedulingToModel(documented crp-1-1)", status.Scheduling{
		Condition: &fulfilled, ObservedPlacementGeneration: 5,
		Decisions: []placement.ClusterDecision{
			{ClusterName: "aks-member-1", Selected: true, ClusterScore: zero, Reason: "picked by scheduling policy"},
			{ClusterName: "aks-member-2", Selected: true, ClusterScore: zero, Reason: "picked by scheduling policy"},
		},
	}, sc)
}

func TestPolicySnapshotRoundTrip(t *testing.T) {
	now := at("2025-01-01T00:00:00Z")
	for _, f := range []string{"policysnapshot-crp-1-1.yaml", "policysnapshot-crp-2-0.yaml"} {
		t.Run(f, func(t *testing.T) {
			s := &v1beta1.ClusterSchedulingPolicySnapshot{}
			load(t, f, s)
			ps, err := convert.PolicySnapshotToModel(s)
			if err != nil {
				t.Fatal(err)
			}
			sc := convert.SchedulingToModel(s)
			latest := s.Labels[v1beta1.IsLatestSnapshotLabel] == "true"

			got := convert.PolicySnapshotFromModel(ps, latest, s)
			got.Status = convert.SchedulingFromModel(sc, now, s)
			diff(t, "FromModel(ToModel(s), s)", s, got, exact)

			fresh := convert.PolicySnapshotFromModel(ps, latest, nil)
			fresh.Status = convert.SchedulingFromModel(sc, time.Time{}, nil)
			want := s.DeepCopy()
			want.Status.Conditions[0].LastTransitionTime, want.Status.Conditions[0].ObservedGeneration = metav1.Time{}, 0
			diff(t, "FromModel(ToModel(s), nil)", want, fresh, exact, serverMetadata)

			back, err := convert.PolicySnapshotToModel(fresh)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "ToModel(FromModel(ps))", ps, back)
			diff(t, "SchedulingToModel(SchedulingFromModel(sc))", sc, convert.SchedulingToModel(fresh))
			admit(t, got, s)
		})
	}
}

// TestPolicySnapshotFromDecision: a snapshot the model decides is a valid object, scaling
// it changes only the number-of-clusters annotation (so the immutable spec stays as it
// was), and a new scheduling result dates its condition.
func TestPolicySnapshotFromDecision(t *testing.T) {
	three := int32(3)
	policy := &placement.PlacementPolicy{
		PlacementType: placement.PickN, NumberOfClusters: &three,
		Affinity: &placement.Affinity{ClusterAffinity: &placement.ClusterAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &placement.ClusterSelector{ClusterSelectorTerms: []placement.ClusterSelectorTerm{
				{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
			}},
		}},
		TopologySpreadConstraints: []placement.TopologySpreadConstraint{{TopologyKey: "region"}},
		Tolerations:               []placement.Toleration{{Key: "gpu", Operator: placement.TolerationOpExists}},
	}
	ps := placement.DecidePolicySnapshot("web", 7, policy, nil).Create
	obj := convert.PolicySnapshotFromModel(ps, true, nil)
	admit(t, obj, nil)
	if obj.Spec.Policy.NumberOfClusters != nil || obj.Annotations[v1beta1.NumberOfClustersAnnotation] != "3" {
		t.Errorf("spec.policy.numberOfClusters %v, annotation %q: want it in the annotation only", obj.Spec.Policy.NumberOfClusters, obj.Annotations[v1beta1.NumberOfClustersAnnotation])
	}
	back, err := convert.PolicySnapshotToModel(obj)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ToModel(FromModel(decided snapshot))", ps, back)

	five := int32(5)
	scaled := *policy
	scaled.NumberOfClusters = &five
	dec := placement.DecidePolicySnapshot("web", 8, &scaled, back)
	if dec.SetNumberOfClusters == nil {
		t.Fatalf("scaling decided %+v, want a numberOfClusters update", dec)
	}
	back.NumberOfClusters = *dec.SetNumberOfClusters
	up := convert.PolicySnapshotFromModel(back, true, obj)
	admit(t, up, obj) // the spec is immutable: scaling must not touch it
	if up.Annotations[v1beta1.NumberOfClustersAnnotation] != "5" {
		t.Errorf("scaled annotation %q, want 5", up.Annotations[v1beta1.NumberOfClustersAnnotation])
	}
	old := convert.PolicySnapshotFromModel(back, false, up)
	if old.Labels[v1beta1.IsLatestSnapshotLabel] != "false" {
		t.Errorf("superseded snapshot labels %v", old.Labels)
	}

	now := at("2025-01-01T00:00:00Z")
	unfulfilled := condition.False(condition.TypeScheduled, condition.ReasonSchedulingPolicyUnfulfilled, condition.MessageUnfulfilled)
	sc := status.Scheduling{Condition: &unfulfilled, ObservedPlacementGeneration: 8, Decisions: []placement.ClusterDecision{
		{ClusterName: "a", Selected: true, ClusterScore: &placement.ClusterScore{AffinityScore: 20, TopologySpreadScore: -1}, Reason: "picked by scheduling policy"},
		{ClusterName: "b", Reason: "cluster is not eligible for resource placement yet: cluster has left the fleet", Plugin: "ClusterEligibility"},
	}}
	up.Generation = 1
	up.Status = convert.SchedulingFromModel(sc, now, up)
	admit(t, up, nil)
	c := up.Status.Conditions[0]
	if c.Status != metav1.ConditionFalse || !c.LastTransitionTime.Time.Equal(now) || c.ObservedGeneration != 1 {
		t.Errorf("new Scheduled condition %+v, want False at %s for snapshot generation 1", c, now)
	}
	// Same status, new message: the transition time stays.
	sc.Condition.Message = "could not find all the clusters needed as specified by the scheduling policy, found 1 cluster(s)"
	later := convert.SchedulingFromModel(sc, now.Add(time.Hour), up)
	if !later.Conditions[0].LastTransitionTime.Time.Equal(now) || later.Conditions[0].Message != sc.Condition.Message {
		t.Errorf("updated Scheduled condition %+v, want the new message at the old time", later.Conditions[0])
	}
	diff(t, "SchedulingToModel(SchedulingFromModel(sc))", sc, convert.SchedulingToModel(&v1beta1.ClusterSchedulingPolicySnapshot{Status: later}))
}

func TestPolicySnapshotErrors(t *testing.T) {
	s := &v1beta1.ClusterSchedulingPolicySnapshot{}
	load(t, "policysnapshot-crp-2-0.yaml", s)
	s.Annotations[v1beta1.NumberOfClustersAnnotation] = "two"
	if _, err := convert.PolicySnapshotToModel(s); err == nil || !strings.Contains(err.Error(), `ClusterSchedulingPolicySnapshot crp-2-0: annotation kubernetes-fleet.io/number-of-clusters="two" is not an integer`) {
		t.Errorf("bad annotation: error %v", err)
	}
	delete(s.Labels, v1beta1.PolicyIndexLabel)
	if _, err := convert.PolicySnapshotToModel(s); err == nil || !strings.Contains(err.Error(), "no kubernetes-fleet.io/policy-index label") {
		t.Errorf("no index label: error %v", err)
	}
}

func TestResourceSnapshotRoundTrip(t *testing.T) {
	for _, f := range []string{"resourcesnapshot-crp-1-4.yaml", "resourcesnapshot-crp-3-1.yaml"} {
		t.Run(f, func(t *testing.T) {
			s := &v1beta1.ClusterResourceSnapshot{}
			load(t, f, s)
			rs, err := convert.ResourceSnapshotToModel([]*v1beta1.ClusterResourceSnapshot{s})
			if err != nil {
				t.Fatal(err)
			}
			if rs.Name != s.Name || rs.Placement != s.Labels[v1beta1.CRPTrackingLabel] || rs.Hash != s.Annotations[v1beta1.ResourceGroupHashAnnotation] || len(rs.Manifests) != len(s.Spec.SelectedResources) {
				t.Errorf("ResourceSnapshotToModel = %+v", rs)
			}
			for i, m := range rs.Manifests {
				if m.GetKind() == "" || m.GetName() == "" {
					t.Errorf("manifest %d = %v", i, m.Object)
				}
			}
			got, err := convert.ResourceSnapshotFromModel(rs, true, 0, []*v1beta1.ClusterResourceSnapshot{s})
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "FromModel(ToModel(s), s)", []*v1beta1.ClusterResourceSnapshot{s}, got, exact)
			fresh, err := convert.ResourceSnapshotFromModel(rs, true, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "FromModel(ToModel(s), nil)", []*v1beta1.ClusterResourceSnapshot{s}, fresh, sameMeaning, serverMetadata)
			back, err := convert.ResourceSnapshotToModel(fresh)
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "ToModel(FromModel(rs))", rs, back)
			admit(t, fresh[0], nil)
		})
	}
}

// TestResourceSnapshotGroups: a snapshot too large for one object is split into an index
// group, which reads back whole in any order; an incomplete group is an error.
func TestResourceSnapshotGroups(t *testing.T) {
	var selected []*unstructured.Unstructured
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("app")
	selected = append(selected, ns)
	for i := range 6 {
		cm := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"blob": strings.Repeat("x", 300)}}}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetName("cm-" + string(rune('a'+i)))
		cm.SetNamespace("app")
		selected = append(selected, cm)
	}
	env := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"cm.yaml": map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "inner"},
	}}}}
	env.SetAPIVersion("placement.kubernetes-fleet.io/v1beta1")
	env.SetKind(resources.KindResourceEnvelope)
	env.SetName("envelope")
	env.SetNamespace("app")
	selected = append(selected, env)
	rs := resources.DecideSnapshot("web", selected, nil)

	group, err := convert.ResourceSnapshotFromModel(rs, true, 800, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, s := range group {
		names = append(names, s.Name)
		admit(t, s, nil)
		if sub := s.Annotations[v1beta1.SubindexOfResourceSnapshotAnnotation]; (i == 0) != (sub == "") {
			t.Errorf("%s: subindex annotation %q", s.Name, sub)
		}
	}
	// About 400 bytes per ConfigMap, at most 800 per snapshot: the namespace with one
	// ConfigMap, then one ConfigMap each, the last with the envelope.
	diff(t, "group names", []string{"web-0-snapshot", "web-0-1", "web-0-2", "web-0-3", "web-0-4", "web-0-5"}, names)
	lead := group[0].Annotations
	if lead[v1beta1.NumberOfResourceSnapshotsAnnotation] != "6" || lead[v1beta1.NumberOfEnvelopedObjectsAnnotation] != "1" || lead[v1beta1.ResourceGroupHashAnnotation] != rs.Hash {
		t.Errorf("leading annotations %v", lead)
	}

	shuffled := append([]*v1beta1.ClusterResourceSnapshot(nil), group...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	back, err := convert.ResourceSnapshotToModel(shuffled)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ToModel(FromModel(split snapshot))", rs, back)

	if _, err := convert.ResourceSnapshotToModel(group[:3]); err == nil || !strings.Contains(err.Error(), "the group has 3 snapshot(s), the kubernetes-fleet.io/number-of-resource-snapshots annotation says 6") {
		t.Errorf("incomplete group: error %v", err)
	}
	if _, err := convert.ResourceSnapshotToModel(group[1:]); err == nil || !strings.Contains(err.Error(), "no leading snapshot") {
		t.Errorf("group without its leader: error %v", err)
	}

	// Relabelling the superseded group changes labels only.
	old, err := convert.ResourceSnapshotFromModel(rs, false, 800, group)
	if err != nil {
		t.Fatal(err)
	}
	for i := range old {
		if old[i].Labels[v1beta1.IsLatestSnapshotLabel] != "false" {
			t.Errorf("%s labels %v", old[i].Name, old[i].Labels)
		}
		admit(t, old[i], group[i])
	}
}

// TestEmptyResourceSnapshot: a placement whose namespace does not exist yet snapshots no
// resources; the API server still needs the required list, empty rather than null.
func TestEmptyResourceSnapshot(t *testing.T) {
	rs := resources.DecideSnapshot("web", nil, nil)
	group, err := convert.ResourceSnapshotFromModel(rs, true, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(group) != 1 || group[0].Spec.SelectedResources == nil {
		t.Fatalf("ResourceSnapshotFromModel(no resources) = %d snapshots, selectedResources %v; want one with an empty list", len(group), group[0].Spec.SelectedResources)
	}
	admit(t, group[0], nil)
}
