package runner

import (
	"testing"

	"github.com/fleetsim/fleetsim/scenarios"
)

// TestLargeGroupReport: a group of 5,000 members joins in one timeline entry naming
// MaxSubjects of them and counting the rest; the report lists every member.
func TestLargeGroupReport(t *testing.T) {
	sc, err := scenarios.Parse("big.yaml", []byte("name: big\nduration: 2m\nmembers:\n  - name: m{1..5000}\nexpect:\n  - member: {name: m5000, condition: {type: Joined, status: \"True\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || len(rep.Members) != 5000 {
		t.Fatalf("passed %v with %d members, want a pass with 5000", rep.Passed, len(rep.Members))
	}
	found := false
	for _, e := range rep.Timeline {
		if e.Kind == "member-created" {
			found = true
			if len(e.Subjects) != MaxSubjects || e.MoreSubjects != 5000-MaxSubjects {
				t.Errorf("member-created names %d subjects and counts %d more; want %d and %d", len(e.Subjects), e.MoreSubjects, MaxSubjects, 5000-MaxSubjects)
			}
		}
	}
	if !found {
		t.Errorf("no member-created entry in the timeline")
	}
}
