package convert_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
)

func TestBindingToModel(t *testing.T) {
	b := &v1beta1.ClusterResourceBinding{}
	load(t, "binding-crp-1.yaml", b)
	got := convert.BindingToModel(b)
	want := &placement.Binding{
		Name: "crp-1-aks-member-1-2f8fe606", Placement: "crp-1", TargetCluster: "aks-member-1",
		State: placement.Bound, PreviousState: placement.Bound,
		SchedulingPolicySnapshotName: "crp-1-1", ResourceSnapshotName: "crp-1-4-snapshot",
		ClusterDecision: placement.ClusterDecision{ClusterName: "aks-member-1", Selected: true, ClusterScore: &placement.ClusterScore{}, Reason: "picked by scheduling policy"},
		Generation:      8,
		Conditions: []condition.Timed{
			{Condition: condition.True("Bound", "AllWorkSynced", ""), ObservedGeneration: 8, LastTransitionTime: at("2023-11-06T09:53:11Z")},
			{Condition: condition.True("Applied", "AllWorkHasBeenApplied", ""), ObservedGeneration: 8, LastTransitionTime: at("2023-11-10T08:23:38Z")},
		},
	}
	diff(t, "BindingToModel(documented binding)", want, got)
}

func TestBindingRoundTrip(t *testing.T) {
	for _, f := range []string{"binding-crp-1.yaml", "binding-crp-3.yaml"} {
		t.Run(f, func(t *testing.T) {
			b := &v1beta1.ClusterResourceBinding{}
			load(t, f, b)
			m := convert.BindingToModel(b)
			diff(t, "BindingFromModel(ToModel(b), b)", b, convert.BindingFromModel(m, b), exact)
			fresh := convert.BindingFromModel(m, nil)
			// A new binding records the decisions' generation count: the API server starts
			// its own at 1.
			if g := fresh.Annotations[v1beta1.BindingGenerationAnnotation]; g != strconv.FormatInt(b.Generation, 10) {
				t.Errorf("generation annotation %q, want %d", g, b.Generation)
			}
			delete(fresh.Annotations, v1beta1.BindingGenerationAnnotation)
			if len(fresh.Annotations) == 0 {
				fresh.Annotations = b.Annotations
			}
			diff(t, "BindingFromModel(ToModel(b), nil)", b, fresh, exact, serverMetadata)
			fresh = convert.BindingFromModel(m, nil)
			diff(t, "ToModel(FromModel(m))", m, convert.BindingToModel(fresh))
			admit(t, fresh, nil)
		})
	}
}

// TestBindingFromScheduler: a binding as the scheduler and rollout decide it, with
// overrides and a failed placement, is a valid object and reads back the same.
func TestBindingFromScheduler(t *testing.T) {
	m := &placement.Binding{
		Name: placement.BindingName("web", "member-1", 0), Placement: "web", TargetCluster: "member-1",
		State: placement.Unscheduled, PreviousState: placement.Bound,
		SchedulingPolicySnapshotName: "web-0", ResourceSnapshotName: "web-2-snapshot",
		ClusterDecision: placement.ClusterDecision{ClusterName: "member-1", Selected: true,
			ClusterScore: &placement.ClusterScore{AffinityScore: 40, TopologySpreadScore: 1}, Reason: "picked by scheduling policy"},
		Deleting: true, Generation: 3,
		ClusterResourceOverrideSnapshots: []string{"cro-1-0"},
		ResourceOverrideSnapshots:        []placement.NamespacedName{{Namespace: "app", Name: "ro-1-2"}},
		ApplyStrategy:                    &placement.ApplyStrategy{Type: placement.ServerSideApply, WhenToTakeOver: "IfNoDiff"},
		Conditions: []condition.Timed{
			{Condition: condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, "Detected the new changes on the resources and started the rollout process"), ObservedGeneration: 3, LastTransitionTime: at("2025-02-01T10:00:00Z")},
			{Condition: condition.False(condition.TypeApplied, condition.ReasonNotAllWorkApplied, "Work object web-work is not applied"), ObservedGeneration: 3, LastTransitionTime: at("2025-02-01T10:00:05Z")},
		},
		FailedPlacements: []placement.FailedPlacement{{
			ResourceIdentifier: placement.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Name: "inner", Namespace: "app", Envelope: &placement.NamespacedName{Namespace: "app", Name: "envelope"}},
			Condition:          condition.False(condition.TypeApplied, "AppliedManifestFailedReason", "Failed to apply manifest: namespaces \"app\" not found"),
		}},
	}
	obj := convert.BindingFromModel(m, nil)
	admit(t, obj, nil)
	if obj.Annotations[v1beta1.PreviousBindingStateAnnotation] != "Bound" || obj.DeletionTimestamp == nil || obj.Finalizers[0] != v1beta1.WorkCleanupFinalizer {
		t.Errorf("metadata %+v", obj.ObjectMeta)
	}
	fc := obj.Status.FailedPlacements[0].Condition
	if !fc.LastTransitionTime.Time.Equal(at("2025-02-01T10:00:05Z")) || fc.ObservedGeneration != 3 {
		t.Errorf("failed placement condition %+v, want the Applied condition's time and generation", fc)
	}
	diff(t, "ToModel(FromModel(m))", m, convert.BindingToModel(obj))

	// Re-picked: the previous state annotation goes, base's other annotations stay.
	obj.Annotations["example.com/note"] = "kept"
	m.State, m.PreviousState, m.Deleting = placement.Bound, "", false
	again := convert.BindingFromModel(m, obj)
	diff(t, "annotations after re-picking", map[string]string{"example.com/note": "kept", v1beta1.BindingGenerationAnnotation: "3"}, again.Annotations)

	// The API server counted a change the decisions do not (an unschedule): the annotation
	// keeps the decisions' count, and reading gives it back.
	again.Generation = 4
	m.Generation = 3
	back := convert.BindingToModel(convert.BindingFromModel(m, again))
	if back.Generation != 3 {
		t.Errorf("generation read back %d, want the decisions' 3 (the server is at 4)", back.Generation)
	}
	if again.DeletionTimestamp != nil {
		t.Errorf("deletionTimestamp %v, want none", again.DeletionTimestamp)
	}
}

