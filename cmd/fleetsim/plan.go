package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/scenarios/input"
	"github.com/fleetsim/fleetsim/scenarios/plan"
	"github.com/fleetsim/fleetsim/sim/timing"
)

type planFlags struct {
	out    string
	format string
	// formatSet: -o (or --format) was given.
	formatSet bool
	parallel  int
	shard     string
	small     bool
	// calibration is the calibrated hub model's calibration file ("": the reference).
	calibration string
}

func newPlanCommand(stdout, stderr io.Writer) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Run a capacity plan: a scenario swept over parameters and seeds, with statistics and plots",
		Long: `plan runs a plan file: a scenario template (a Go text/template of a scenario file) swept over
parameters (member count, placements, heartbeat period, rollout budgets, staged stages and
waits, failure rates, and the hub model's constants), each point repeated over seeds. Every
run is an ordinary deterministic simulation; runs go in parallel. The hub is the calibrated
model of sim/timing (the embedded reference calibration, or --calibration FILE), unless the
plan names the earlier token bucket's parameters (qps, burst, callsPerDecision, apiLatency).

Each run measures, from the simulator's events: placement creation to Scheduled, Applied and
Available (per cluster and for the whole placement), rollout and staged-run durations, the
time to detect a lost member and to move its work, hub resync after a restart, the hub's
decisions per second by controller, the API writes per second and objects the hub's API
server would hold, and unavailable members over time.

The report has, per point, p50/p90/p99 with 95% confidence intervals over seeds, growth laws
fitted against the x parameter (linear or power, with R²), knees, a plain-language summary
and plots: -o html (one page, images embedded), md (report.md and PNG files in --out) or
json (statistics and raw results, for machines). With --out, the report's path is printed.
Off a terminal, a progress line with the runs done and an estimate of the time left goes to
standard error every few seconds.

--shard I/N runs the I-th of N disjoint slices of the runs (run i belongs to shard i mod N);
without it, JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) selects the shard when
PLAN_SHARDS is set. A shard always writes its JSON results (even 0/1), whatever -o says;
"fleetsim plan merge" builds the report from all.

The plan format is documented in scenarios/plan/README.md.

` + planBounds() + `

Exit codes:
  0  the report was written
  2  invalid plan (file, line and field are named), a run that could not complete, or
     output that could not be written`,
		Example: `  # A plan's report as one HTML page
  fleetsim plan scenarios/plan/rollout-fleet-size.yaml --out /tmp/report

  # Markdown with PNG files, two runs at a time
  fleetsim plan scenarios/plan/heartbeat-hub-load.yaml -o md --out reports/plan/heartbeat --parallel 2

  # Shard 1 of 4 (JSON results), then the report from all four
  fleetsim plan scenarios/plan/kubefleet-scale.yaml --shard 1/4 > shard-1.json
  fleetsim plan merge scenarios/plan/kubefleet-scale.yaml shard-*.json --out /tmp/report`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.formatSet = cmd.Flags().Changed("output") || cmd.Flags().Changed("format")
			warnFormat(cmd, stderr)
			return runPlan(args[0], f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "directory for the report (report.html, report.md and its images, or report.json); default: html and json to standard output")
	registerFormat(cmd, &f.format)
	fl.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once")
	fl.StringVar(&f.shard, "shard", "", "I/N: run the I-th (from 0) of N disjoint slices of the runs, and write JSON")
	fl.BoolVar(&f.small, "small", false, "run the plan at the reduced size of its small: key (a smoke test)")
	fl.StringVar(&f.calibration, "calibration", "", "the calibration of the calibrated hub model (default: the embedded reference, reports/calibration/reference.yaml); see fleet bench hub --calibrate")
	cmd.AddCommand(newPlanMergeCommand(stdout, stderr))
	return cmd
}

// planBounds is the table of a plan's bounds (scenarios/plan/limits.go) for --help.
func planBounds() string {
	return fmt.Sprintf(`Bounds, each refused with exit 2 before any run (file, line and field named):
  plan file, scenarioFile   at most %d MiB
  points (sweep product)    at most %s
  repetitions               1 to %s
  rendered scenario         at most %d MiB and %s template steps (loop iterations,
                            template calls, seq values)
  samples per run           at most %s (the scenario's duration / sample)
  hub                       workers 1 to %s, qps %g to %s, burst 1 to %s,
                            callsPerDecision 0 to %s, apiLatency 0s to %s; the calibrated
                            model's constants within the ranges of sim/timing (Calibration.Set)
  shard file (plan merge)   at most %d MiB`,
		plan.MaxPlanBytes>>20, planLimit(plan.MaxPoints), planLimit(plan.MaxRepetitions), plan.MaxRenderedBytes>>20, planLimit(plan.MaxTemplateSteps),
		planLimit(plan.MaxSamplesPerRun), planLimit(plan.MaxWorkers), plan.MinQPS, planLimit(plan.MaxQPS), planLimit(plan.MaxBurst),
		planLimit(plan.MaxCallsPerDecision), plan.MaxAPILatency, plan.MaxShardBytes>>20)
}

