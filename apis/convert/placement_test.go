package convert_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/status"
)

// placementNotCarried are the status fields the model does not carry: the envelope type of
// a resource, and the times of a failed placement's condition (a new one is dated with its
// cluster's condition).
var placementNotCarried = cmp.Options{
	cmpopts.IgnoreFields(v1beta1.EnvelopeIdentifier{}, "Type"),
	cmpopts.IgnoreFields(v1beta1.FailedResourcePlacement{}, "Condition.LastTransitionTime", "Condition.ObservedGeneration"),
}

var placementSamples = []string{
	"crp-migration.yaml",       // PickN with affinity, full condition chain
	"crp-external.yaml",        // External rollout, tolerations, no status
	"crp-pickn-unfilled.yaml",  // PickN short of clusters: an entry without a cluster name
	"crp-apply-failed.yaml",    // PickFixed, failed placements
	"crp-envelope-failed.yaml", // failed resource of a ResourceEnvelope, older condition names
}

func TestPlacementRoundTrip(t *testing.T) {
	for _, f := range placementSamples {
		t.Run(f, func(t *testing.T) {
			crp := &v1beta1.ClusterResourcePlacement{}
			load(t, f, crp)
			p := convert.PlacementToModel(crp)

			// The model reads the same manifest the same way on its own.
			var own struct {
				placement.ClusterResourcePlacement `json:",inline"`
				Status                             status.Status `json:"status"`
			}
			loadModel(t, f, &own)
			diff(t, "spec: PlacementToModel vs the model's own decoding", own.Spec, p.CRP.Spec)
			diff(t, "status: PlacementToModel vs the model's own decoding", own.Status, p.Status)
			if p.Generation != crp.Generation || p.Deleting {
				t.Errorf("generation %d deleting %v, want %d false", p.Generation, p.Deleting, crp.Generation)
			}

			diff(t, "PlacementFromModel(ToModel(crp), crp)", crp, convert.PlacementFromModel(p, crp), exact)
			fresh := convert.PlacementFromModel(p, nil)
			diff(t, "PlacementFromModel(ToModel(crp), nil)", crp, fresh, exact, placementNotCarried)
			diff(t, "ToModel(FromModel(p, nil))", p, convert.PlacementToModel(fresh))
			admit(t, fresh, nil)
		})
	}
}

// TestPlacementStatusMerge: when the model's status changes, each cluster's entry keeps
// the drift and diff details it reads and what base says of its failed placements; new
// failed placements are dated by their cluster's condition.
func TestPlacementStatusMerge(t *testing.T) {
	crp := &v1beta1.ClusterResourcePlacement{}
	load(t, "crp-envelope-failed.yaml", crp)
	drift := v1beta1.DriftedResourcePlacement{
		ResourceIdentifier: v1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "cm", Namespace: "app"},
		ObservationTime:    metav1.NewTime(at("2023-12-06T00:10:00Z")), TargetClusterObservedGeneration: 3,
		FirstDriftedObservedTime: metav1.NewTime(at("2023-12-06T00:09:59Z")),
		ObservedDrifts:           []v1beta1.PatchDetail{{Path: "/data/key", ValueInMember: "b", ValueInHub: "a"}},
	}
	crp.Status.PlacementStatuses[0].DriftedPlacements = []v1beta1.DriftedResourcePlacement{drift}
	admit(t, crp, nil)

	p := convert.PlacementToModel(crp)
	cs := &p.Status.PlacementStatuses[0]
	applied := condition.Timed{Condition: condition.False(condition.TypeApplied, condition.ReasonNotAllWorkApplied, "Work object crp-envelope-work is not applied"),
		ObservedGeneration: 3, LastTransitionTime: at("2023-12-06T00:11:00Z")}
	cs.Conditions = append(cs.Conditions, applied)
	cs.FailedPlacements = append(cs.FailedPlacements, placement.FailedPlacement{
		ResourceIdentifier: placement.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web", Namespace: "app"},
		Condition:          condition.False(condition.TypeApplied, "ManifestsAlreadyOwnedByOthers", "owned by another agent"),
	})
	got := convert.PlacementFromModel(p, crp)

	want := crp.DeepCopy()
	ws := &want.Status.PlacementStatuses[0]
	ws.Conditions = append(ws.Conditions, metav1.Condition{Type: "Applied", Status: metav1.ConditionFalse, Reason: condition.ReasonNotAllWorkApplied,
		Message: "Work object crp-envelope-work is not applied", ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(at("2023-12-06T00:11:00Z"))})
	ws.FailedPlacements = append(ws.FailedPlacements, v1beta1.FailedResourcePlacement{
		ResourceIdentifier: v1beta1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Name: "web", Namespace: "app"},
		Condition: metav1.Condition{Type: "Applied", Status: metav1.ConditionFalse, Reason: "ManifestsAlreadyOwnedByOthers", Message: "owned by another agent",
			ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(at("2023-12-06T00:11:00Z"))},
	})
	diff(t, "PlacementFromModel(changed status, crp)", want, got, exact)
	admit(t, got, crp)
}

