package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/timing"
)

type runFlags struct {
	limits limitFlags
	seed   uint64
	until  time.Duration
	output string
	trace  string
	quiet  bool
	wide   bool
	// events and subject filter the timeline (text and JSON); allMembers prints every
	// member row above memberRowsLimit.
	events     []string
	subject    string
	allMembers bool
	// calibration, when set, runs the hub as the calibrated model of this calibration.
	calibration string
}

func newRunCommand(stdout, stderr io.Writer) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE...",
		Short: "Run scenario files and check their expectations",
		Long: `run simulates each scenario file and prints a timeline of notable events (members joining and
failing, placements scheduled and why), the final placements and members like kubectl get, each
expectation with pass or fail, and the trace hash that identifies the run.

With several files and --trace, each file's trace goes to the --trace path with the scenario
name inserted before the extension (trace.jsonl → trace.quickstart.jsonl); characters other
than letters, digits, '.', '_' and '-' become '-', so traces stay in the --trace directory,
and a name used by two files gets -2, -3, ... so no trace overwrites another.`,
		Example: `  # The quickstart: a small fleet, a PickN placement, a member failure
  fleetsim run scenarios/quickstart.yaml

  # Another seed, machine-readable output, and the full event trace
  fleetsim run scenarios/quickstart.yaml --seed 7 --output json --trace /tmp/quickstart.jsonl

  # Every scenario of the library, only the verdicts
  fleetsim run scenarios/*.yaml --quiet

  # The region outage: only failures and placement status changes of the eu clusters
  fleetsim run scenarios/region-outage.yaml --events member-failed,binding-rolled --subject 'app-eu-*'`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeScenarioFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			warnLimits(cmd, stderr)
			switch f.output {
			case "text", "json", "yaml":
			default:
				return &exitError{code: exitInvalid, err: fmt.Errorf("--output %q is not one of text, json, yaml", f.output)}
			}
			if err := (runner.TimelineFilter{Kinds: f.events, Subject: f.subject}).Check(); err != nil {
				return &exitError{code: exitInvalid, err: err}
			}
			if cmd.Flags().Changed("until") && f.until <= 0 {
				return &exitError{code: exitInvalid, err: fmt.Errorf("--until %s must be positive", f.until)}
			}
			return runFiles(cmd, args, f, stdout, stderr)
		},
	}
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "random seed, overriding the scenario's (default: the scenario's seed, or 1); it drives network delays and loss and faults only")
	cmd.Flags().DurationVar(&f.until, "until", 0, "simulated time to run, overriding the scenario's duration")
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text, json or yaml")
	cmd.Flags().StringVar(&f.trace, "trace", "", "write every processed event as JSON lines to this file")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "text output: print only the verdict and failures")
	cmd.Flags().StringVar(&f.calibration, "calibration", "", "run the hub as the calibrated model (sim/timing) of this calibration file, or of the embedded one for \"reference\", instead of the scenario's hub: or the fixed 100ms per decision")
	cmd.Flags().BoolVar(&f.wide, "wide", false, "text output: print every column in full instead of fitting the terminal (or $COLUMNS, or 120)")
	cmd.Flags().StringSliceVar(&f.events, "events", nil, "timeline: only events of these kinds (comma-separated, e.g. member-failed,placement-status); text and JSON")
	cmd.Flags().StringVar(&f.subject, "subject", "", "timeline: only events about subjects matching this pattern (*, ?, [a-z]; e.g. 'eu-*'); text and JSON")
	cmd.Flags().BoolVar(&f.allMembers, "members", false, fmt.Sprintf("text output: print a row per member even above %d members (the MEMBERS summary line always counts them)", memberRowsLimit))
	f.limits.register(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"text", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func runFiles(cmd *cobra.Command, paths []string, f runFlags, out, stderr io.Writer) error {
	stdout := &errWriter{w: out}
	// Parse everything first: an invalid file stops the command before any run.
	var scs []*scenarios.Scenario
	opts := scenarios.Options{Limits: f.limits.limits()}
	if cmd.Flags().Changed("until") {
		opts.Until = f.until
	}
	for _, p := range paths {
		sc, err := scenarios.LoadWith(p, opts)
		if err != nil {
			return &exitError{code: exitInvalid, err: err}
		}
		scs = append(scs, sc)
	}
	var traces []string
	if f.trace != "" {
		names := make([]string, len(scs))
		for i, sc := range scs {
			names[i] = sc.Name
		}
		traces = tracePaths(f.trace, names)
	}
	var cal *timing.Calibration
	if f.calibration != "" {
		var err error
		if cal, err = timing.Load(f.calibration); err != nil {
			return &exitError{code: exitInvalid, err: fmt.Errorf("--calibration: %w", err)}
		}
	}
	var reports []*runner.Report
	failed := 0
	for i, sc := range scs {
		opts := runner.Options{}
		if cal != nil {
			workers := 8 // fleet hub's default
			if sc.Hub != nil {
				workers = sc.Hub.Workers
			}
			opts.HubModel = &sim.HubModel{Workers: workers, Calibration: cal}
		}
		if cmd.Flags().Changed("seed") {
			opts.Seed = &f.seed
		}
		if cmd.Flags().Changed("until") {
			opts.Until = &f.until
		}
		var traceFile *os.File
		if f.trace != "" {
			tf, err := os.Create(traces[i])
			if err != nil {
				return &exitError{code: exitInvalid, err: fmt.Errorf("--trace: %w", err)}
			}
			traceFile = tf
			opts.Trace = tf
		}
		progress := newProgress(stderr, sc.Name)
		opts.Progress = progress.update
		rep, err := runner.Run(sc, opts)
		progress.done()
		if traceFile != nil {
			if cerr := traceFile.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("--trace: %w", cerr)
			}
		}
		if err != nil {
			return &exitError{code: exitInvalid, err: err}
		}
		if !rep.Passed {
			failed++
		}
		rep.FilterTimeline(runner.TimelineFilter{Kinds: f.events, Subject: f.subject})
		reports = append(reports, rep)
		if f.output == "text" {
			printText(stdout, rep, textOptions{quiet: f.quiet, width: outputWidth(out, f.wide), allMembers: f.allMembers})
			if err := stdout.check(); err != nil {
				return err
			}
		}
	}
	// JSON and YAML are a list, one report per file, whatever the number of files.
	if err := writeStructured(stdout, f.output, reports); err != nil {
		return err
	}
	if err := stdout.check(); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: exitFailed, err: errors.New(plural(failed, "scenario") + " failed")}
	}
	return nil
}

// tracePaths returns the trace file of each scenario: the --trace path itself for one file;
// for several, the scenario name inserted before the extension (trace.jsonl →
// trace.quickstart.jsonl). The name is reduced to a safe file name component (letters,
// digits, '.', '_' and '-'; no leading dot), so a trace never leaves the --trace directory,
// and a name used twice gets -2, -3, ... so no trace overwrites another.
func tracePaths(path string, names []string) []string {
	if len(names) == 1 {
		return []string{path}
	}
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	used := map[string]bool{}
	out := make([]string, len(names))
	for i, name := range names {
		c := safeComponent(name)
		cand := c
		for n := 2; used[cand]; n++ {
			cand = fmt.Sprintf("%s-%d", c, n)
		}
		used[cand] = true
		out[i] = base + "." + cand + ext
	}
	return out
}

// safeComponent maps a scenario name to a file name component: characters other than
// letters, digits, '.', '_' and '-' become '-', leading dots are dropped, and at most 100
// bytes are kept.
func safeComponent(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	s := strings.TrimLeft(string(b), ".")
	if len(s) > 100 {
		s = s[:100]
	}
	if s == "" {
		s = "scenario"
	}
	return s
}
