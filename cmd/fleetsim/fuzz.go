package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
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
apply, members joining and leaving, evictions, selected resources updated so placements roll
out again), and checks every invariant (see "always" in scenarios/README.md) after every event. Faults start and end within the first 3/4 of a run;
with --converge (the default), every cluster a fault touched must be Joined and Healthy again
at the end of the run (unless the scenario itself fails, taints, skews or removes it, or draws
its own random faults).

On a violation it shrinks the schedule to the fewest faults and the earliest end that still
fail, writes it to --out as an ordinary scenario file (faults inline as timeline steps, the
failed invariant as an always check), prints the command that replays it and exits 1. The
same seed always finds the same failure, whatever --parallel. --out is created and checked
writable before the campaign starts (exit 2 if it cannot be); should writing the file still
fail, the failure is printed all the same, with the scenario on stderr.

--shard I/N runs the I-th of N disjoint slices of the runs (run i belongs to shard i mod N).
Without it, in a Kubernetes Indexed Job, the shard is JOB_COMPLETION_INDEX (which Kubernetes
sets in each pod) of FUZZ_SHARDS (set it to the Job's completions: a pod is not told how
many there are); JOB_COMPLETION_INDEX without FUZZ_SHARDS is an error (exit 2), since every
pod would run the whole campaign. "fleetsim fuzz merge" combines the shards' JSON summaries.
In JSON, "digest" (a sum over the runs of a hash of each run's trace) is 16 hex digits.`,
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
	fl.StringVar(&f.out, "out", ".", "directory the minimal failing scenario is written to (created and checked before the campaign)")
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
	if f.shard != "" {
		if shard, shards, err = parseShard(f.shard); err != nil {
			return invalid("%w", err)
		}
	} else if shard, shards, err = shardFromEnv(); err != nil {
		return invalid("%w", err)
	}
	// A failure found after hours must not be lost to an --out it cannot be written to.
	if err := checkOutDir(f.out); err != nil {
		return invalid("--out %s: cannot write a failing scenario there: %w", f.out, err)
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
		total = fuzz.ShardRuns(f.runs, shard, shards)
	}
	opts := fuzz.Options{Seed: f.seed, Runs: f.runs, Time: f.budget, Kinds: kinds, MaxFaults: f.maxF,
		Parallel: f.parallel, Shard: shard, Shards: shards, Converge: f.converge,
		Progress: func(done int) { pr.count(done, total) }}
	defer debug.SetGCPercent(campaignGCPercent())
	sum, err := fuzz.Campaign(targets, opts)
	pr.done()
	if err != nil {
		return &exitError{code: exitInvalid, err: err}
	}
	// What was found is printed whatever happens to the file: if writing it fails, the
	// scenario goes to stderr instead.
	replay, writeErr := "", error(nil)
	if fl := sum.Failure; fl != nil {
		path := filepath.Join(f.out, failureFile(f.seed, fl))
		if writeErr = os.WriteFile(path, []byte(fl.Scenario), 0o644); writeErr == nil {
			replay = "fleetsim run " + path
		} else {
			replay = "(not written: " + writeErr.Error() + "; the scenario is on stderr)"
		}
	}
	if f.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
	} else {
		printFuzzText(stdout, sum, replay)
	}
	if fl := sum.Failure; fl != nil {
		if writeErr != nil {
			fmt.Fprintf(stderr, "fleetsim: invariant %s violated (run %d of %s); writing the failing scenario to --out failed: %v\nfleetsim: the failing scenario:\n%s",
				fl.Invariant, fl.Run, input.Printable(fl.Source), writeErr, input.Printable(fl.Scenario))
		} else {
			fmt.Fprintf(stderr, "fleetsim: invariant %s violated; replay with: %s\n", fl.Invariant, replay)
		}
	}
	if err := stdout.check(); err != nil {
		return err
	}
	if sum.Failure != nil {
		return &exitError{code: exitFailed}
	}
	return nil
}

// shardFromEnv reads the shard of a Kubernetes Indexed Job: JOB_COMPLETION_INDEX, which
// Kubernetes sets in each pod, of FUZZ_SHARDS, which the Job sets to its completions (a pod
// is not told how many there are). Without JOB_COMPLETION_INDEX it is shard 0 of 1. With
// it but without FUZZ_SHARDS it is an error: every pod would run the whole campaign.
func shardFromEnv() (int, int, error) {
	idx := os.Getenv("JOB_COMPLETION_INDEX")
	if idx == "" {
		return 0, 1, nil
	}
	n, ok := os.LookupEnv("FUZZ_SHARDS")
	if !ok || n == "" {
		return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX is %q but FUZZ_SHARDS is not set: set FUZZ_SHARDS to the Indexed Job's completions (a pod is not told how many there are), or pass --shard I/N", idx)
	}
	i, err1 := strconv.Atoi(idx)
	shards, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || shards < 1 || i < 0 || i >= shards {
		return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX %q of FUZZ_SHARDS %q is not a shard I of N with 0 <= I < N", idx, n)
	}
	return i, shards, nil
}

// checkOutDir makes sure a failing scenario can be written to dir before a campaign runs: it
// creates the directory and a file in it, removed at once.
func checkOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".fleetsim-fuzz-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		return err
	}
	return os.Remove(name)
}

// failureFile is the name of a failure's scenario file under --out.
func failureFile(seed uint64, fl *fuzz.Failure) string {
	base := strings.TrimSuffix(filepath.Base(fl.Source), filepath.Ext(fl.Source))
	return fmt.Sprintf("fuzz-%s-seed%d-run%d.yaml", safeComponent(base), seed, fl.Run)
}

