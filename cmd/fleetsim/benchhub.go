package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetsim/fleetsim/bench/hubbench"
	"github.com/fleetsim/fleetsim/sim/timing"
)

// benchMode is what a bench hub command does with its workload.
type benchMode int

const (
	predict benchMode = iota // the model of sim/timing on a calibration
	measure                  // the production hub on a real API server (bench/hubbench)
)

// newBenchHubCommand is `fleetsim bench hub`: the prediction of what `fleet bench hub`
// measures, with the same flags (timing.AddFlags) and the same output (timing.Result). Its
// hidden subcommand `measured` is the measurement itself, which `fleet bench hub` runs: the
// harness starts kube-apiserver and etcd with envtest and shares the integration tests'
// stand-in agents, and the production binary fleet links no test code.
func newBenchHubCommand(stdout, stderr io.Writer) *cobra.Command {
	var w timing.Workload
	hub := &cobra.Command{
		Use:   "hub",
		Short: "Predict what `fleet bench hub` measures, from the calibrated hub model",
		Long: `bench hub predicts, with the hub model of sim/timing and a calibration (--calibration, default
the embedded reference measured on the project's machine), what ` + "`fleet bench hub`" + ` measures for the same
flags: --members member clusters with agents reporting each Work after --report-delay,
--placements placements, --concurrent in flight at once, each picking --pick members (0: all);
the time from each placement's creation to all its bindings bound (Scheduled), all its Works
reported by the agents (Applied) and Available (p50, p90), the hub's decisions by controller and
its writes by kind; with --restart, a new hub's time to decide everything again.

--compare runs the prediction and the measurement (the real hub on a real API server, as
` + "`fleet bench hub`" + `) and prints each figure with the prediction's error. --calibrate FILE measures this
machine (the API server's cost per write by kind, --calibrate-writes of each, its LIST cost per
kind at two sizes, its cores and round trip, the informer delay, the hub's CPU per binding, its
members' join and warm-up) and writes the calibration to FILE. Flags that only a
measurement uses (--kubeconfig, --steady, --timeout, --hub-flag, --fleet) are accepted and
ignored by a prediction.`,
		Example: `  fleetsim bench hub --members 40 --placements 3
  fleetsim bench hub --members 1000 --placements 10 --pick 100 --concurrent 10 -o json
  fleetsim bench hub --members 100 --placements 10 --pick 10 --calibration my-machine.yaml
  fleetsim bench hub --members 40 --placements 3 --compare`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchHub(cmd.Context(), w, predict, stdout, stderr)
		},
	}
	timing.AddFlags(hub.Flags(), &w)
	_ = hub.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))

	var mw timing.Workload
	measured := &cobra.Command{
		Use:    "measured",
		Short:  "Measure the hub on a real API server (what `fleet bench hub` runs)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchHub(cmd.Context(), mw, measure, stdout, stderr)
		},
	}
	timing.AddFlags(measured.Flags(), &mw)
	hub.AddCommand(measured)
	return hub
}

// runBenchHub runs w in mode, or calibrates, or compares, and prints the result.
func runBenchHub(ctx context.Context, w timing.Workload, mode benchMode, stdout, stderr io.Writer) error {
	if err := w.Validate(); err != nil {
		return &exitError{code: exitInvalid, err: err}
	}
	if w.Calibrate != "" {
		return calibrate(ctx, w, stdout, stderr)
	}
	var cal *timing.Calibration
	if mode == predict || w.Compare || w.CompareWith != "" {
		var err error
		if cal, err = timing.LoadWith(w.Calibration, w.Set); err != nil {
			return &exitError{code: exitInvalid, err: err}
		}
	}
	if w.Compare || w.CompareWith != "" {
		pred, err := timing.Predict(w, cal)
		if err != nil {
			return &exitError{code: exitInvalid, err: err}
		}
		var meas *timing.Result
		if w.CompareWith != "" {
			if meas, err = savedMeasurement(w); err != nil {
				return &exitError{code: exitInvalid, err: err}
			}
		} else if meas, err = measureHub(ctx, w, stderr); err != nil {
			return err
		}
		cmp := timing.Compare(pred, meas)
		if w.Output != "text" {
			return writeStructured(stdout, w.Output, cmp)
		}
		timing.WriteComparison(stdout, cmp)
		return nil
	}
	var res *timing.Result
	var err error
	if mode == predict {
		if res, err = timing.Predict(w, cal); err != nil {
			return &exitError{code: exitInvalid, err: err}
		}
	} else if res, err = measureHub(ctx, w, stderr); err != nil {
		return err
	}
	if w.Output != "text" {
		return writeStructured(stdout, w.Output, res)
	}
	timing.WriteText(stdout, res)
	return nil
}

