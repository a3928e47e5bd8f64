package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetsim/fleetsim/sim/timing"
)

// newBenchCommand is `fleet bench`: the measurements of this binary's components.
func newBenchCommand(stdout, stderr io.Writer) *cobra.Command {
	bench := &cobra.Command{
		Use:   "bench",
		Short: "Measure fleet's components on real servers",
		Args:  cobra.NoArgs,
	}
	bench.AddCommand(newBenchHubCommand(stdout, stderr))
	return bench
}

// newBenchHubCommand is `fleet bench hub`: the production hub measured on a real API
// server. Its flags are `fleetsim bench hub`'s (timing.AddFlags), which predicts the same
// figures. The harness (kube-apiserver and etcd started with envtest, the integration tests'
// stand-in agents) is test code, which this production binary does not link: the command
// runs it from the fleetsim binary beside this one (or on $PATH), with this binary's hub.
func newBenchHubCommand(stdout, stderr io.Writer) *cobra.Command {
	var w timing.Workload
	hub := &cobra.Command{
		Use:   "hub",
		Short: "Measure this hub on a real API server with stand-in member agents",
		Long: `bench hub starts kube-apiserver and etcd from hack/test-assets.sh's cache (or uses the API
server of --kubeconfig), runs this binary's hub as its own process, joins --members stand-in
member agents (heartbeating every --heartbeat, reporting each Work applied and available
after --report-delay), then creates --placements placements, --concurrent in flight at once,
each of a namespace with a ConfigMap, picking --pick members by label affinity (0: PickAll).

It prints the time from each placement's creation to its bindings bound (Scheduled), its Works
reported (Applied) and ClusterResourcePlacementAvailable (percentiles), the hub's decisions by
controller and writes by kind, and the CPU and memory of the hub, kube-apiserver and etcd.
--restart then SIGKILLs the hub and times a new one until it has decided every stored
placement again. ` + "`fleetsim bench hub`" + ` takes the same flags and predicts these figures from the
calibrated model; --compare runs both; --calibrate FILE measures this machine's calibration.

The harness is test code that fleet does not link: it runs from the fleetsim binary beside
fleet (make build puts both in bin/) or on $PATH.`,
		Example: `  fleet bench hub --members 40 --placements 3
  fleet bench hub --members 100 --placements 20 --pick 10 --concurrent 20 --restart -o json
  fleet bench hub --calibrate reports/calibration/reference.yaml
  fleet bench hub --members 40 --placements 3 --compare`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := w.Validate(); err != nil {
				return &exitError{code: exitInvalid, err: err}
			}
			harness, err := findFleetsim()
			if err != nil {
				return &exitError{code: exitInvalid, err: err}
			}
			args := []string{"bench", "hub", "measured"}
			if !cmd.Flags().Changed("fleet") {
				self, err := os.Executable()
				if err != nil {
					return &exitError{code: exitInvalid, err: fmt.Errorf("finding this binary for the hub: %w", err)}
				}
				args = append(args, "--fleet="+self)
			}
			args = append(args, passFlags(cmd.Flags())...)
			run := exec.CommandContext(cmd.Context(), harness, args...)
			run.Stdout, run.Stderr = stdout, stderr
			if err := run.Run(); err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return &exitError{code: ee.ExitCode(), err: fmt.Errorf("%s %v: %w", harness, args, err)}
				}
				return &exitError{code: exitFailed, err: err}
			}
			return nil
		},
	}
	timing.AddFlags(hub.Flags(), &w)
	return hub
}

// passFlags renders the flags given on the command line for the harness, in the flag set's
// order; a repeatable flag once a value.
func passFlags(fs *pflag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out
}

// findFleetsim is the fleetsim binary beside this fleet, else on $PATH.
func findFleetsim() (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "fleetsim")
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, nil
		}
	}
	p, err := exec.LookPath("fleetsim")
	if err != nil {
		return "", errors.New("fleet bench hub runs its harness from the fleetsim binary, which is neither beside fleet nor on $PATH: build both (make build)")
	}
	return p, nil
}
