package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
)

// TestSeriesPeak: the highest sample in a window, the sample in effect when the window
// opens counting from then, and how long it lasted.
func TestSeriesPeak(t *testing.T) {
	s := series{{0, 0, 4}, {10 * time.Second, 2, 4}, {20 * time.Second, 1, 4}, {30 * time.Second, 3, 8}, {40 * time.Second, 0, 8}}
	type got struct {
		Best   point
		Lasted time.Duration
		OK     bool
	}
	for _, tc := range []struct {
		name        string
		from, until time.Duration
		frac        bool
		want        got
	}{
		{"whole run", 0, time.Minute, false, got{point{30 * time.Second, 3, 8}, 10 * time.Second, true}},
		{"by fraction", 0, time.Minute, true, got{point{10 * time.Second, 2, 4}, 10 * time.Second, true}},
		{"window opening inside a sample", 15 * time.Second, 25 * time.Second, false, got{point{15 * time.Second, 2, 4}, 5 * time.Second, true}},
		{"window after the last change", 45 * time.Second, time.Minute, false, got{point{45 * time.Second, 0, 8}, 15 * time.Second, true}},
		{"window closing inside a sample", 0, 35 * time.Second, false, got{point{30 * time.Second, 3, 8}, 5 * time.Second, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, l, ok := s.peak(tc.from, tc.until, tc.frac)
			if diff := cmp.Diff(tc.want, got{b, l, ok}, cmp.AllowUnexported(point{})); diff != "" {
				t.Errorf("peak (-want +got):\n%s", diff)
			}
		})
	}
	if _, _, ok := (series{}).peak(0, time.Minute, false); ok {
		t.Errorf("an empty series has a peak")
	}
}

// TestRolloutDone: the rollout from an instant is that of the first snapshot taken at or
// after it, or, with none, the placement's being complete at its snapshot.
func TestRolloutDone(t *testing.T) {
	pt := &placementTrack{
		snapshots: []snapshotAt{
			{index: 0, name: "p-0-snapshot", at: time.Minute, doneAt: 2 * time.Minute, done: true},
			{index: 1, name: "p-1-snapshot", at: 10 * time.Minute, doneAt: 15 * time.Minute, done: true},
			{index: 2, name: "p-2-snapshot", at: 30 * time.Minute},
		},
		changes: []completeChange{{time.Minute, false}, {2 * time.Minute, true}, {10 * time.Minute, false}, {15 * time.Minute, true}, {30 * time.Minute, false}},
	}
	noNew := &placementTrack{
		snapshots: []snapshotAt{{index: 0, name: "q-0-snapshot", at: time.Minute, doneAt: 2 * time.Minute, done: true}},
		changes:   []completeChange{{time.Minute, false}, {2 * time.Minute, true}, {5 * time.Minute, false}, {7 * time.Minute, true}},
	}
	type result struct {
		Done     time.Duration
		Snapshot string
		OK       bool
		Why      string
	}
	for _, tc := range []struct {
		name string
		pt   *placementTrack
		from time.Duration
		want result
	}{
		{"the snapshot the step takes", pt, 10 * time.Minute, result{15 * time.Minute, "p-1-snapshot", true, ""}},
		{"the next snapshot after from", pt, 5 * time.Minute, result{15 * time.Minute, "p-1-snapshot", true, ""}},
		{"a snapshot never rolled out", pt, 20 * time.Minute, result{0, "p-2-snapshot", false, "the rollout of p-2-snapshot (taken at 30m0s) had not completed by the end"}},
		{"no new snapshot, complete at from", noNew, 3 * time.Minute, result{3 * time.Minute, "q-0-snapshot", true, ""}},
		{"no new snapshot, complete after from", noNew, 6 * time.Minute, result{7 * time.Minute, "q-0-snapshot", true, ""}},
		{"no snapshot at all", &placementTrack{}, 0, result{0, "", false, "the placement took no resource snapshot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, s, ok, why := tc.pt.rolloutDone(tc.from)
			if diff := cmp.Diff(tc.want, result{d, s, ok, why}); diff != "" {
				t.Errorf("rolloutDone(%s) (-want +got):\n%s", tc.from, diff)
			}
		})
	}
}