// TestPlacementUnfilledEntries: entries without a cluster name (PickN short of clusters)
// match base by position; drift and diff details are the model's.
func TestPlacementUnfilledEntries(t *testing.T) {
	crp := &v1beta1.ClusterResourcePlacement{}
	load(t, "crp-pickn-unfilled.yaml", crp)
	gone := v1beta1.DiffedResourcePlacement{ResourceIdentifier: v1beta1.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: "x"},
		ObservationTime: metav1.NewTime(at("2024-05-07T22:36:33Z")), FirstDiffedObservedTime: metav1.NewTime(at("2024-05-07T22:36:33Z"))}
	crp.Status.PlacementStatuses[1].DiffedPlacements = []v1beta1.DiffedResourcePlacement{gone}
	p := convert.PlacementToModel(crp)
	// A second unfilled entry appears after the first.
	p.Status.PlacementStatuses = append(p.Status.PlacementStatuses, p.Status.PlacementStatuses[1])
	p.Status.PlacementStatuses[2].DiffedPlacements = nil
	got := convert.PlacementFromModel(p, crp)
	if n := len(got.Status.PlacementStatuses); n != 3 {
		t.Fatalf("%d placement statuses, want 3", n)
	}
	diff(t, "first unfilled entry keeps base's details", []v1beta1.DiffedResourcePlacement{gone}, got.Status.PlacementStatuses[1].DiffedPlacements)
	diff(t, "second unfilled entry has none", []v1beta1.DiffedResourcePlacement(nil), got.Status.PlacementStatuses[2].DiffedPlacements)
}

// TestPlacementDeleting: deletion is a timestamp in the API and a flag in the model.
func TestPlacementDeleting(t *testing.T) {
	crp := &v1beta1.ClusterResourcePlacement{}
	load(t, "crp-external.yaml", crp)
	p := convert.PlacementToModel(crp)
	p.Deleting, p.Generation = true, 4
	got := convert.PlacementFromModel(p, crp)
	if got.DeletionTimestamp == nil || got.Generation != 4 {
		t.Errorf("PlacementFromModel(deleting, generation 4) = deletionTimestamp %v, generation %d", got.DeletionTimestamp, got.Generation)
	}
	if back := convert.PlacementToModel(got); !back.Deleting || back.Generation != 4 {
		t.Errorf("ToModel(FromModel(deleting)) = deleting %v generation %d", back.Deleting, back.Generation)
	}
}

