package whatif

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/rollout"
)

// outline is what a test compares of a placement's report: cluster names only, so reasons
// and diffs are checked separately.
type outline struct {
	Created, Deleted      bool
	Added, Kept, Removed  []string
	ManifestsChangeOn     []string
	PeakUnavailable       int
	Available, BudgetWait bool
}

func outlines(r *Report) map[string]outline {
	out := map[string]outline{}
	names := func(cs []ClusterChange) []string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Cluster)
		}
		return n
	}
	for _, p := range r.Placements {
		o := outline{Created: p.Created, Deleted: p.Deleted, Added: names(p.Added), Kept: names(p.Kept), Removed: names(p.Removed),
			PeakUnavailable: p.Timeline.PeakUnavailable, Available: p.Timeline.Available, BudgetWait: len(p.Timeline.BudgetWaits) > 0}
		for _, m := range p.Manifests {
			o.ManifestsChangeOn = append(o.ManifestsChangeOn, m.Cluster)
		}
		out[p.Name] = o
	}
	return out
}

func preview(t *testing.T, opts Options, changes ...string) *Result {
	t.Helper()
	snap, err := os.ReadFile("testdata/fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cs []*Change
	for _, f := range changes {
		c, err := LoadChange("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	res, err := Preview("testdata/fleet.yaml", snap, cs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPreviewChangeKinds previews each kind of change on testdata/fleet.yaml, whose PickN
// placement web holds alpha and bravo from before the snapshot (an empty fleet would give
// it charlie and delta): the preview starts from the captured bindings.
func TestPreviewChangeKinds(t *testing.T) {
	for _, tc := range []struct {
		change string
		want   map[string]outline
	}{
		{"taint.yaml", map[string]outline{}}, // NoSchedule is IgnoredDuringExecution: nothing moves
		{"leave.yaml", map[string]outline{
			"web":  {Added: []string{"delta"}, Kept: []string{"alpha"}, Removed: []string{"bravo"}, ManifestsChangeOn: []string{"bravo", "delta"}, PeakUnavailable: 1, Available: true},
			"east": {Kept: []string{"alpha"}, Removed: []string{"bravo"}, ManifestsChangeOn: []string{"bravo"}, Available: true},
		}},
		{"placement.yaml", map[string]outline{
			"west": {Created: true, Added: []string{"charlie", "delta"}, ManifestsChangeOn: []string{"charlie", "delta"}, Available: true},
		}},
		{"override.yaml", map[string]outline{
			"web": {Kept: []string{"alpha", "bravo"}, ManifestsChangeOn: []string{"alpha", "bravo"}, PeakUnavailable: 1, Available: true, BudgetWait: true},
		}},
		{"scale.yaml", map[string]outline{
			"web": {Added: []string{"delta"}, Kept: []string{"alpha", "bravo"}, ManifestsChangeOn: []string{"delta"}, Available: true},
		}},
	} {
		t.Run(tc.change, func(t *testing.T) {
			res := preview(t, Options{MaxUnavailable: -1}, tc.change)
			if d := cmp.Diff(tc.want, outlines(res.Report)); d != "" {
				t.Errorf("placements (-want +got):\n%s", d)
			}
			if len(res.Report.Warnings) > 0 || !res.Report.Safe {
				t.Errorf("warnings %v, safe %v", res.Report.Warnings, res.Report.Safe)
			}
		})
	}
}

// TestPreviewReasonsAndDiff: the report carries the scheduler's reason for each cluster
// and the manifests after overrides as a diff against what the cluster holds now.
func TestPreviewReasonsAndDiff(t *testing.T) {
	r := preview(t, Options{MaxUnavailable: -1}, "override.yaml", "leave.yaml").Report
	var web *PlacementReport
	for i := range r.Placements {
		if r.Placements[i].Name == "web" {
			web = &r.Placements[i]
		}
	}
	if web == nil {
		t.Fatalf("no report for web: %+v", r.Placements)
	}
	got := map[string]string{}
	for _, c := range append(append(web.Added, web.Kept...), web.Removed...) {
		got[c.Cluster] = c.Reason
	}
	want := map[string]string{
		"alpha": "picked before the snapshot was taken",
		"bravo": "unscheduled: cluster has left the fleet",
		"delta": "picked by scheduling policy",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
	for _, m := range web.Manifests {
		if m.Cluster != "alpha" {
			continue
		}
		for _, line := range []string{"--- alpha (now)", "+++ alpha (after the change)", "+  labels:", "+    tier: gold"} {
			if !strings.Contains(m.Diff, line+"\n") {
				t.Errorf("alpha's diff lacks %q:\n%s", line, m.Diff)
			}
		}
		return
	}
	t.Errorf("no manifest diff for alpha: %+v", web.Manifests)
}

func TestPreviewBudgets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		change string
		want   []Broken
	}{
		{"max-unavailable 1 holds", Options{MaxUnavailable: 1}, "override.yaml", []Broken{}},
		{"max-unavailable 0 is broken", Options{MaxUnavailable: 0}, "override.yaml", []Broken{{Name: "max-unavailable", Detail: "placement web has 1 cluster(s) unavailable at once, more than 0"}}},
		{"must-keep a cluster that leaves", Options{MaxUnavailable: -1, MustKeep: []string{"bravo", "charlie"}}, "leave.yaml", []Broken{
			{Name: "must-keep", Detail: "placement east loses cluster bravo"}, {Name: "must-keep", Detail: "placement web loses cluster bravo"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := preview(t, tc.opts, tc.change).Report
			if d := cmp.Diff(tc.want, r.Budgets); d != "" {
				t.Errorf("budgets (-want +got):\n%s", d)
			}
			if r.Safe != (len(tc.want) == 0) {
				t.Errorf("safe = %v", r.Safe)
			}
		})
	}
}

func TestPreviewBadInput(t *testing.T) {
	snap, err := os.ReadFile("testdata/fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, change, want string }{
		{"unknown member", "changes:\n  - taint: {member: zulu, key: k}\n", `change.yaml:2: changes[0].taint.member: unknown member "zulu"`},
		{"unknown step", "changes:\n  - paint: {member: alpha}\n", `change.yaml:2: changes[0]: unknown field "paint"`},
		{"bad offset", "changes:\n  - at: soon\n    taint: {member: alpha, key: k}\n", `change.yaml:2: changes[0].at: "soon" is not a duration`},
		{"invalid manifest", "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\nmetadata:\n  name: Bad_Name\n", `change.yaml:1: changes[0].apply`},
		{"empty", "\n", "change.yaml: the change file is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseChange("change.yaml", []byte(tc.change))
			if err == nil {
				_, err = Preview("testdata/fleet.yaml", snap, []*Change{c}, Options{MaxUnavailable: -1})
				var bad *BadInputError
				if err != nil && !errors.As(err, &bad) {
					t.Errorf("error %v is not a BadInputError", err)
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestPreviewStagedRunStarted: starting a staged update run binds the placement's
// Scheduled bindings stage by stage; the preview shows them rolled out (Bound, manifests
// delivered) and the run's waits in the timeline.
func TestPreviewStagedRunStarted(t *testing.T) {
	snap, err := os.ReadFile("testdata/staged.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadChange("testdata/run.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Preview("testdata/staged.yaml", snap, []*Change{c}, Options{MaxUnavailable: -1})
	if err != nil {
		t.Fatal(err)
	}
	states := func(st State) map[string]string {
		out := map[string]string{}
		for _, cl := range st.Clusters("app") {
			out[cl] = string(st.Placements["app"].Clusters[cl].Binding)
		}
		return out
	}
	if d := cmp.Diff(map[string]string{"canary-1": "Scheduled", "staging-1": "Scheduled"}, states(res.Before)); d != "" {
		t.Errorf("before (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"canary-1": "Bound", "staging-1": "Bound"}, states(res.After)); d != "" {
		t.Errorf("after (-want +got):\n%s", d)
	}
	want := map[string]outline{"app": {Kept: []string{"canary-1", "staging-1"}, ManifestsChangeOn: []string{"canary-1", "staging-1"}, Available: true}}
	if d := cmp.Diff(want, outlines(res.Report)); d != "" {
		t.Errorf("placements (-want +got):\n%s", d)
	}
}

// TestPreviewReportsBrokenInvariant: with the rollout's planted bug (it lets one more
// cluster be unavailable than maxUnavailable allows), the override's rollout breaks
// rolloutBudgets, and the preview says so and is not safe.
func TestPreviewReportsBrokenInvariant(t *testing.T) {
	defer rollout.PlantBugForTest(1)()
	r := preview(t, Options{MaxUnavailable: -1}, "override.yaml").Report
	if r.Safe || len(r.Invariants) == 0 {
		t.Fatalf("safe %v, invariants %+v", r.Safe, r.Invariants)
	}
	if got := r.Invariants[0]; got.Name != "rolloutBudgets" || !strings.HasPrefix(got.At, "+") {
		t.Errorf("first broken invariant %+v, want rolloutBudgets after the change", got)
	}
}