// planLimit prints a bound with thousands separators: 1,000,000.
func planLimit(n float64) string {
	s := strconv.FormatFloat(n, 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// planInvalid is exit 2 with err's message made safe for a terminal: messages quote the
// plan's and the shards' text, which may hold control characters.
func planInvalid(err error) error {
	return invalid("%s", input.Printable(err.Error()))
}

// checkOut refuses, before any run, an --out that is not a directory and cannot be made
// one, so that hours of runs are not lost to a typo.
func checkOut(out string) error {
	if out == "" {
		return nil
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return invalid("--out %s: exists and is not a directory (the report is written as files in it)", input.Printable(out))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return invalid("--out: %s", input.Printable(err.Error()))
	}
	return nil
}

// registerFormat adds -o/--output (html, md or json) and --format, its deprecated alias
// kept hidden so that scripts written for it still run.
func registerFormat(cmd *cobra.Command, format *string) {
	fl := cmd.Flags()
	fl.StringVarP(format, "output", "o", "html", "report format: html, md or json")
	fl.StringVar(format, "format", "html", "deprecated: use -o/--output")
	_ = fl.MarkHidden("format")
}

// warnFormat says on stderr that --format is deprecated, when it was used.
func warnFormat(cmd *cobra.Command, stderr io.Writer) {
	if cmd.Flags().Changed("format") {
		fmt.Fprintln(stderr, "fleetsim: --format is deprecated: use -o/--output")
	}
}

func checkFormat(format, out string) error {
	switch format {
	case "html", "json":
	case "md":
		if out == "" {
			return invalid("-o md writes image files: give --out DIR")
		}
	default:
		return invalid("-o %q is not one of html, md, json", format)
	}
	return nil
}

func runPlan(path string, f planFlags, stdout, stderr io.Writer) error {
	if f.parallel < 1 {
		return invalid("--parallel must be 1 or more")
	}
	shard, shards := 0, 1
	sharded := false
	var err error
	switch {
	case f.shard != "":
		sharded = true
		if shard, shards, err = parseShard(f.shard); err != nil {
			return invalid("%w", err)
		}
	case os.Getenv("JOB_COMPLETION_INDEX") != "" && os.Getenv("PLAN_SHARDS") != "":
		spec := os.Getenv("JOB_COMPLETION_INDEX") + "/" + os.Getenv("PLAN_SHARDS")
		if shard, shards, err = parseShard(spec); err != nil {
			return invalid("JOB_COMPLETION_INDEX and PLAN_SHARDS: %w", err)
		}
		sharded = true
	}
	switch {
	case sharded && f.formatSet && f.format != "json":
		return invalid("a shard writes its JSON results (-o json); build the report with fleetsim plan merge")
	case sharded:
		f.format = "json"
	}
	if err := checkFormat(f.format, f.out); err != nil {
		return err
	}
	pl, err := plan.LoadWith(path, plan.ParseOptions{Small: f.small})
	if err != nil {
		return planInvalid(err)
	}
	if f.calibration != "" {
		if pl.Calibration, err = timing.Load(f.calibration); err != nil {
			return invalid("--calibration: %w", err)
		}
	}
	if err := checkOut(f.out); err != nil {
		return err
	}
	pr := newProgress(stderr, "plan "+input.Printable(pl.Name))
	res, err := pl.Execute(plan.Options{Parallel: f.parallel, Shard: shard, Shards: shards, Progress: func(done, total int) { pr.count(done, total) }})
	pr.done()
	if err != nil {
		return planInvalid(err)
	}
	if sharded {
		return writeOut(stdout, f.out, "shard-"+fmt.Sprint(shard)+".json", res.WriteJSON)
	}
	return writeReport(pl, res, f, stdout)
}

func writeReport(pl *plan.Plan, res *plan.Results, f planFlags, stdout io.Writer) error {
	rep, err := plan.Build(pl, res)
	if err != nil {
		return planInvalid(err)
	}
	var figs []plan.Figure
	if f.format != "json" {
		if figs, err = rep.Figures(); err != nil {
			return planInvalid(err)
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
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return invalid("writing the report: %w", err)
	}
	if stdout != nil {
		// Images are written with a nil stdout; the report and shard files are named.
		if _, err := fmt.Fprintf(stdout, "wrote %s\n", input.Printable(path)); err != nil {
			return invalid("writing the output: %w", err)
		}
	}
	return nil
}

func newPlanMergeCommand(stdout, stderr io.Writer) *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "merge FILE SHARD.json...",
		Short: "Build a plan's report from the JSON results of its shards",
		Long: `merge builds a plan's report from the JSON results of its shards (fleetsim plan FILE
--shard I/N), the same report the unsharded plan gives. A file that is not a shard's results
(an HTML or Markdown report, a report's JSON) is refused with what it is. It refuses, with exit 2
and the file and field: a shard of another plan, seed or plan size (a --small run); a shard
that does not exist (5 of 2); a shard or a run given twice; a run in the wrong shard or
naming a point or seed the plan does not have; a shard missing runs or edited after it was
written; and a set missing shards. A shard file is at most ` + fmt.Sprint(plan.MaxShardBytes>>20) + ` MiB.`,
		Example: `  fleetsim plan merge scenarios/plan/kubefleet-scale.yaml shard-*.json -o md --out reports/plan/kubefleet-scale`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			warnFormat(cmd, stderr)
			if err := checkFormat(f.format, f.out); err != nil {
				return err
			}
			pl, err := plan.LoadWith(args[0], plan.ParseOptions{Small: f.small})
			if err != nil {
				return planInvalid(err)
			}
			if err := checkOut(f.out); err != nil {
				return err
			}
			var parts []plan.Shard
			for _, p := range args[1:] {
				r, err := plan.LoadShard(p)
				if err != nil {
					return planInvalid(err)
				}
				parts = append(parts, plan.Shard{Path: p, Results: r})
			}
			m, err := plan.Merge(pl, parts)
			if err != nil {
				return planInvalid(err)
			}
			return writeReport(pl, m, f, stdout)
		},
	}
	cmd.Flags().StringVar(&f.out, "out", "", "directory for the report; default: html and json to standard output")
	registerFormat(cmd, &f.format)
	cmd.Flags().BoolVar(&f.small, "small", false, "the shards ran with --small")
	return cmd
}
