package convert_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
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
	want := placement.WorkReport{DiffReported: &diffDone, Diffed: []placement.DiffedPlacement{{ResourceIdentifier: cm,
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
	want = placement.WorkReport{Applied: condition.False("Applied", "WorkAppliedFailed", ""),
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

// TestWorkReportBack: a placement's report-back strategy travels in the Work's spec, and a
// member agent's report of a Mirror Work carries each applied object's apiVersion, kind and
// status in backReportedStatus, keeping the observation time while the status is unchanged.
func TestWorkReportBack(t *testing.T) {
	dest := placement.ReportBackToWorkAPI
	rs := &placement.ReportBackStrategy{Type: placement.ReportBackMirror, Destination: &dest}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app"}}}
	m := &hub.Work{Name: "web-work", Binding: "web-member-1-0a1b2c3d", Placement: "web", Member: "member-1", Generation: 2,
		Manifests: []*unstructured.Unstructured{ns}, Envelopes: []*placement.NamespacedName{nil}, ReportBack: rs}
	w, err := convert.WorkFromModel(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Spec.ReportBackStrategy; got == nil || got.Type != "Mirror" || got.Destination == nil || *got.Destination != "WorkAPI" {
		t.Fatalf("Work spec.reportBackStrategy = %+v, want Mirror to WorkAPI", got)
	}
	back, _, err := convert.WorkToModel(w)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ToModel(FromModel(work reporting back))", m, back)

	live := ns.DeepCopy()
	live.Object["status"] = map[string]any{"phase": "Active"}
	t0 := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	res := agentk8s.ManifestResult{Identifier: placement.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: "app"}, Tracking: agentk8s.Untrackable,
		ObservedAt: t0, BackReported: agentk8s.BackReport(back.ReportBack, live)}
	st := convert.WorkStatusFromResults(w, "", []agentk8s.ManifestResult{res}, t0)
	br := st.ManifestConditions[0].BackReportedStatus
	if br == nil || string(br.ObservedStatus.Raw) != `{"apiVersion":"v1","kind":"Namespace","status":{"phase":"Active"}}` || !br.ObservationTime.Time.Equal(t0) {
		t.Fatalf("backReportedStatus = %+v, want the namespace's status observed at %v", br, t0)
	}
	w.Status = st
	admit(t, w, nil) // the Work's schema keeps the spec's strategy and the reported status
	res.ObservedAt = t0.Add(time.Minute)
	if again := convert.WorkStatusFromResults(w, "", []agentk8s.ManifestResult{res}, t0.Add(time.Minute)); !again.ManifestConditions[0].BackReportedStatus.ObservationTime.Time.Equal(t0) {
		t.Errorf("unchanged status observed again: time %v, want %v kept", again.ManifestConditions[0].BackReportedStatus.ObservationTime, t0)
	}
	if agentk8s.BackReport(nil, live) != nil || agentk8s.BackReport(&placement.ReportBackStrategy{Type: placement.ReportBackDisabled}, live) != nil {
		t.Errorf("BackReport without Mirror reports something")
	}
}

// TestWorkStatusFromResultsReasons: the Work's and its manifests' conditions carry KubeFleet's
// work applier's reasons, and each manifest's identifier names its resource.
func TestWorkStatusFromResultsReasons(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	w := &v1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "web-work", Namespace: "fleet-member-m1", Generation: 3}}
	results := []agentk8s.ManifestResult{
		{Identifier: placement.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: "app"}, Tracking: agentk8s.DataOnly},
		{Identifier: placement.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "app", Name: "web"}, Tracking: agentk8s.Trackable},
		{Identifier: placement.ResourceIdentifier{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy", Namespace: "app", Name: "deny"}, Tracking: agentk8s.DataOnly},
		{Identifier: placement.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: "app", Name: "once"}, Tracking: agentk8s.Untrackable},
	}
	st := convert.WorkStatusFromResults(w, "", results, t0)
	type cond struct{ Type, Status, Reason string }
	type manifest struct {
		Resource string
		Conds    []cond
	}
	var got []manifest
	for _, mc := range st.ManifestConditions {
		m := manifest{Resource: mc.Identifier.Resource}
		for _, c := range mc.Conditions {
			m.Conds = append(m.Conds, cond{c.Type, string(c.Status), c.Reason})
		}
		got = append(got, m)
	}
	want := []manifest{
		{"namespaces", []cond{{"Applied", "True", "Applied"}, {"Available", "True", "Available"}}},
		{"deployments", []cond{{"Applied", "True", "Applied"}, {"Available", "False", "ManifestNotAvailableYet"}}},
		{"networkpolicies", []cond{{"Applied", "True", "Applied"}, {"Available", "True", "Available"}}},
		{"jobs", []cond{{"Applied", "True", "Applied"}, {"Available", "True", "NotTrackable"}}},
	}
	diff(t, "manifest conditions", want, got)
	var work []cond
	for _, c := range st.Conditions {
		work = append(work, cond{c.Type, string(c.Status), c.Reason})
	}
	diff(t, "work conditions", []cond{{"Applied", "True", "AllManifestsApplied"}, {"Available", "False", "SomeManifestsAreNotAvailable"}}, work)
}
