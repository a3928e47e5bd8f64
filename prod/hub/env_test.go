package hub

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestByKind pins how a decision's records become events: one per kind, in the order the
// kinds came, with a count and every note up to the events API's limit.
func TestByKind(t *testing.T) {
	long := strings.Repeat("x", 600)
	for _, tc := range []struct {
		name string
		recs []record
		want []record
	}{
		{"one record keeps its note", []record{{kind: "namespace-created", subject: "east", note: "fleet-member-east: with Role"}},
			[]record{{kind: "namespace-created", subject: "east", note: "fleet-member-east: with Role"}}},
		{"same kind folds, kinds keep their order",
			[]record{{kind: "binding-scheduled", subject: "p-a", note: "p-a: on a"}, {kind: "placement-status", subject: "p", note: "p: Scheduled"},
				{kind: "binding-scheduled", subject: "p-b", note: "p-b: on b"}},
			[]record{{kind: "binding-scheduled", subject: "p-a", note: "2: p-a: on a; p-b: on b"}, {kind: "placement-status", subject: "p", note: "p: Scheduled"}}},
		{"a long fold is cut at the limit",
			[]record{{kind: "k", note: long}, {kind: "k", note: long}, {kind: "k", note: long}},
			[]record{{kind: "k", note: ("3: " + long + "; " + long)[:eventNoteLimit-3] + "..."}}},
	} {
		if diff := cmp.Diff(tc.want, byKind(tc.recs), cmp.AllowUnexported(record{})); diff != "" {
			t.Errorf("byKind(%s) (-want +got):\n%s", tc.name, diff)
		}
	}
}