// richPlacement uses every field of the placement spec (CRP-API, APPLY-API), as a user would
// write it.
const richPlacement = `apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: web
  generation: 3
  labels: {team: a}
spec:
  resourceSelectors:
  - {group: "", version: v1, kind: Namespace, name: web}
  - {group: rbac.authorization.k8s.io, version: v1, kind: ClusterRole, labelSelector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: In, values: [front, back]}]}}
  policy:
    placementType: PickN
    numberOfClusters: 3
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms:
          - labelSelector: {matchLabels: {env: prod}}
            propertySelector:
              matchExpressions:
              - {name: kubernetes-fleet.io/node-count, operator: Ge, values: ["3"]}
          - labelSelector: {matchExpressions: [{key: region, operator: DoesNotExist}]}
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 20
          preference:
            labelSelector: {matchLabels: {region: west}}
            propertySorter: {name: resources.kubernetes-fleet.io/available-cpu, sortOrder: Descending}
        - weight: -20
          preference: {labelSelector: {matchLabels: {environment: prod}}}
    topologySpreadConstraints:
    - {maxSkew: 2, topologyKey: region, whenUnsatisfiable: ScheduleAnyway}
    - {topologyKey: zone}
    tolerations:
    - {key: gpu, operator: Equal, value: "true", effect: NoSchedule}
    - {key: maintenance, operator: Exists}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: 1, maxSurge: "50%", unavailablePeriodSeconds: 30}
    applyStrategy:
      type: ServerSideApply
      comparisonOption: FullComparison
      whenToApply: IfNotDrifted
      whenToTakeOver: IfNoDiff
      allowCoOwnership: true
      serverSideApplyConfig: {force: true}
    deleteStrategy: {propagationPolicy: Abandon}
    reportBackStrategy: {type: Mirror, destination: WorkAPI}
  revisionHistoryLimit: 5
  statusReportingScope: NamespaceAccessible
`

func TestPlacementEveryField(t *testing.T) {
	crp := &v1beta1.ClusterResourcePlacement{}
	if err := yaml.UnmarshalStrict([]byte(richPlacement), crp); err != nil {
		t.Fatal(err)
	}
	var own placement.ClusterResourcePlacement
	if err := yaml.Unmarshal([]byte(richPlacement), &own); err != nil {
		t.Fatal(err)
	}
	if errs := placement.ValidatePlacement(&own); len(errs) > 0 {
		t.Fatalf("the model refuses the placement: %v", errs)
	}
	p := convert.PlacementToModel(crp)
	diff(t, "PlacementToModel vs the model's own decoding", own, p.CRP)
	diff(t, "FromModel(ToModel(crp), nil)", crp, convert.PlacementFromModel(p, nil), exact)
	diff(t, "ToModel(FromModel(p, nil))", p, convert.PlacementToModel(convert.PlacementFromModel(p, nil)))
	admit(t, crp, nil)
}

// TestPlacementStatusObject: a NamespaceAccessible placement's status copy is written with
// the placement's tracking label, round-trips, and keeps its lastUpdatedTime while the
// status it copies is unchanged.
func TestPlacementStatusObject(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	m := &hub.StatusMirror{Namespace: "web", Status: status.Status{ObservedResourceIndex: "0",
		Conditions: []condition.Timed{{Condition: condition.True("ClusterResourcePlacementAvailable", "ResourceAvailable", "ok"), ObservedGeneration: 1, LastTransitionTime: t0}}}}
	first := convert.PlacementStatusObjectFromModel("crp", m, nil, t0)
	if first.Namespace != "web" || first.Name != "crp" || first.Labels[v1beta1.CRPTrackingLabel] != "crp" || !first.LastUpdatedTime.Time.Equal(t0) {
		t.Fatalf("first write %+v, want crp in web labelled for crp, updated at %v", first.ObjectMeta, t0)
	}
	diff(t, "ToModel(FromModel(m))", m, convert.PlacementStatusObjectToModel(first))
	same := convert.PlacementStatusObjectFromModel("crp", m, first, t0.Add(time.Minute))
	if !same.LastUpdatedTime.Time.Equal(t0) {
		t.Errorf("unchanged status: lastUpdatedTime %v, want %v kept", same.LastUpdatedTime, t0)
	}
	m.Status.ObservedResourceIndex = "1"
	changed := convert.PlacementStatusObjectFromModel("crp", m, first, t0.Add(time.Minute))
	if !changed.LastUpdatedTime.Time.Equal(t0.Add(time.Minute)) || changed.SourceStatus.ObservedResourceIndex != "1" {
		t.Errorf("changed status: lastUpdatedTime %v, index %q; want %v and 1", changed.LastUpdatedTime, changed.SourceStatus.ObservedResourceIndex, t0.Add(time.Minute))
	}
}
