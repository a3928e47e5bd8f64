package main

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/bench"
)

func newBenchCommand(stdout, stderr io.Writer) *cobra.Command {
	var members int
	var picks int32
	var simulated time.Duration
	cmd := &cobra.Command{
		Use:   "bench scheduler|sim|hub",
		Short: "Measure the scheduler or the simulator on a generated fleet, or predict the production hub",
		Long: `bench runs the project's benchmarks outside go test, on a fleet of the size you give:

  scheduler  one whole PickN decision (one required term, two preferred terms, a property
             sorter, a topology spread constraint) and one PickAll decision
  sim        members heartbeating every 60s for the simulated time, with the hub
             evaluating their health
  hub        the prediction, from the calibrated hub model (sim/timing), of what
             fleet bench hub measures, with the same flags; see fleetsim bench hub --help

Figures go to stdout as go test -bench prints them. reports/benchmarks.md records the
reference figures and the commands that produced them.`,
		Example: `  fleetsim bench scheduler --members 10000 --picks 50
  fleetsim bench sim --members 5000 --simulated 24h
  fleetsim bench hub --members 40 --placements 3`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"scheduler", "sim"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if members <= 0 {
				return &exitError{code: exitInvalid, err: fmt.Errorf("--members %d must be positive", members)}
			}
			switch args[0] {
			case "scheduler":
				if picks < 0 || int(picks) > members {
					return &exitError{code: exitInvalid, err: fmt.Errorf("--picks %d must be between 0 and --members", picks)}
				}
				if err := report(stdout, fmt.Sprintf("SchedulePickN/members=%d/picks=%d", members, picks), testing.Benchmark(func(b *testing.B) {
					bench.Schedule(b, members, bench.PickNPolicy(picks), picks, -1)
				})); err != nil {
					return err
				}
				return report(stdout, fmt.Sprintf("SchedulePickAll/members=%d", members), testing.Benchmark(func(b *testing.B) {
					bench.Schedule(b, members, bench.PickAllPolicy(), 0, -1)
				}))
			case "sim":
				if simulated <= 0 {
					return &exitError{code: exitInvalid, err: fmt.Errorf("--simulated %s must be positive", simulated)}
				}
				return report(stdout, fmt.Sprintf("SimHeartbeats/members=%d/simulated=%s", members, simulated), testing.Benchmark(func(b *testing.B) {
					bench.SimHeartbeats(b, members, simulated)
				}))
			default:
				return &exitError{code: exitInvalid, err: fmt.Errorf("unknown benchmark %q: want scheduler or sim", args[0])}
			}
		},
	}
	cmd.Flags().IntVar(&members, "members", 10_000, "number of generated members")
	cmd.Flags().Int32Var(&picks, "picks", 50, "numberOfClusters of the PickN placement (scheduler)")
	cmd.Flags().DurationVar(&simulated, "simulated", 24*time.Hour, "simulated time (sim)")
	cmd.AddCommand(newBenchHubCommand(stdout, stderr))
	return cmd
}

// report prints one result. testing.Benchmark swallows a failed run's message and returns a
// zero result; that must not look like a measurement. A failure to run exits 2, as documented.
func report(w io.Writer, name string, r testing.BenchmarkResult) error {
	if r.N == 0 {
		return &exitError{code: exitInvalid, err: fmt.Errorf("benchmark %s failed (run the same one with go test -bench in bench/ to see why)", name)}
	}
	if _, err := fmt.Fprintf(w, "%-48s %s %s\n", name, r.String(), r.MemString()); err != nil {
		return &exitError{code: exitInvalid, err: fmt.Errorf("writing the output: %w", err)}
	}
	return nil
}