// outage is a small region outage: 8 clusters in regions a and b, a PickAll placement
// with maxUnavailable 25 % (2 clusters), an update at 10m while region a is cut off for
// 10 minutes.
const outage = `name: outage
duration: 40m
members:
  - name: a-{1..4}
    labels: {region: a}
  - name: b-{1..4}
    labels: {region: b}
timeline:
  - at: 1m
    apply: |
      apiVersion: v1
      kind: Namespace
      metadata: {name: app}
      ---
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: app, namespace: app}
      data: {version: "0"}
      ---
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata: {name: app}
      spec:
        resourceSelectors: [{group: "", kind: Namespace, version: v1, name: app}]
        policy: {placementType: PickAll}
        strategy: {rollingUpdate: {maxUnavailable: 25%}}
  - at: 10m
    name: update
    apply: |
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: app, namespace: app}
      data: {version: "1"}
  - at: 10m
    partition: {selector: region=a, for: 10m}
expect:
  - rollout: {placement: app, from: update, within: 15m}
  - rollout: {placement: app, from: update, within: 5m}
  - peakUnavailable: {placement: app, atMost: 25%}
  - peakUnavailable: {placement: app, atMost: 1}
  - peakUnavailable: {selector: region=b, atMost: 0, from: 10m30s, until: 20m}
  - unhealthy: {members: a-*, atMost: 10m}
  - unhealthy: {members: b-*, atMost: 0s}
`

// TestRegionOutageMeasures: the measures of a region outage during a rollout, checked
// against what the rollout must do: the cut-off region's updated clusters cannot report
// available, so they hold the whole budget until the partition heals and the rollout ends
// only after that; the hub sees the region unhealthy once heartbeats time out (5 min), so
// for less than the partition's 10 minutes.
func TestRegionOutageMeasures(t *testing.T) {
	sc, err := scenarios.Parse("outage.yaml", []byte(outage))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []string
	for _, e := range rep.Expectations {
		verdicts = append(verdicts, fmt.Sprintf("line %d %v", e.Line, e.Passed))
	}
	// Lines 37-43: within 15m passes, within 5m cannot (the partition lasts 10m), the
	// budget of 2 holds and is used (so at most 1 fails), region b stays available while a
	// is cut off, a is unhealthy for less than 10m and b never.
	want := []string{"line 37 true", "line 38 false", "line 39 true", "line 40 false", "line 41 true", "line 42 true", "line 43 true"}
	if diff := cmp.Diff(want, verdicts); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s\n%+v", diff, rep.Expectations)
	}
	m := rep.Measures
	if m == nil {
		t.Fatal("no measures")
	}
	var update *RolloutMeasure
	for i, r := range m.Rollouts {
		if r.Snapshot == "app-1-snapshot" {
			update = &m.Rollouts[i]
		}
	}
	if update == nil || update.Completed == nil || update.Started < 600 || *update.Completed < 1200 || *update.Completed > 1260 {
		t.Errorf("the update's rollout = %+v; want taken at 10m or after and completed within a minute after the partition heals at 20m", update)
	}
	peaks := map[string]PeakMeasure{}
	for _, p := range m.Peaks {
		peaks[p.Scope] = p
	}
	for scope, want := range map[string][2]int{"placement app": {2, 8}, "fleet": {2, 8}, "members a-1..a-4": {2, 4}} {
		if got := peaks[scope]; got.Peak != want[0] || got.Of != want[1] {
			t.Errorf("peak in %s = %d of %d, want %d of %d (the whole budget)", scope, got.Peak, got.Of, want[0], want[1])
		}
	}
	groups := map[string]GroupMeasure{}
	for _, g := range m.Groups {
		groups[g.Group] = g
	}
	a := groups["members a-1..a-4"]
	if a.Members != 4 || a.PeakUnhealthy != 4 || a.Unhealthy < 5*60 || a.Unhealthy > 6*60+10 || a.FirstUnhealthy == nil || *a.FirstUnhealthy < 14*60 {
		t.Errorf("region a health = %+v; want 4 members unhealthy from the heartbeat timeout (5m after the last heartbeat, up to one 60s period before the partition) to their first report after it heals: 5m to 6m10s, from 14m on", a)
	}
	if b := groups["members b-1..b-4"]; b.Unhealthy != 0 || b.PeakUnhealthy != 0 || b.FirstUnhealthy != nil {
		t.Errorf("region b health = %+v; want never unhealthy", b)
	}
	var failed []string
	for _, mem := range rep.Members {
		if mem.Failure != "" {
			failed = append(failed, mem.Name)
		}
	}
	if len(failed) != 0 {
		t.Errorf("members still failed at the end: %v (the partition heals after its 10 minutes)", failed)
	}
}

