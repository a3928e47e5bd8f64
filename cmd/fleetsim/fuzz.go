package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/scenarios/fuzz"
	"github.com/fleetsim/fleetsim/scenarios/input"
)

type fuzzFlags struct {
	runs     int
	budget   time.Duration
	seed     uint64
	faults   string
	maxF     int
	parallel int
	output   string
	out      string
	shard    string
	until    time.Duration
	converge bool
}

func newFuzzCommand(stdout, stderr io.Writer) *cobra.Command {
	var f fuzzFlags
	cmd := &cobra.Command{
		Use:   "fuzz FILE...",
		Short: "Check rollout invariants under random fault schedules",
		Long: `fuzz runs each scenario file many times, each run with its own seed and a random fault
schedule on top of the scenario's timeline (member crashes and partitions with their heals,
taint and label churn, clock skew, hub restarts, workloads turning unavailable or failing to
apply, members joining and leaving, evictions), and checks every invariant (see "always" in
scenarios/README.md) after every event. Faults start and end within the first 3/4 of a run;
with --converge (the default), every cluster a fault touched must be Joined and Healthy again
at the end of the run (unless the scenario itself fails, taints, skews or removes it, or draws
its own random faults).

On a violation it shrinks the schedule to the fewest faults and the earliest end that still
fail, writes it to --out as an ordinary scenario file (faults inline as timeline steps, the
failed invariant as an always check), prints the command that replays it and exits 1. The
same seed always finds the same failure, whatever --parallel.

--shard I/N runs the I-th of N disjoint slices of the runs (run i belongs to shard i mod N);
without it, JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) selects the shard when
FUZZ_SHARDS is set. "fleetsim fuzz merge" combines the shards' JSON summaries.`,
		Example: `  # 1,000 schedules over the library, on every core
  fleetsim fuzz scenarios/*.yaml --runs 1000 --seed 1

  # Five minutes on your own scenario, only crashes and partitions
  fleetsim fuzz my.yaml --time 5m --faults crash,partition --out /tmp/fuzz

  # The second of four shards, as JSON
  fleetsim fuzz scenarios/*.yaml --runs 100000 --shard 1/4 --output json > shard-1.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFuzz(cmd, args, f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.runs, "runs", 0, "runs of the whole campaign, over all shards (default 1000 without --time)")
	fl.DurationVar(&f.budget, "time", 0, "stop starting runs after this much wall time")
	fl.Uint64Var(&f.seed, "seed", 1, "campaign seed; run i's seed derives from it")
	fl.StringVar(&f.faults, "faults", "", "comma-separated fault kinds (default all): "+kindList())
	fl.IntVar(&f.maxF, "max-faults", 6, "most faults in one run")
	fl.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	fl.StringVar(&f.out, "out", ".", "directory the minimal failing scenario is written to")
	fl.StringVar(&f.shard, "shard", "", "I/N: run the I-th (from 0) of N disjoint slices of the runs")
	fl.DurationVar(&f.until, "until", 0, "shorten every scenario to this much simulated time")
	fl.BoolVar(&f.converge, "converge", true, "check at the end of each run that every cluster a fault touched is Joined and Healthy again")
	cmd.AddCommand(newFuzzMergeCommand(stdout))
	return cmd
}

func kindList() string {
	s := make([]string, len(fuzz.Kinds))
	for i, k := range fuzz.Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

func invalid(format string, args ...any) error {
	return &exitError{code: exitInvalid, err: fmt.Errorf(format, args...)}
}

// parseShard reads I/N.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q is not I/N with 0 <= I < N", s)
	}
	return i, n, nil
}

func runFuzz(cmd *cobra.Command, paths []string, f fuzzFlags, out, stderr io.Writer) error {
	stdout := &errWriter{w: out}
	if f.output != "text" && f.output != "json" {
		return invalid("--output %q is not one of text, json", f.output)
	}
	kinds, err := fuzz.ParseKinds(f.faults)
	if err != nil {
		return invalid("--faults: %w", err)
	}
	if f.runs < 0 || f.budget < 0 || f.maxF < 1 || f.parallel < 1 || f.until < 0 {
		return invalid("--runs, --time and --until must not be negative; --max-faults and --parallel must be 1 or more")
	}
	if f.runs == 0 && f.budget == 0 {
		f.runs = 1000
	}
	shard, shards := 0, 1
	switch {
	case f.shard != "":
		if shard, shards, err = parseShard(f.shard); err != nil {
			return invalid("%w", err)
		}
	case os.Getenv("JOB_COMPLETION_INDEX") != "":
		spec := os.Getenv("JOB_COMPLETION_INDEX") + "/" + os.Getenv("FUZZ_SHARDS")
		if shard, shards, err = parseShard(spec); err != nil {
			return invalid("JOB_COMPLETION_INDEX and FUZZ_SHARDS: %w", err)
		}
	}
	var targets []*fuzz.Target
	for _, p := range paths {
		data, err := input.ReadFile(p)
		if err != nil {
			return invalid("%w", err)
		}
		t, err := fuzz.Prepare(p, data, f.until)
		if err != nil {
			return invalid("%w", err)
		}
		targets = append(targets, t)
	}
	pr := newProgress(stderr, "fuzz")
	total := 0
	if f.runs > 0 {
		total = (f.runs - shard + shards - 1) / shards
	}
	opts := fuzz.Options{Seed: f.seed, Runs: f.runs, Time: f.budget, Kinds: kinds, MaxFaults: f.maxF,
		Parallel: f.parallel, Shard: shard, Shards: shards, Converge: f.converge,
		Progress: func(done int) { pr.count(done, total) }}
	sum, err := fuzz.Campaign(targets, opts)
	pr.done()
	if err != nil {
		return &exitError{code: exitInvalid, err: err}
	}
	replay := ""
	if fl := sum.Failure; fl != nil {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return invalid("--out: %w", err)
		}
		base := strings.TrimSuffix(filepath.Base(fl.Source), filepath.Ext(fl.Source))
		path := filepath.Join(f.out, fmt.Sprintf("fuzz-%s-seed%d-run%d.yaml", base, f.seed, fl.Run))
		if err := os.WriteFile(path, []byte(fl.Scenario), 0o644); err != nil {
			return invalid("writing the failing scenario: %w", err)
		}
		replay = "fleetsim run " + path
	}
	if f.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
	} else {
		printFuzzText(stdout, sum, replay)
	}
	if err := stdout.check(); err != nil {
		return err
	}
	if sum.Failure != nil {
		fmt.Fprintf(stderr, "fleetsim: invariant %s violated; replay with: %s\n", sum.Failure.Invariant, replay)
		return &exitError{code: exitFailed}
	}
	return nil
}

func printFuzzText(w io.Writer, s *fuzz.Summary, replay string) {
	fmt.Fprintf(w, "fuzz: seed %d, shard %d/%d, %d file(s)\n", s.Seed, s.Shard, s.Shards, len(s.Files))
	fmt.Fprintf(w, "runs %d, events %d, invariant checks %d, members checked converged %d, violations %d\n", s.Runs, s.Events, s.Checks, s.ConvergenceChecks, s.Violations)
	var kinds []string
	for k := range s.Faults {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	fmt.Fprint(w, "faults:")
	for _, k := range kinds {
		fmt.Fprintf(w, " %s=%d", k, s.Faults[k])
	}
	fmt.Fprintf(w, "\n%.1fs, %.1f runs/s, %.0f events/s\n", s.Seconds, s.RunsPerSecond, s.EventsPerSecond)
	if fl := s.Failure; fl != nil {
		fmt.Fprintf(w, "FAIL run %d of %s (seed %d): invariant %s at %s\n  %s\n", fl.Run, fl.Source, fl.Seed, fl.Invariant, fl.At, strings.ReplaceAll(fl.Detail, "\n", "\n  "))
		fmt.Fprintf(w, "shrunk from %d to %d fault(s), ending at %s\nreplay: %s\n", fl.OriginalFaults, fl.Faults, fl.End, replay)
	} else {
		fmt.Fprintln(w, "PASS: no invariant violated")
	}
}

func newFuzzMergeCommand(stdout io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "merge SUMMARY.json...",
		Short: "Combine the JSON summaries of a sharded fuzz campaign",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var parts []*fuzz.Summary
			for _, p := range args {
				data, err := input.ReadFile(p)
				if err != nil {
					return invalid("%w", err)
				}
				var s fuzz.Summary
				if err := json.Unmarshal(data, &s); err != nil {
					return invalid("%s: %w", p, err)
				}
				parts = append(parts, &s)
			}
			m, err := fuzz.Merge(parts)
			if err != nil {
				return invalid("%w", err)
			}
			w := &errWriter{w: stdout}
			if output == "json" {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				_ = enc.Encode(m)
			} else {
				printFuzzText(w, m, "(see the shard that found it)")
			}
			if err := w.check(); err != nil {
				return err
			}
			if m.Violations > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("%d violation(s)", m.Violations)}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
