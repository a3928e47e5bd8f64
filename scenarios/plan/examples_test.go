package plan

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// required are the metrics each example plan exists to measure.
var required = map[string][]string{
	"rollout-fleet-size":    {PlacementAvailable, ClusterAvailable, RolloutDuration},
	"rollout-strategy":      {RolloutDuration},
	"heartbeat-hub-load":    {MemberDetect, PlacementAvailable},
	"hub-members":           {PlacementAvailable, ClusterScheduled},
	"staged-run-writes":     {StagedRunDuration},
	"kubefleet-scale":       {PlacementAvailable, StagedRunDuration, HubResync},
	"machine-loss":          {MemberMoved, MemberDetect},
	"kubefleet-scale-calls": {PlacementAvailable, StagedRunDuration, HubResync},
}

// TestExamplePlans runs every plan of plans/ at the reduced size of its small: key and
// checks the report: every point measured over every seed, the plan's metrics present with
// quantiles in order inside their intervals, load figures, a summary, figures of a sensible
// size; and that the report checked in under reports/plan/ is there, images under 150 KB.
func TestExamplePlans(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example plans: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			full, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if full.Question == "" {
				t.Error("the plan asks no question")
			}
			pl, err := LoadWith(f, ParseOptions{Small: true})
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
			if len(rep.Points) != len(pl.Points()) {
				t.Fatalf("%d points reported, want %d", len(rep.Points), len(pl.Points()))
			}
			req, ok := required[name]
			if !ok {
				t.Fatalf("add %s to required: what does it measure?", name)
			}
			for _, p := range rep.Points {
				if p.Runs != pl.Repetitions {
					t.Errorf("%s: %d runs, want %d", p.Label, p.Runs, pl.Repetitions)
				}
				for _, m := range req {
					st, ok := p.Metrics[m]
					if !ok {
						t.Errorf("%s: no %s", p.Label, m)
						continue
					}
					// Each quantile is given exactly when there are samples enough for it, and
					// those given are within their intervals and in order.
					last := 0.0
					for _, q := range []struct {
						e *Estimate
						p float64
					}{{st.P50, 0.5}, {st.P90, 0.9}, {st.P99, 0.99}} {
						if (q.e != nil) != (st.Samples >= MinSamples(q.p)) {
							t.Errorf("%s %s: %d samples, and the %g quantile given: %v", p.Label, m, st.Samples, q.p, q.e != nil)
						}
						if e := q.e; e != nil {
							if !(e.Lo <= e.Value && e.Value <= e.Hi) || math.IsNaN(e.Value) || e.Value < 0 || e.Value < last || e.Value > st.Max {
								t.Errorf("%s %s: estimate %+v out of its interval or order", p.Label, m, *e)
							}
							last = e.Value
						}
					}
				}
				if !(p.Load.WritesPerSecond.Value > 0 && p.Load.DecisionsPerSecond.Value > 0) || p.Load.PeakObjects["MemberCluster"] == 0 {
					t.Errorf("%s: load %+v", p.Label, p.Load)
				}
			}
			// A small run says so first, then gives its question scaled (small.question)
			// or the full plan's, marked as not answered.
			if len(rep.Summary) < 4 || !strings.HasPrefix(rep.Summary[0], "SMALL RUN") || !rep.Small ||
				!(strings.Contains(rep.Summary[1], "Question (scaled to the small run): "+pl.Question) && pl.SmallQuestion ||
					strings.Contains(rep.Summary[1], "not answered by this small run): "+full.Question) && !pl.SmallQuestion) {
				t.Errorf("summary: %q", rep.Summary)
			}
			figs, err := rep.Figures()
			if err != nil {
				t.Fatal(err)
			}
			if len(figs) < 3 {
				t.Errorf("%d figures", len(figs))
			}
			for _, fg := range figs {
				if !bytes.HasPrefix(fg.PNG, []byte("\x89PNG")) || len(fg.PNG) > 150<<10 {
					t.Errorf("figure %s: %d bytes, PNG %v", fg.Name, len(fg.PNG), bytes.HasPrefix(fg.PNG, []byte("\x89PNG")))
				}
			}
			var md bytes.Buffer
			if err := rep.WriteMarkdown(&md, figs); err != nil || !strings.Contains(md.String(), "## Summary") {
				t.Errorf("markdown: %v", err)
			}
			// The checked-in report of the full plan.
			dir := filepath.Join("..", "..", "reports", "plan", name)
			if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
				t.Errorf("no checked-in report: %v", err)
			}
			imgs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
			for _, img := range imgs {
				if st, err := os.Stat(img); err != nil || st.Size() > 150<<10 {
					t.Errorf("%s: %v, larger than 150 KB", img, err)
				}
			}
		})
	}
}