// TestMeasuresLeaveTheTrace: taking measures reads the simulation only, so the trace hash
// is the same with and without them.
func TestMeasuresLeaveTheTrace(t *testing.T) {
	src := strings.Replace(outage, "expect:\n", "expect: []\nx:\n", 1)
	src = src[:strings.Index(src, "expect: []")] // the same scenario without expectations
	sc, err := scenarios.Parse("outage.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	with, err := Run(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	without, err := Run(sc, Options{NoMeasures: true})
	if err != nil {
		t.Fatal(err)
	}
	if with.TraceHash != without.TraceHash || with.Measures == nil || without.Measures != nil {
		t.Errorf("with measures: hash %s, measures %v; without: hash %s, measures %v", with.TraceHash, with.Measures != nil, without.TraceHash, without.Measures != nil)
	}
}

// TestGroupStepsRun: a group step acts on exactly the members its selector picks when it
// runs, and one that picks none stops the run at its line.
func TestGroupStepsRun(t *testing.T) {
	const head = "name: g\nduration: 10m\nmembers:\n  - name: a-{1..3}\n    labels: {region: a}\n  - name: b-{1..2}\n    labels: {region: b}\ntimeline:\n"
	for _, tc := range []struct {
		name    string
		steps   string
		failed  []string
		tainted []string
		err     string
	}{
		{"fail by selector", "  - at: 1m\n    fail: {selector: region=a, mode: crash}\n", []string{"a-1", "a-2", "a-3"}, nil, ""},
		{"fail by pattern, heal one", "  - at: 1m\n    fail: {member: '*-1'}\n  - at: 2m\n    heal: {member: a-1}\n", []string{"b-1"}, nil, ""},
		{"label then select the new label", "  - at: 1m\n    label: {member: b-*, set: {tier: x}}\n  - at: 2m\n    taint: {selector: tier=x, key: k}\n", nil, []string{"b-1", "b-2"}, ""},
		{"a partition without for stays", "  - at: 1m\n    partition: {member: 'a-[12]'}\n", []string{"a-1", "a-2"}, nil, ""},
		{"a selector picking nobody", "  - at: 1m\n    fail: {selector: region=c}\n", nil, nil, "g.yaml:9: timeline[0].fail: the step at 1m0s failed: selector region=c selects no member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenarios.Parse("g.yaml", []byte(head+tc.steps))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(sc, Options{})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Run = %v, want error %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var failed, tainted []string
			for _, m := range rep.Members {
				if m.Failure != "" {
					failed = append(failed, m.Name)
				}
				if len(m.Taints) > 0 {
					tainted = append(tainted, m.Name)
				}
			}
			if diff := cmp.Diff(tc.failed, failed); diff != "" {
				t.Errorf("failed members (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.tainted, tainted); diff != "" {
				t.Errorf("tainted members (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkMeasures: the region outage (200 clusters) with and without the measures, for
// their cost: go test ./scenarios/runner -run - -bench Measures.
func BenchmarkMeasures(b *testing.B) {
	sc, err := scenarios.Load("../region-outage.yaml")
	if err != nil {
		b.Fatal(err)
	}
	sc.Expect = nil // measured expectations would take the measures anyway
	for _, no := range []bool{false, true} {
		b.Run(fmt.Sprintf("noMeasures=%v", no), func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(sc, Options{NoMeasures: no}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