// savedMeasurement is the measurement of --compare-with, refused when it measured another
// workload than the flags describe (its members, placements, pick, concurrency and restart).
func savedMeasurement(w timing.Workload) (*timing.Result, error) {
	m, err := timing.LoadMeasurement(w.CompareWith)
	if err != nil {
		return nil, err
	}
	got := []int{m.Members, m.Placements, m.Pick, m.Concurrent}
	want := []int{w.Members, w.Placements, w.Pick, w.Concurrent}
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("--compare-with %s: measured --members %d --placements %d --pick %d --concurrent %d, not the workload of the flags (%d, %d, %d, %d)",
			w.CompareWith, got[0], got[1], got[2], got[3], want[0], want[1], want[2], want[3])
	}
	// A measurement with --restart has the restarted hub's time; one without has none.
	if restarted := m.RestartSeconds > 0; restarted != w.Restart {
		return nil, fmt.Errorf("--compare-with %s: measured with --restart=%t, the flags say --restart=%t", w.CompareWith, restarted, w.Restart)
	}
	return m, nil
}

// hubOptions are the harness's options for w.
func hubOptions(w timing.Workload, stderr io.Writer) (hubbench.Options, error) {
	exe, err := findFleetBinary(w.Fleet)
	if err != nil {
		return hubbench.Options{}, &exitError{code: exitInvalid, err: err}
	}
	return hubbench.Options{Members: w.Members, Placements: w.Placements, Pick: w.Pick, Concurrent: w.Concurrent,
		Restart: w.Restart, Kubeconfig: w.Kubeconfig, ReportDelay: w.ReportDelay, Heartbeat: w.Heartbeat,
		Steady: w.Steady, Timeout: w.Timeout, HubCommand: []string{exe},
		HubFlags: append([]string{"--workers", fmt.Sprint(w.Workers), "--kube-api-qps", fmt.Sprint(w.QPS),
			"--kube-api-burst", fmt.Sprint(w.Burst)}, w.HubFlags...),
		Progress: stderr, CalibrateWrites: w.CalibrateWrites, CalibrateDecisions: w.CalibrateDecisions}, nil
}

// measureHub runs the production hub on a real API server.
func measureHub(ctx context.Context, w timing.Workload, stderr io.Writer) (*timing.Result, error) {
	o, err := hubOptions(w, stderr)
	if err != nil {
		return nil, err
	}
	ctrl.SetLogger(logr.Discard()) // the bench's own caches and clients say nothing
	res, err := hubbench.Run(ctx, o)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	return res, nil
}

// calibrate measures this machine and writes the calibration to w.Calibrate.
func calibrate(ctx context.Context, w timing.Workload, stdout, stderr io.Writer) error {
	o, err := hubOptions(w, stderr)
	if err != nil {
		return err
	}
	ctrl.SetLogger(logr.Discard())
	cal, err := hubbench.Calibrate(ctx, o)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	data, err := cal.Marshal()
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if w.Calibrate == "-" {
		_, err = stdout.Write(data)
	} else {
		err = os.WriteFile(w.Calibrate, data, 0o644)
	}
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("writing the calibration: %w", err)}
	}
	return nil
}

// findFleetBinary resolves --fleet: the path given, else the fleet binary installed beside
// this fleetsim (make build puts both in bin/), else fleet on $PATH.
func findFleetBinary(flag string) (string, error) {
	if flag != "" {
		if _, err := os.Stat(flag); err != nil {
			return "", fmt.Errorf("--fleet %s: %w", flag, err)
		}
		return flag, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "fleet")
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, nil
		}
	}
	p, err := exec.LookPath("fleet")
	if err != nil {
		return "", fmt.Errorf("no fleet binary beside fleetsim or on $PATH: build it (make build) or give --fleet PATH")
	}
	return p, nil
}
