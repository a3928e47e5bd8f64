package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func cm(data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "s", "namespace": "n", "labels": map[string]any{"a": "1"}}, "data": data}
}

// TestFieldOwners: who owns what after creates, edits and applies, and when a server-side
// apply conflicts, as a member's API server decides it.
func TestFieldOwners(t *testing.T) {
	f := fieldOwners{}
	f.apply("k", nil, cm(map[string]any{"color": "blue", "size": "s"}), "fleet")
	f.update("k", cm(map[string]any{"color": "blue", "size": "s"}), cm(map[string]any{"color": "red", "size": "s", "extra": "x"}), "kubectl-edit")
	want := map[string][]string{".data.color": {"kubectl-edit"}, ".data.size": {"fleet"}, ".data.extra": {"kubectl-edit"}, ".metadata.labels.a": {"fleet"}}
	if diff := cmp.Diff(want, f["k"]); diff != "" {
		t.Fatalf("owners after an edit (-want +got):\n%s", diff)
	}
	live := cm(map[string]any{"color": "red", "size": "s", "extra": "x"})
	cases := []struct {
		name     string
		manifest map[string]any
		force    bool
		conflict string
	}{
		{"a field another manager owns, another value", cm(map[string]any{"color": "blue", "size": "s"}), false, `Apply failed with 1 conflict: conflict with "kubectl-edit": .data.color`},
		{"forced", cm(map[string]any{"color": "blue", "size": "s"}), true, ""},
		{"the same value is shared, not a conflict", cm(map[string]any{"color": "red", "size": "m"}), false, ""},
		{"two conflicts", cm(map[string]any{"color": "blue", "extra": "y"}), false, "Apply failed with 2 conflicts: conflict with \"kubectl-edit\": .data.color\nconflict with \"kubectl-edit\": .data.extra"},
	}
	for _, tc := range cases {
		err := f.serverSideApply("k", live, tc.manifest, "fleet", tc.force)
		switch {
		case tc.conflict == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.conflict != "" && (!apierrors.IsConflict(err) || err.Error() != tc.conflict):
			t.Errorf("%s: %v; want the Conflict %q", tc.name, err, tc.conflict)
		}
	}
	f.apply("k", live, cm(map[string]any{"color": "red", "size": "s"}), "fleet")
	want = map[string][]string{".data.color": {"fleet", "kubectl-edit"}, ".data.size": {"fleet"}, ".data.extra": {"kubectl-edit"}, ".metadata.labels.a": {"fleet"}}
	if diff := cmp.Diff(want, f["k"]); diff != "" {
		t.Errorf("owners after an apply of the same value (-want +got):\n%s", diff)
	}
}
