package hub

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// TestStoredForm pins what counts as a change worth a write: what the API server would
// store differently, and nothing else (an unchanged decision that wrote would wake the
// controllers that watch the kind, and they would write again).
func TestStoredForm(t *testing.T) {
	at := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	binding := func(change func(*v1beta1.ClusterResourceBinding)) *v1beta1.ClusterResourceBinding {
		b := &v1beta1.ClusterResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"l": "v"}, ResourceVersion: "7"},
			Spec:       v1beta1.ResourceBindingSpec{TargetCluster: "m1", ResourceSnapshotName: "s-0"},
			Status: v1beta1.ResourceBindingStatus{Conditions: []metav1.Condition{
				{Type: "Bound", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.NewTime(at)}}},
		}
		change(b)
		return b
	}
	work := func(raw string) *v1beta1.Work {
		return &v1beta1.Work{Spec: v1beta1.WorkSpec{Workload: v1beta1.WorkloadTemplate{
			Manifests: []v1beta1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}}}}}
	}
	tests := []struct {
		name                 string
		a, b                 client.Object
		wantSpec, wantStatus bool
	}{
		{"identical", binding(func(*v1beta1.ClusterResourceBinding) {}), binding(func(*v1beta1.ClusterResourceBinding) {}), true, true},
		{"another resourceVersion",
			binding(func(b *v1beta1.ClusterResourceBinding) { b.ResourceVersion = "9" }), binding(func(*v1beta1.ClusterResourceBinding) {}), true, true},
		{"a time within the same second (JSON keeps seconds)",
			binding(func(b *v1beta1.ClusterResourceBinding) {
				b.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(999 * time.Millisecond))
			}), binding(func(*v1beta1.ClusterResourceBinding) {}), true, true},
		{"a time a second later",
			binding(func(b *v1beta1.ClusterResourceBinding) {
				b.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(time.Second))
			}),
			binding(func(*v1beta1.ClusterResourceBinding) {}), true, false},
		{"empty and absent labels",
			binding(func(b *v1beta1.ClusterResourceBinding) { b.Labels = map[string]string{} }),
			binding(func(b *v1beta1.ClusterResourceBinding) { b.Labels = nil }), true, true},
		{"a label changed",
			binding(func(b *v1beta1.ClusterResourceBinding) { b.Labels["l"] = "w" }), binding(func(*v1beta1.ClusterResourceBinding) {}), false, true},
		{"a finalizer added",
			binding(func(b *v1beta1.ClusterResourceBinding) { b.Finalizers = []string{"f"} }), binding(func(*v1beta1.ClusterResourceBinding) {}), false, true},
		{"the spec changed",
			binding(func(b *v1beta1.ClusterResourceBinding) { b.Spec.ResourceSnapshotName = "s-1" }), binding(func(*v1beta1.ClusterResourceBinding) {}), false, true},
		{"a condition added",
			binding(func(b *v1beta1.ClusterResourceBinding) {
				b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: "Applied", Status: metav1.ConditionTrue})
			}), binding(func(*v1beta1.ClusterResourceBinding) {}), true, false},
		{"a manifest spelled differently", work(`{"kind":"ConfigMap","data":{"a":"1"}}`), work(`{ "data": {"a": "1"}, "kind": "ConfigMap" }`), true, true},
		{"a manifest changed", work(`{"kind":"ConfigMap","data":{"a":"1"}}`), work(`{"kind":"ConfigMap","data":{"a":"2"}}`), false, true},
	}
	for _, tt := range tests {
		if got := sameSpec(tt.a, tt.b); got != tt.wantSpec {
			t.Errorf("%s: sameSpec = %v, want %v", tt.name, got, tt.wantSpec)
		}
		if got := sameStatus(tt.a, tt.b); got != tt.wantStatus {
			t.Errorf("%s: sameStatus = %v, want %v", tt.name, got, tt.wantStatus)
		}
	}
}

// TestStatusField finds the status subresource's field, and none on a kind without one.
func TestStatusField(t *testing.T) {
	if _, ok := statusField(&v1beta1.ClusterResourceBinding{}); !ok {
		t.Errorf("statusField(ClusterResourceBinding) found none, want its Status")
	}
	if _, ok := statusField(&v1beta1.ClusterResourcePlacementStatus{}); ok {
		t.Errorf("statusField(ClusterResourcePlacementStatus) found one, want none (it has no status subresource)")
	}
}
