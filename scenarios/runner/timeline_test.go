package runner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
)

// TestTimelineKeepsEveryEvent: the region outage has well over 500 notable events (the
// old cap of the report's timeline); the report keeps them all, to the end of the run,
// and filters narrow them by kind and subject.
func TestTimelineKeepsEveryEvent(t *testing.T) {
	sc, err := scenarios.Load("../region-outage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Timeline); n <= 500 || rep.Timeline[n-1].At.Duration() < 20*time.Minute {
		t.Fatalf("timeline has %d entries, the last at %s; want more than 500, to after the partition heals at 20m", n, rep.Timeline[n-1].At)
	}
	type entry struct {
		At       time.Duration
		Kind     string
		Subjects []string
	}
	for _, tc := range []struct {
		name   string
		filter TimelineFilter
		want   []entry
	}{
		{"failures of eu-00x", TimelineFilter{Kinds: []string{"member-failed"}, Subject: "eu-00?"},
			[]entry{{10 * time.Minute, "member-failed", []string{"eu-001", "eu-002", "eu-003", "eu-004", "eu-005", "eu-006", "eu-007", "eu-008", "eu-009"}}}},
		{"the partition", TimelineFilter{Kinds: []string{"partition-started", "partition-ended"}},
			[]entry{{10 * time.Minute, "partition-started", []string{"selector region=eu"}}, {20 * time.Minute, "partition-ended", []string{"selector region=eu"}}}},
		{"one member healing", TimelineFilter{Kinds: []string{"member-healed", "member-failed"}, Subject: "eu-067"},
			[]entry{{10 * time.Minute, "member-failed", []string{"eu-067"}}, {20 * time.Minute, "member-healed", []string{"eu-067"}}}},
		{"nothing matches", TimelineFilter{Subject: "nobody"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.filter.Check(); err != nil {
				t.Fatal(err)
			}
			r := *rep
			r.FilterTimeline(tc.filter)
			var got []entry
			for _, e := range r.Timeline {
				got = append(got, entry{e.At.Duration(), e.Kind, e.Subjects})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("filtered timeline (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []TimelineFilter{{Kinds: []string{"heartbeat"}}, {Subject: "eu-[0"}} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v passes Check; heartbeats are not timeline events and [0 is no pattern", bad)
		}
	}
}