// printFuzzText prints a summary. Every text in it may come from a file (fuzz merge reads
// summaries), so it goes through input.Printable: no control byte reaches the terminal.
func printFuzzText(w io.Writer, s *fuzz.Summary, replay string) {
	p := input.Printable
	fmt.Fprintf(w, "fuzz: seed %d, shard %d/%d, %d file(s)\n", s.Seed, s.Shard, s.Shards, len(s.Files))
	fmt.Fprintf(w, "runs %d, events %d, invariant checks %d, members checked converged %d, violations %d\n", s.Runs, s.Events, s.Checks, s.ConvergenceChecks, s.Violations)
	fmt.Fprint(w, "faults:")
	for _, k := range slices.Sorted(maps.Keys(s.Faults)) {
		fmt.Fprintf(w, " %s=%d", p(k), s.Faults[k])
	}
	fmt.Fprintf(w, "\n%.1fs, %.1f runs/s, %.0f events/s\n", s.Seconds, s.RunsPerSecond, s.EventsPerSecond)
	if fl := s.Failure; fl != nil {
		fmt.Fprintf(w, "FAIL run %d of %s (seed %d): invariant %s at %s\n  %s\n", fl.Run, p(fl.Source), fl.Seed, p(fl.Invariant), p(fl.At), strings.ReplaceAll(p(fl.Detail), "\n", "\n  "))
		fmt.Fprintf(w, "shrunk from %d to %d fault(s), ending at %s\nreplay: %s\n", fl.OriginalFaults, fl.Faults, p(fl.End), p(replay))
	} else {
		fmt.Fprintln(w, "PASS: no invariant violated")
	}
}

func newFuzzMergeCommand(stdout io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "merge SUMMARY.json...",
		Short: "Combine the JSON summaries of a sharded fuzz campaign",
		Long: `merge combines the JSON summaries (fleetsim fuzz --output json) of the N shards of one
campaign into the campaign's summary. It refuses, with exit 2, summaries that do not make
one campaign: another seed, shard count, budget, fault kinds, scenario files (names,
contents or --until); a shard given twice, outside 0..N-1, or missing; a summary whose runs,
violations and failure disagree. It exits 1 when a shard found a violation (the failure
of the lowest run index is reported, as the unsharded campaign would), 0 otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return invalid("--output %q is not one of text, json", output)
			}
			var parts []*fuzz.Summary
			for _, p := range args {
				data, err := input.ReadFile(p)
				if err != nil {
					return invalid("%w", err)
				}
				var s fuzz.Summary
				if err := json.Unmarshal(data, &s); err != nil {
					return invalid("%s: not a fuzz summary (fleetsim fuzz --output json): %s", p, input.Printable(err.Error()))
				}
				parts = append(parts, &s)
			}
			m, err := fuzz.Merge(parts, args)
			if err != nil {
				return invalid("%s", input.Printable(err.Error()))
			}
			replay := ""
			if fl := m.Failure; fl != nil {
				replay = fmt.Sprintf("the failing scenario is %s in the --out of shard %d", failureFile(m.Seed, fl), fl.Run%m.Shards)
			}
			w := &errWriter{w: stdout}
			if output == "json" {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				_ = enc.Encode(printable(m))
			} else {
				printFuzzText(w, m, replay)
			}
			if err := w.check(); err != nil {
				return err
			}
			if fl := m.Failure; fl != nil {
				return &exitError{code: exitFailed, err: fmt.Errorf("invariant %s violated in run %d (%d violation(s) in all)", input.Printable(fl.Invariant), fl.Run, m.Violations)}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// printable returns a copy of a merged summary whose texts (all read from files) are safe to
// print: JSON escapes C0 control bytes but not DEL, C1 controls or bidi overrides.
func printable(s *fuzz.Summary) *fuzz.Summary {
	p := input.Printable
	c := *s
	c.Files = make([]string, len(s.Files))
	for i, f := range s.Files {
		c.Files[i] = p(f)
	}
	c.Campaign.Kinds = make([]string, len(s.Campaign.Kinds))
	for i, k := range s.Campaign.Kinds {
		c.Campaign.Kinds[i] = p(k)
	}
	c.Campaign.Time, c.Campaign.Scenarios = p(s.Campaign.Time), p(s.Campaign.Scenarios)
	c.Faults = make(map[string]int, len(s.Faults))
	for k, v := range s.Faults {
		c.Faults[p(k)] += v
	}
	if f := s.Failure; f != nil {
		fc := *f
		fc.Source, fc.Invariant, fc.Detail, fc.At, fc.End = p(f.Source), p(f.Invariant), p(f.Detail), p(f.At), p(f.End)
		c.Failure = &fc
	}
	return &c
}

// campaignGCPercent sets the garbage collector's target for a campaign and returns the
// previous one. A campaign's live heap is small (a few simulations at once) but it
// allocates fast, and at Go's default (100) garbage collection took a sixth of its CPU
// (reports/fuzz.md); collecting at four times the live heap instead costs some tens of
// megabytes. GOGC, when set, is the user's choice and is left alone.
func campaignGCPercent() int {
	if _, set := os.LookupEnv("GOGC"); set {
		p := debug.SetGCPercent(-1) // read it: SetGCPercent is the only reader
		debug.SetGCPercent(p)
		return p
	}
	return debug.SetGCPercent(400)
}
