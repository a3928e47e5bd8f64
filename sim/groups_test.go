package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPartitionGroup: the selected members, in name order, are partitioned at once and
// healed after the given time; the partition shows as one started and one ended event; an
// empty group is refused.
func TestPartitionGroup(t *testing.T) {
	s := newSim(t, Config{Seed: 1})
	for _, m := range []struct{ name, region string }{{"b-1", "eu"}, {"a-1", "eu"}, {"c-1", "us"}} {
		if err := s.AddMember(MemberSpec{Name: m.name, Labels: map[string]string{"region": m.region}}); err != nil {
			t.Fatal(err)
		}
	}
	eu := s.SelectMembers(func(_ string, labels map[string]string) bool { return labels["region"] == "eu" })
	if diff := cmp.Diff([]string{"a-1", "b-1"}, eu); diff != "" {
		t.Fatalf("selected (-want +got):\n%s", diff)
	}
	type ev struct {
		At            time.Duration
		Kind, Subject string
	}
	var got []ev
	s.Observe(func(at time.Duration, kind, subject, _ string) {
		switch kind {
		case "partition-started", "partition-ended", "member-failed", "member-healed":
			got = append(got, ev{at, kind, subject})
		}
	})
	s.At(time.Minute, "test", func() {
		if err := s.PartitionGroup("selector region=eu", eu, 5*time.Minute); err != nil {
			t.Error(err)
		}
		if err := s.PartitionGroup("selector region=ap", nil, time.Minute); err == nil {
			t.Error("an empty group was partitioned")
		}
	})
	s.At(3*time.Minute, "test", func() {
		for _, n := range eu {
			if st, _ := s.Member(n); st.Failure != string(Partition) {
				t.Errorf("%s failure %q during the partition", n, st.Failure)
			}
		}
		if st, _ := s.Member("c-1"); st.Failure != "" {
			t.Errorf("c-1 (not selected) failure %q", st.Failure)
		}
	})
	if _, err := s.Run(10 * time.Minute); err != nil {
		t.Fatal(err)
	}
	want := []ev{
		{time.Minute, "partition-started", "selector region=eu"},
		{time.Minute, "member-failed", "a-1"}, {time.Minute, "member-failed", "b-1"},
		{6 * time.Minute, "partition-ended", "selector region=eu"},
		{6 * time.Minute, "member-healed", "a-1"}, {6 * time.Minute, "member-healed", "b-1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
