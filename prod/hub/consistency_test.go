package hub

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// TestExpectationsScopedWait pins rule 1 of consistency.go: a decision waits for the
// writes of its own placement, of no placement or member and of objects named like its
// key, and not for another placement's writes; for the writes to members before it first
// reads one; a membership decision for the writes concerning its member.
func TestExpectationsScopedWait(t *testing.T) {
	gvk := func(kind string) schema.GroupVersionKind { return schema.GroupVersionKind{Kind: kind} }
	binding := func(name, crp, target string) *v1beta1.ClusterResourceBinding {
		return &v1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{v1beta1.CRPTrackingLabel: crp}}, Spec: v1beta1.ResourceBindingSpec{TargetCluster: target}}
	}
	// Writes the cache has not shown: bindings of placements a and b on member east, a
	// placement c (which belongs to itself), east's MemberCluster and reserved namespace,
	// and placement a's Work in that namespace.
	writes := []struct {
		kind string
		obj  client.Object
	}{
		{"ClusterResourceBinding", binding("a-east", "a", "east")},
		{"ClusterResourceBinding", binding("b-east", "b", "east")},
		{"ClusterResourcePlacement", &v1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "c"}}},
		{"MemberCluster", &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "east"}}},
		{"Namespace", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-member-east"}}},
		{"Work", &v1beta1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-member-east", Name: "work-a-east",
			Labels: map[string]string{v1beta1.CRPTrackingLabel: "a", v1beta1.ParentBindingLabel: "a-east"}}}},
		{"ClusterResourceBinding", binding("a-west", "a", "west")},
		{"ClusterResourceSnapshot", &v1beta1.ClusterResourceSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "a-0-snapshot",
			Labels: map[string]string{v1beta1.CRPTrackingLabel: "a"}}}},
	}
	tests := []struct {
		name  string
		which waitFor
		want  []string // the writes waited for
	}{
		{"placement a", writesOf("a", "a"), []string{"a-east", "work-a-east", "a-west", "a-0-snapshot"}},
		{"fan-in of a-east: not a-west", writesOfBinding("a", "a-east"), []string{"a-east", "work-a-east", "a-0-snapshot"}},
		{"fan-in of a-west: not a-east or its Work", writesOfBinding("a", "a-west"), []string{"a-west", "a-0-snapshot"}},
		{"binding decision of b", writesOf("b", "b-east"), []string{"b-east"}},
		{"before the lock, key b-east", writesOf("", "b-east"), []string{"b-east"}},
		{"placement c", writesOf("c", "c"), []string{"c"}},
		{"placement d", writesOf("d", "d"), nil},
		{"a decision's first read of a member", memberWrites, []string{"east", "fleet-member-east"}},
		{"membership of east", writesOfMember("east"), []string{"a-east", "b-east", "east", "fleet-member-east", "work-a-east"}},
		{"membership of west", writesOfMember("west"), []string{"a-west"}},
		{"membership of north", writesOfMember("north"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newExpectations()
			for _, w := range writes {
				k := objectKey{gvk: gvk(w.kind), namespace: w.obj.GetNamespace(), name: w.obj.GetName()}
				e.tracked[k.gvk] = true
				e.expect(k, 10, ownerOf(k, w.obj))
			}
			var got []string
			for k, p := range e.pending {
				if tc.which(k, p.owner) {
					got = append(got, k.name)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("writes waited for (-want +got):\n%s", diff)
			}
			// A decision with nothing of its own pending does not wait; one with a
			// pending write does not return before the cache shows it.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if ok := e.wait(ctx, tc.which); ok != (len(tc.want) == 0) {
				t.Errorf("wait on a cache that showed none of the writes = %v, want %v", ok, len(tc.want) == 0)
			}
			for _, w := range writes {
				e.observe(gvk(w.kind), &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
					Namespace: w.obj.GetNamespace(), Name: w.obj.GetName(), ResourceVersion: "10"}}, false)
			}
			if !e.wait(ctx, tc.which) {
				t.Errorf("wait once the cache showed every write = false, want true")
			}
		})
	}
}
