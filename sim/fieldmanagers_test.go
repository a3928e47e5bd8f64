package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// TestMemberEditNeedsItsNamespace: an edit that creates a namespaced object on a member is
// refused while the member has no such namespace, as a real API server refuses it, so a
// scenario the simulator plays can be played on real members too.
func TestMemberEditNeedsItsNamespace(t *testing.T) {
	s := newSim(t, Config{Seed: 1})
	addMembers(t, s, "m1")
	obj := func(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }
	err := s.EditMemberObject("m1", obj(cm(map[string]any{"color": "red"})))
	if err == nil || !strings.Contains(err.Error(), `namespace "n" does not exist on the member`) {
		t.Fatalf("creating a ConfigMap in a missing namespace: %v; want a refusal naming the namespace", err)
	}
	if got := s.MemberObject("m1", "", "ConfigMap", "n", "s"); got != nil {
		t.Fatalf("the refused ConfigMap is on the member: %v", got.Object)
	}
	ns := obj(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n"}})
	if err := s.EditMemberObject("m1", ns); err != nil {
		t.Fatalf("creating the namespace: %v", err)
	}
	if err := s.EditMemberObject("m1", obj(cm(map[string]any{"color": "red"}))); err != nil {
		t.Fatalf("creating the ConfigMap once its namespace exists: %v", err)
	}
	if got := s.MemberObject("m1", "", "ConfigMap", "n", "s"); got == nil {
		t.Fatal("the ConfigMap is not on the member")
	}
}