func TestWorkRoundTrip(t *testing.T) {
	w := &v1beta1.Work{}
	load(t, "work.yaml", w)
	m, strategy, err := convert.WorkToModel(w)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "crp-4-work" || m.Member != "kind-cluster-1" || m.Placement != "crp-4" || m.Binding != "crp-4-kind-cluster-1-55d2a3cc" || m.Generation != 1 ||
		len(m.Manifests) != 2 || len(m.Envelopes) != 2 || m.Envelopes[0] != nil || m.Manifests[1].GetKind() != "Deployment" {
		t.Errorf("WorkToModel(documented work) = %+v", m)
	}
	diff(t, "apply strategy", &placement.ApplyStrategy{Type: placement.ClientSideApply, ComparisonOption: "PartialComparison", WhenToApply: "Always", WhenToTakeOver: "Always"}, strategy)

	got, err := convert.WorkFromModel(m, strategy, w)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "WorkFromModel(ToModel(w), w)", w, got, exact)

	fresh, err := convert.WorkFromModel(m, strategy, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := w.DeepCopy()
	want.Status = v1beta1.WorkStatus{} // reported by the member agent; no model counterpart
	diff(t, "WorkFromModel(ToModel(w), nil)", want, fresh, sameMeaning, serverMetadata)
	back, s2, err := convert.WorkToModel(fresh)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ToModel(FromModel(m))", m, back)
	diff(t, "ToModel(FromModel(m)) strategy", strategy, s2)
	admit(t, fresh, nil)
	admit(t, got, w)
}

// TestWorkDeleteStrategy: a placement's Abandon delete strategy travels in the Work's
// annotation, and only Abandon is written.
func TestWorkDeleteStrategy(t *testing.T) {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app"}}}
	for _, abandon := range []bool{true, false} {
		m := &hub.Work{Name: "web-work", Binding: "web-member-1-0a1b2c3d", Placement: "web", Member: "member-1", Generation: 2,
			Manifests: []*unstructured.Unstructured{ns}, Envelopes: []*placement.NamespacedName{nil}, Abandon: abandon}
		obj, err := convert.WorkFromModel(m, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, ok := obj.Annotations[v1beta1.DeletePropagationPolicyAnnotation]
		if ok != abandon || (abandon && a != "Abandon") {
			t.Errorf("abandon %t: annotation %q (present %t)", abandon, a, ok)
		}
		back, _, err := convert.WorkToModel(obj)
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "ToModel(FromModel(m))", m, back)
		// Switching back to Delete removes the annotation from an existing Work.
		m.Abandon = false
		again, err := convert.WorkFromModel(m, nil, obj)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := again.Annotations[v1beta1.DeletePropagationPolicyAnnotation]; ok {
			t.Errorf("abandon %t then Delete: annotation kept: %v", abandon, again.Annotations)
		}
	}
}

// TestWorkEnvelopes: the envelope each manifest came in survives the trip through the API.
func TestWorkEnvelopes(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "inner", "namespace": "app"}, "data": map[string]any{"a": "1"}}}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "app"}}}
	m := &hub.Work{Name: "web-work", Binding: "web-member-1-0a1b2c3d", Placement: "web", Member: "member-1", Generation: 4,
		Manifests: []*unstructured.Unstructured{ns, cm},
		Envelopes: []*placement.NamespacedName{nil, {Namespace: "app", Name: "envelope"}}}
	obj, err := convert.WorkFromModel(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	admit(t, obj, nil)
	if obj.Namespace != "fleet-member-member-1" || obj.Annotations[v1beta1.WorkManifestEnvelopesAnnotation] != `[null,{"namespace":"app","name":"envelope"}]` {
		t.Errorf("Work %s/%s annotations %v", obj.Namespace, obj.Name, obj.Annotations)
	}
	back, _, err := convert.WorkToModel(obj)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ToModel(FromModel(work with envelopes))", m, back)

	obj.Annotations[v1beta1.WorkManifestEnvelopesAnnotation] = `[null]`
	if _, _, err := convert.WorkToModel(obj); err == nil || !strings.Contains(err.Error(), "must list one envelope (or null) per manifest, 2 of them") {
		t.Errorf("short envelope list: error %v", err)
	}
	obj.Namespace = "default"
	if _, _, err := convert.WorkToModel(obj); err == nil || !strings.Contains(err.Error(), "not in a member's reserved namespace") {
		t.Errorf("work outside a member namespace: error %v", err)
	}
	obj.Namespace = "fleet-member-member-1"
	obj.Spec.Workload.Manifests[0].Raw = json.RawMessage(`[1]`)
	if _, _, err := convert.WorkToModel(obj); err == nil || !strings.Contains(err.Error(), "spec.workload.manifests[0]: not a JSON object") {
		t.Errorf("bad manifest: error %v", err)
	}
}
