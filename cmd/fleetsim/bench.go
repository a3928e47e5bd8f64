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
	var output string
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

Figures go to stdout as go test -bench prints them (-o json or yaml: a list of results with
n, nsPerOp, bytesPerOp and allocsPerOp). reports/benchmarks.md records the reference figures
and the commands that produced them.`,
		Example: `  fleetsim bench scheduler --members 10000 --picks 50
  fleetsim bench sim --members 5000 --simulated 24h
  fleetsim bench hub --members 40 --placements 3`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"scheduler", "sim"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if members <= 0 {
				return &exitError{code: exitInvalid, err: fmt.Errorf("--members %d must be positive", members)}
			}
			switch output {
			case "text", "json", "yaml":
			default:
				return &exitError{code: exitInvalid, err: fmt.Errorf("--output %q is not one of text, json, yaml", output)}
			}
			results := []benchResult{}
			add := func(name string, r testing.BenchmarkResult) error {
				if output == "text" || r.N == 0 { // a failed run: exit 2, whatever the format
					return report(stdout, name, r)
				}
				results = append(results, benchResult{Name: name, N: r.N, NsPerOp: r.NsPerOp(), BytesPerOp: r.AllocedBytesPerOp(), AllocsPerOp: r.AllocsPerOp()})
				return nil
			}
			if err := runBench(args[0], members, picks, simulated, add); err != nil {
				return err
			}
			return writeStructured(stdout, output, results)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text (as go test -bench), json or yaml")
	cmd.Flags().IntVar(&members, "members", 10_000, "number of generated members")
	cmd.Flags().Int32Var(&picks, "picks", 50, "numberOfClusters of the PickN placement (scheduler)")
	cmd.Flags().DurationVar(&simulated, "simulated", 24*time.Hour, "simulated time (sim)")
	cmd.AddCommand(newBenchHubCommand(stdout, stderr))
	return cmd
}

// benchResult is one benchmark's figures in -o json|yaml.
type benchResult struct {
	Name        string `json:"name"`
	N           int    `json:"n"`
	NsPerOp     int64  `json:"nsPerOp"`
	BytesPerOp  int64  `json:"bytesPerOp"`
	AllocsPerOp int64  `json:"allocsPerOp"`
}

// runBench runs one of the benchmarks, handing each result to add.
func runBench(which string, members int, picks int32, simulated time.Duration, add func(name string, r testing.BenchmarkResult) error) error {
	switch which {
	case "scheduler":
		if picks < 0 || int(picks) > members {
			return &exitError{code: exitInvalid, err: fmt.Errorf("--picks %d must be between 0 and --members", picks)}
		}
		if err := add(fmt.Sprintf("SchedulePickN/members=%d/picks=%d", members, picks), testing.Benchmark(func(b *testing.B) {
			bench.Schedule(b, members, bench.PickNPolicy(picks), picks, -1)
		})); err != nil {
			return err
		}
		return add(fmt.Sprintf("SchedulePickAll/members=%d", members), testing.Benchmark(func(b *testing.B) {
			bench.Schedule(b, members, bench.PickAllPolicy(), 0, -1)
		}))
	case "sim":
		if simulated <= 0 {
			return &exitError{code: exitInvalid, err: fmt.Errorf("--simulated %s must be positive", simulated)}
		}
		return add(fmt.Sprintf("SimHeartbeats/members=%d/simulated=%s", members, simulated), testing.Benchmark(func(b *testing.B) {
			bench.SimHeartbeats(b, members, simulated)
		}))
	}
	return &exitError{code: exitInvalid, err: fmt.Errorf("unknown benchmark %q: want scheduler or sim", which)}
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
