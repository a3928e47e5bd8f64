package scenarios

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantError is where Parse must report a problem, and a substring of its reason.
type wantError struct {
	Line   int
	Field  string
	Reason string
}

// parseError parses src and returns its *Error as a wantError whose Reason is want.Reason
// when the reason contains it (so cmp.Diff shows the whole reason otherwise).
func parseError(t *testing.T, src string, want wantError) wantError {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src))
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("Parse = %+v, %v; want an *Error\n%s", s, err, src)
	}
	got := wantError{Line: perr.Line, Field: perr.Field, Reason: perr.Reason}
	if strings.Contains(got.Reason, want.Reason) {
		got.Reason = want.Reason
	}
	return got
}

// TestMemberStepsTheRunRefuses: steps that `fleetsim run` would stop at (exit 2) because of
// what the file says are refused by Parse, so by `fleetsim validate`, with line and field: a
// memberEdit object holding two YAML documents (the second was dropped without a word), a
// memberEdit on a Machine (it has no Kubernetes objects), and a step on a member before its
// joinAt (the simulator adds it then).
func TestMemberStepsTheRunRefuses(t *testing.T) {
	const head = "name: t\nduration: 1h\nmembers:\n  - name: c1\n  - name: db\n    kind: Machine\n  - name: late\n    joinAt: 30m\ntimeline:\n" // lines 1-9
	const cm = `"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n"`
	for _, tc := range []struct {
		name string
		step string // from line 10
		want wantError
	}{
		{"two documents in a literal block", "  - at: 1m\n    memberEdit:\n      member: c1\n      object: |\n        apiVersion: v1\n        kind: ConfigMap\n        metadata: {name: a, namespace: default}\n        ---\n        apiVersion: v1\n        kind: ConfigMap\n        metadata: {name: b, namespace: default}\n",
			wantError{18, "timeline[0].memberEdit.object", "a second YAML document starts at line 5 of the object; memberEdit edits one object"}},
		{"two documents in a quoted string", "  - at: 1m\n    memberEdit: {member: c1, object: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: a}\\n---\\nkind: Secret\\n\"}\n",
			wantError{11, "timeline[0].memberEdit.object", "a second YAML document starts at line 5 of the object"}},
		{"a broken second document", "  - at: 1m\n    memberEdit:\n      member: c1\n      object: |\n        apiVersion: v1\n        kind: ConfigMap\n        metadata: {name: a}\n        ---\n        [unclosed\n",
			wantError{18, "timeline[0].memberEdit.object", "invalid YAML"}},
		{"memberEdit on a Machine", "  - at: 1m\n    memberEdit: {member: db, object: " + cm + "}\n",
			wantError{11, "timeline[0].memberEdit.member", `member "db" is a Machine (members[1], line 5): memberEdit edits Kubernetes objects on a cluster`}},
		{"a step before the member joins", "  - at: 10m\n    fail: {member: late}\n",
			wantError{11, "timeline[0].fail.member", `member "late" does not exist yet at 10m0s: it joins at 30m0s (members[2], line 7)`}},
		{"a memberEdit before the member joins", "  - at: 1m\n    heal: {member: c1}\n  - at: 29m59s\n    memberEdit: {member: late, object: " + cm + "}\n",
			wantError{13, "timeline[1].memberEdit.member", `member "late" does not exist yet at 29m59s`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, parseError(t, head+tc.step, tc.want)); diff != "" {
				t.Errorf("Parse error (-want +got):\n%s", diff)
			}
		})
	}
	// What the run accepts stays valid: one document (a trailing --- is an empty second
	// one), a step at the very joinAt, a memberEdit on a cluster.
	for _, step := range []string{
		"  - at: 1m\n    memberEdit: {member: c1, object: " + cm + "}\n",
		"  - at: 1m\n    memberEdit: {member: c1, object: \"---\\napiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: a}\\n---\\n\"}\n",
		"  - at: 30m\n    fail: {member: late}\n  - at: 31m\n    memberEdit: {member: late, object: " + cm + "}\n",
		"  - at: 1m\n    fail: {member: db}\n",
	} {
		if _, err := Parse("t.yaml", []byte(head+step)); err != nil {
			t.Errorf("Parse = %v, want no error\n%s", err, head+step)
		}
	}
}
