package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/scenarios/plan"
)

type planFlags struct {
	out      string
	format   string
	parallel int
	shard    string
	small    bool
}

func newPlanCommand(stdout, stderr io.Writer) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Run a capacity plan: a scenario swept over parameters and seeds, with statistics and plots",
		Long: `plan runs a plan file: a scenario template (a Go text/template of a scenario file) swept over
parameters (member count, placements, heartbeat period, rollout budgets, staged stages and
waits, failure rates, and the hub's API latency and client rate limits), each point repeated
over seeds. Every run is an ordinary deterministic simulation; runs go in parallel.

Each run measures, from the simulator's events: placement creation to Scheduled, Applied and
Available (per cluster and for the whole placement), rollout and staged-run durations, the
time to detect a lost member and to move its work, hub resync after a restart, the hub's
decisions per second by controller, the API writes per second and objects the hub's API
server would hold, and unavailable members over time.

The report has, per point, p50/p90/p99 with 95% confidence intervals over seeds, growth laws
fitted against the x parameter (linear or power, with R²), knees, a plain-language summary
and plots: --format html (one page, images embedded), md (report.md and PNG files in --out)
or json (statistics and raw results, for machines and "fleetsim plan merge").

--shard I/N runs the I-th of N disjoint slices of the runs (run i belongs to shard i mod N);
without it, JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) selects the shard when
PLAN_SHARDS is set. A shard writes JSON; "fleetsim plan merge" builds the report from all.

The plan format is documented in scenarios/plan/README.md.

Exit codes:
  0  the report was written
  2  invalid plan (file, line and field are named), a run that could not complete, or
     output that could not be written`,
		Example: `  # A plan's report as one HTML page
  fleetsim plan scenarios/plan/rollout-fleet-size.yaml --out /tmp/report

  # Markdown with PNG files, two runs at a time
  fleetsim plan scenarios/plan/heartbeat-hub-load.yaml --format md --out reports/plan/heartbeat --parallel 2

  # Shard 1 of 4 as JSON, then the report from all four
  fleetsim plan scenarios/plan/kubefleet-scale.yaml --shard 1/4 --format json > shard-1.json
  fleetsim plan merge scenarios/plan/kubefleet-scale.yaml shard-*.json --out /tmp/report`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(args[0], f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "directory for the report (report.html, report.md and its images, or report.json); default: html and json to standard output")
	fl.StringVar(&f.format, "format", "html", "report format: html, md or json")
	fl.StringVarP(&f.format, "output", "o", "html", "same as --format")
	fl.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once")
	fl.StringVar(&f.shard, "shard", "", "I/N: run the I-th (from 0) of N disjoint slices of the runs, and write JSON")
	fl.BoolVar(&f.small, "small", false, "run the plan at the reduced size of its small: key (a smoke test)")
	cmd.AddCommand(newPlanMergeCommand(stdout))
	return cmd
}

func checkFormat(format, out string) error {
	switch format {
	case "html", "json":
	case "md":
		if out == "" {
			return invalid("--format md writes image files: give --out DIR")
		}
	default:
		return invalid("--format %q is not one of html, md, json", format)
	}
	return nil
}

func runPlan(path string, f planFlags, stdout, stderr io.Writer) error {
	if f.parallel < 1 {
		return invalid("--parallel must be 1 or more")
	}
	shard, shards := 0, 1
	var err error
	switch {
	case f.shard != "":
		if shard, shards, err = parseShard(f.shard); err != nil {
			return invalid("%w", err)
		}
	case os.Getenv("JOB_COMPLETION_INDEX") != "" && os.Getenv("PLAN_SHARDS") != "":
		spec := os.Getenv("JOB_COMPLETION_INDEX") + "/" + os.Getenv("PLAN_SHARDS")
		if shard, shards, err = parseShard(spec); err != nil {
			return invalid("JOB_COMPLETION_INDEX and PLAN_SHARDS: %w", err)
		}
	}
	if shards > 1 && f.format != "json" {
		if f.format != "html" || f.shard == "" && os.Getenv("JOB_COMPLETION_INDEX") == "" {
			return invalid("a shard writes --format json; build the report with fleetsim plan merge")
		}
		f.format = "json"
	}
	if err := checkFormat(f.format, f.out); err != nil {
		return err
	}
	pl, err := plan.LoadWith(path, plan.ParseOptions{Small: f.small})
	if err != nil {
		return invalid("%w", err)
	}
	pr := newProgress(stderr, "plan "+pl.Name)
	res, err := pl.Execute(plan.Options{Parallel: f.parallel, Shard: shard, Shards: shards, Progress: func(done, total int) { pr.count(done, total) }})
	pr.done()
	if err != nil {
		return invalid("%w", err)
	}
	if shards > 1 {
		return writeOut(stdout, f.out, "shard-"+fmt.Sprint(shard)+".json", func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		})
	}
	return writeReport(pl, res, f, stdout)
}

func writeReport(pl *plan.Plan, res *plan.Results, f planFlags, stdout io.Writer) error {
	rep, err := plan.Build(pl, res)
	if err != nil {
		return invalid("%w", err)
	}
	var figs []plan.Figure
	if f.format != "json" {
		if figs, err = rep.Figures(); err != nil {
			return invalid("%w", err)
		}
	}
	switch f.format {
	case "json":
		return writeOut(stdout, f.out, "report.json", rep.WriteJSON)
	case "md":
		for _, fig := range figs {
			if err := writeOut(nil, f.out, fig.Name, func(w io.Writer) error { _, err := w.Write(fig.PNG); return err }); err != nil {
				return err
			}
		}
		return writeOut(stdout, f.out, "report.md", func(w io.Writer) error { return rep.WriteMarkdown(w, figs) })
	default:
		return writeOut(stdout, f.out, "report.html", func(w io.Writer) error { return rep.WriteHTML(w, figs) })
	}
}

// writeOut writes to dir/name, or to stdout without a directory.
func writeOut(stdout io.Writer, dir, name string, write func(io.Writer) error) error {
	if dir == "" {
		w := &errWriter{w: stdout}
		_ = write(w)
		return w.check()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return invalid("--out: %w", err)
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return invalid("writing %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
		return invalid("writing the report: %w", err)
	}
	return nil
}

func newPlanMergeCommand(stdout io.Writer) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:     "merge FILE SHARD.json...",
		Short:   "Build a plan's report from the JSON results of its shards",
		Example: `  fleetsim plan merge scenarios/plan/kubefleet-scale.yaml shard-*.json --format md --out reports/plan/kubefleet-scale`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(f.format, f.out); err != nil {
				return err
			}
			pl, err := plan.LoadWith(args[0], plan.ParseOptions{Small: f.small})
			if err != nil {
				return invalid("%w", err)
			}
			var parts []plan.Shard
			for _, p := range args[1:] {
				r, err := plan.LoadShard(p)
				if err != nil {
					return invalid("%w", err)
				}
				parts = append(parts, plan.Shard{Path: p, Results: r})
			}
			m, err := plan.Merge(pl, parts)
			if err != nil {
				return invalid("%w", err)
			}
			return writeReport(pl, m, f, stdout)
		},
	}
	cmd.Flags().StringVar(&f.out, "out", "", "directory for the report; default: html and json to standard output")
	cmd.Flags().StringVar(&f.format, "format", "html", "report format: html, md or json")
	cmd.Flags().StringVarP(&f.format, "output", "o", "html", "same as --format")
	cmd.Flags().BoolVar(&f.small, "small", false, "the shards ran with --small")
	return cmd
}
