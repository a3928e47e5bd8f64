package hub

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1beta1 "github.com/fleetsim/fleetsim/prod/apis/placement/v1beta1"
)

// TestExpectationsScopedWait pins rule 1 of consistency.go: a decision waits for the
// writes of its own placement, of no placement and of objects named like its key, and
// not for another placement's writes; membership waits for every write.
func TestExpectationsScopedWait(t *testing.T) {
	gvk := func(kind string) schema.GroupVersionKind { return v1beta1.GroupVersion.WithKind(kind) }
	binding := func(name, crp string) *v1beta1.ClusterResourceBinding {
		return &v1beta1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{v1beta1.CRPTrackingLabel: crp}}}
	}
	// Three writes the cache has not shown: a binding of placement a, a binding of
	// placement b, and a placement c (which belongs to itself).
	writes := []struct {
		kind string
		obj  interface {
			GetName() string
			GetLabels() map[string]string
		}
	}{
		{"ClusterResourceBinding", binding("a-east", "a")},
		{"ClusterResourceBinding", binding("b-east", "b")},
		{"ClusterResourcePlacement", &v1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: "c"}}},
	}
	tests := []struct {
		name  string
		which waitFor
		want  []string // the writes waited for
	}{
		{"placement a", writesOf("a", "a"), []string{"a-east"}},
		{"binding decision of b", writesOf("b", "b-east"), []string{"b-east"}},
		{"before the lock, key b-east", writesOf("", "b-east"), []string{"b-east"}},
		{"placement c", writesOf("c", "c"), []string{"c"}},
		{"placement d", writesOf("d", "d"), nil},
		{"membership", everyWrite, []string{"a-east", "b-east", "c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newExpectations()
			for _, w := range writes {
				k := objectKey{gvk: gvk(w.kind), name: w.obj.GetName()}
				e.tracked[k.gvk] = true
				p := w.obj.GetLabels()[v1beta1.CRPTrackingLabel]
				if w.kind == "ClusterResourcePlacement" {
					p = w.obj.GetName()
				}
				e.expect(k, 10, p)
			}
			var got []string
			for k, p := range e.pending {
				if tc.which(k, p.placement) {
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
					Name: w.obj.GetName(), ResourceVersion: "10"}}, false)
			}
			if !e.wait(ctx, tc.which) {
				t.Errorf("wait once the cache showed every write = false, want true")
			}
		})
	}
}
