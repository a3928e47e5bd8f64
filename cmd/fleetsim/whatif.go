package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/scenarios/input"
	"github.com/fleetsim/fleetsim/scenarios/whatif"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/timing"
)

type whatifFlags struct {
	changes        []string
	calibration    string
	workers        int
	output         string
	settle         time.Duration
	horizon        time.Duration
	maxUnavailable int
	mustKeep       []string
	verify         verifyFlags
}

func newWhatifCommand(stdout, stderr io.Writer) *cobra.Command {
	var f whatifFlags
	cmd := &cobra.Command{
		Use:   "whatif SNAPSHOT --change FILE...",
		Short: "Preview what a change does to a fleet captured by fleetsim snapshot",
		Long: `whatif starts the simulator in the state a snapshot captured (fleetsim snapshot), lets it
settle, makes the change and follows it for a horizon. It reports, per placement the change
affects: the clusters added, kept and removed with the scheduler's reason; per cluster the
manifests it will receive after overrides, as a diff against what it holds now; the predicted
timeline (time to Available, peak unavailable, budget waits); and any invariant the change
breaks.

A change file is either KubeFleet manifests (separated by --- lines) to create or update, or
a list of timeline steps as a scenario writes them, each at an optional offset:

  changes:
    - taint: {member: east-1, key: maintenance}
    - label: {member: east-2, set: {tier: gold}}
    - delete: {kind: MemberCluster, name: west-1}        # the member leaves
    - fail: {member: west-2}                             # crash or partition
    - delete: {kind: ClusterResourcePlacement, name: web}
    - at: 5m
      apply: |
        apiVersion: placement.kubernetes-fleet.io/v1beta1
        kind: ClusterStagedUpdateRun
        ...

With --verify KUBECONFIG the change is then applied to that hub for real and the outcome
compared with the prediction (see --help of the flag and README.md › What-if for its risks).

Exit codes:
  0  the change is safe: no invariant and no budget broken (with --verify: and the hub agreed)
  1  the change breaks an invariant, --max-unavailable or --must-keep (with --verify: or the
     hub's outcome differs from the prediction)
  2  invalid input (the file, line and field are named) or a failure to run`,
		Example: `  # Capture a hub, then preview a new placement and a member leaving
  fleetsim snapshot --kubeconfig hub.kubeconfig -o fleet.yaml
  fleetsim whatif fleet.yaml --change new-placement.yaml --change leave.yaml

  # Fail (exit 1) if any placement would have more than one cluster down at once, or lose prod-1
  fleetsim whatif fleet.yaml --change override.yaml --max-unavailable 1 --must-keep prod-1

  # The timeline with the hub's calibrated timing model, as JSON
  fleetsim whatif fleet.yaml --change override.yaml --calibration reference -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWhatif(cmd, args[0], f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.changes, "change", nil, "a change file (repeatable; applied in order, at the same instant)")
	fl.StringVar(&f.calibration, "calibration", "", "predict the timeline with the hub's calibrated model (sim/timing) of this calibration file, or of the embedded one for \"reference\"")
	fl.IntVar(&f.workers, "workers", 8, "with --calibration: the hub's --workers")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text, json or yaml")
	fl.DurationVar(&f.settle, "settle", whatif.DefaultSettle, "how long the snapshot's fleet runs before the change, to settle")
	fl.DurationVar(&f.horizon, "horizon", whatif.DefaultHorizon, "how long the change is followed")
	fl.IntVar(&f.maxUnavailable, "max-unavailable", -1, "budget: the most clusters of one placement that may be unavailable at once (-1: no budget)")
	fl.StringSliceVar(&f.mustKeep, "must-keep", nil, "budget: clusters no placement holding them may lose (repeatable or comma-separated)")
	f.verify.register(cmd)
	return cmd
}

func runWhatif(cmd *cobra.Command, snapshotPath string, f whatifFlags, stdout, stderr io.Writer) error {
	bad := func(err error) error { return &exitError{code: exitInvalid, err: err} }
	switch f.output {
	case "text", "json", "yaml":
	default:
		return bad(fmt.Errorf("--output %q is not one of text, json, yaml", f.output))
	}
	if len(f.changes) == 0 {
		return bad(errors.New("give the change with --change FILE"))
	}
	if f.settle <= 0 || f.horizon <= 0 {
		return bad(errors.New("--settle and --horizon must be positive"))
	}
	if f.maxUnavailable < -1 {
		return bad(fmt.Errorf("--max-unavailable %d must be 0 or more (or -1 for none)", f.maxUnavailable))
	}
	snapshot, err := input.ReadFile(snapshotPath)
	if err != nil {
		return bad(err)
	}
	var changes []*whatif.Change
	for _, path := range f.changes {
		c, err := whatif.LoadChange(path)
		if err != nil {
			return bad(err)
		}
		changes = append(changes, c)
	}
	opts := whatif.Options{Settle: f.settle, Horizon: f.horizon, MaxUnavailable: f.maxUnavailable, MustKeep: f.mustKeep}
	if f.calibration != "" {
		cal, err := timing.Load(f.calibration)
		if err != nil {
			return bad(fmt.Errorf("--calibration: %w", err))
		}
		opts.HubModel = &sim.HubModel{Workers: f.workers, Calibration: cal}
	}
	res, err := whatif.Preview(snapshotPath, snapshot, changes, opts)
	if err != nil {
		return bad(err)
	}
	out := &whatifOutput{Report: res.Report}
	if f.verify.kubeconfig != "" {
		v, err := f.verify.run(cmd.Context(), changes, res, stderr)
		if err != nil {
			return &exitError{code: exitInvalid, err: fmt.Errorf("--verify: %w", err)}
		}
		out.Verify = v
	}
	if err := writeWhatif(stdout, f.output, out); err != nil {
		return bad(fmt.Errorf("writing the output: %w", err))
	}
	if !res.Report.Safe || (out.Verify != nil && !out.Verify.Agree) {
		return &exitError{code: exitFailed}
	}
	return nil
}

// whatifOutput is the report, with the verification when --verify ran.
type whatifOutput struct {
	*whatif.Report
	Verify *verifyResult `json:"verify,omitempty"`
}

func writeWhatif(w io.Writer, format string, out *whatifOutput) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "yaml":
		j, err := json.Marshal(out)
		if err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(j)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	if err := out.Report.WriteText(w); err != nil {
		return err
	}
	if out.Verify != nil {
		return out.Verify.writeText(w)
	}
	return nil
}
