package convert_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	v1beta1 "github.com/fleetsim/fleetsim/prod/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/convert"
)

// TestWorkStatusToModel: what an agent writes in a Work's status reaches the fan-in: under
// ReportDiff a DiffReported condition (no Applied) with diff details; under
// IfNotDrifted a False Applied with the drift details and the failed manifest.
func TestWorkStatusToModel(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	one := int64(1)
	cond := func(typ string, s metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, ObservedGeneration: gen, LastTransitionTime: t0}
	}
	cmID := v1beta1.WorkResourceIdentifier{Ordinal: 0, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "app", Name: "cm"}
	cm := placement.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "cm"}
	patch := []v1beta1.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: "b"}}
	modelPatch := []placement.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: "b"}}

	w := &v1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "crp-work", Namespace: "fleet-member-a", Generation: 2}}
	w.Status.Conditions = []metav1.Condition{cond("DiffReported", metav1.ConditionTrue, "WorkAllManifestsDiffReported", 2)}
	w.Status.ManifestConditions = []v1beta1.ManifestCondition{{Identifier: cmID,
		Conditions:  []metav1.Condition{cond("DiffReported", metav1.ConditionTrue, "ManifestDiffReported", 2)},
		DiffDetails: &v1beta1.DiffDetails{ObservationTime: t0, FirstDiffedObservedTime: t0, ObservedInMemberClusterGeneration: &one, ObservedDiffs: patch}}}
	got, ok := convert.WorkStatusToModel(w, nil)
	diffDone := condition.True("DiffReported", "WorkAllManifestsDiffReported", "")
	want := hub.WorkReport{DiffReported: &diffDone, Diffed: []placement.DiffedPlacement{{ResourceIdentifier: cm,
		ObservationTime: t0.Time, FirstDiffedObservedTime: t0.Time, TargetClusterObservedGeneration: &one, ObservedDiffs: modelPatch}}}
	if !ok {
		t.Fatal("a DiffReported Work reads as not reported")
	}
	diff(t, "WorkStatusToModel(ReportDiff)", want, got)

	w.Status.Conditions = []metav1.Condition{cond("Applied", metav1.ConditionFalse, "WorkAppliedFailed", 2)}
	w.Status.ManifestConditions = []v1beta1.ManifestCondition{{Identifier: cmID,
		Conditions:   []metav1.Condition{cond("Applied", metav1.ConditionFalse, "FoundDrifts", 2)},
		DriftDetails: &v1beta1.DriftDetails{ObservationTime: t0, FirstDriftedObservedTime: t0, ObservedInMemberClusterGeneration: 3, ObservedDrifts: patch}}}
	got, ok = convert.WorkStatusToModel(w, nil)
	want = hub.WorkReport{Applied: condition.False("Applied", "WorkAppliedFailed", ""),
		Failed:  []placement.FailedPlacement{{ResourceIdentifier: cm, Condition: condition.False("Applied", "FoundDrifts", "")}},
		Drifted: []placement.DriftedPlacement{{ResourceIdentifier: cm, ObservationTime: t0.Time, FirstDriftedObservedTime: t0.Time, TargetClusterObservedGeneration: 3, ObservedDrifts: modelPatch}}}
	if !ok {
		t.Fatal("an applied Work reads as not reported")
	}
	diff(t, "WorkStatusToModel(drift)", want, got)

	// A report on an older generation is not read.
	w.Status.Conditions[0].ObservedGeneration = 1
	if _, ok := convert.WorkStatusToModel(w, nil); ok {
		t.Error("a report on generation 1 of a generation-2 Work was read")
	}
}

// TestBindingDriftsRoundTrip: drifted and diffed placements survive binding conversion both
// ways, keeping base's envelope type.
func TestBindingDriftsRoundTrip(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	b := &v1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "crp-a-1234", Generation: 1, Labels: map[string]string{v1beta1.CRPTrackingLabel: "crp"}}}
	b.Spec.TargetCluster = "a"
	id := v1beta1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "cm",
		Envelope: &v1beta1.EnvelopeIdentifier{Name: "env", Namespace: "app", Type: "ResourceEnvelope"}}
	b.Status.DriftedPlacements = []v1beta1.DriftedResourcePlacement{{ResourceIdentifier: id, ObservationTime: t0, FirstDriftedObservedTime: t0,
		TargetClusterObservedGeneration: 4, ObservedDrifts: []v1beta1.PatchDetail{{Path: "/data/k", ValueInMember: "b"}}}}
	b.Status.DiffedPlacements = []v1beta1.DiffedResourcePlacement{{ResourceIdentifier: id, ObservationTime: t0, FirstDiffedObservedTime: t0}}
	m := convert.BindingToModel(b)
	if len(m.DriftedPlacements) != 1 || m.DriftedPlacements[0].Envelope == nil || len(m.DiffedPlacements) != 1 {
		t.Fatalf("BindingToModel lost drifts or diffs: %+v", m)
	}
	diff(t, "BindingFromModel(ToModel(b), b) status", b.Status, convert.BindingFromModel(m, b).Status, exact)
	m.DriftedPlacements = nil
	if got := convert.BindingFromModel(m, b).Status.DriftedPlacements; got != nil {
		t.Errorf("a drift the model no longer has stays: %+v", got)
	}
}
