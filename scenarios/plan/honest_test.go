package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
)

// TestUnusedParameters: a parameter or swept axis the template never reads is refused at
// its line; hub.* axes (read by the hub model) and parameters read through $ or index are
// not.
func TestUnusedParameters(t *testing.T) {
	const tmpl = "scenario: |\n  name: s\n  duration: 1m\n  members:\n    - name: m-{1..{{.members}}}\n"
	for _, tc := range []struct {
		name, text string
		want       *scenarios.Error
	}{
		{"an unused parameter", "name: p\nparameters:\n  members: 2\n  placements: 3\n" + tmpl,
			&scenarios.Error{Line: 4, Field: "parameters.placements", Reason: "the scenario template never reads it ({{.placements}}): it would change nothing; remove it or use it"}},
		{"an unused swept axis", "name: p\nparameters:\n  members: 2\nsweep:\n  wait: [1s, 2s]\n" + tmpl,
			&scenarios.Error{Line: 5, Field: "sweep.wait", Reason: "the scenario template never reads it ({{.wait}}): sweeping it would change nothing; remove it or use it"}},
		{"a hub axis", "name: p\nparameters:\n  members: 2\nsweep:\n  hub.qps: [10, 20]\n" + tmpl, nil},
		{"read through $ and index", "name: p\nparameters:\n  members: 2\n  a: 1\n  b: 2\nscenario: |\n  name: s\n  duration: 1m\n  # {{$.a}} {{index . \"b\"}}\n  members:\n    - name: m-{1..{{.members}}}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.text))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *scenarios.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse = %v, want a *scenarios.Error", err)
			}
			tc.want.Path = "p.yaml"
			if diff := cmp.Diff(tc.want, se); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHonestReport: a --small report says it is one and gives the question scaled (or
// marks it unanswered); a quantile needs 1/(1−q) samples; no growth law or knee from fewer
// than 5 points, and the summary says so; when the seeds change nothing, a warning.
func TestHonestReport(t *testing.T) {
	const plan = `name: honest
question: How long for 500 members?
repetitions: 3
sweep:
  members: [1, 2, 3]
small:
  sweep: {members: [1, 2]}
  repetitions: 2
  %s
scenario: |
  name: s
  duration: 3m
  members:
    - name: m-{1..{{.members}}}
  timeline:
    - at: 10s
      apply: |
        apiVersion: v1
        kind: Namespace
        metadata: {name: app}
        ---
        apiVersion: placement.kubernetes-fleet.io/v1beta1
        kind: ClusterResourcePlacement
        metadata: {name: app}
        spec:
          resourceSelectors: [{group: "", version: v1, kind: Namespace, name: app}]
`
	build := func(t *testing.T, extra string, small bool) *Report {
		t.Helper()
		pl, err := ParseWith("honest.yaml", []byte(strings.Replace(plan, "%s", extra, 1)), ParseOptions{Small: small})
		if err != nil {
			t.Fatal(err)
		}
		res, err := pl.Execute(Options{Parallel: 2})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Build(pl, res)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	scaled := build(t, "question: How long for 2 members?", true)
	unscaled := build(t, "", true)
	full := build(t, "", false)
	for _, tc := range []struct {
		name string
		rep  *Report
		want []string // the summary's first lines
	}{
		{"small, question scaled", scaled, []string{
			"SMALL RUN (--small, a smoke test): the sweep and repetitions of the plan's small: key, not its own; these numbers do not answer the plan's question at full size.",
			"Question (scaled to the small run): How long for 2 members?"}},
		{"small, question not scaled", unscaled, []string{
			"SMALL RUN (--small, a smoke test): the sweep and repetitions of the plan's small: key, not its own; these numbers do not answer the plan's question at full size.",
			"Question (asked of the full plan, not answered by this small run): How long for 500 members?"}},
		{"full", full, []string{"Question: How long for 500 members?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.rep.Summary[:len(tc.want)]); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			var b strings.Builder
			if err := tc.rep.WriteHTML(&b, nil); err != nil {
				t.Fatal(err)
			}
			if small := strings.Contains(b.String(), "<title>Capacity plan: honest (small run: a smoke test, not the full plan)</title>"); small != tc.rep.Small {
				t.Errorf("small %v, HTML title says small: %v", tc.rep.Small, small)
			}
		})
	}
	// No network model nor faults: the seeds change nothing, and the report says so.
	if len(full.Warnings) != 1 || !strings.Contains(full.Warnings[0], "the 3 repetitions of every point are the same run") || !strings.Contains(strings.Join(full.Summary, "\n"), "WARNING: the 3 repetitions") {
		t.Errorf("warnings %q; summary %q", full.Warnings, full.Summary)
	}
	// 3 points: no law, no knee, and the summary says why.
	if len(full.Fits) != 0 || len(full.Knees) != 0 || !strings.Contains(strings.Join(full.Summary, "\n"), "3 points against members: too few for a growth law or a knee (they need 5).") {
		t.Errorf("fits %v, knees %v, summary %q", full.Fits, full.Knees, full.Summary)
	}
	// One placement per run: 3 samples of placement.available per point, enough for a
	// median only.
	st := full.Points[0].Metrics[PlacementAvailable]
	if st.Samples != 3 || st.P50 == nil || st.P90 != nil || st.P99 != nil {
		t.Errorf("placement.available at 1 member: %d samples, p50 %v, p90 %v, p99 %v; want 3 samples and a median only", st.Samples, st.P50, st.P90, st.P99)
	}
	if diff := cmp.Diff([]int{2, 10, 100}, []int{MinSamples(0.5), MinSamples(0.9), MinSamples(0.99)}); diff != "" {
		t.Errorf("MinSamples (-want +got):\n%s", diff)
	}
}
