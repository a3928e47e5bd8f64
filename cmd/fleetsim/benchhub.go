package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetsim/fleetsim/bench/hubbench"
)

// newBenchHubCommand is `fleetsim bench hub`. It lives in fleetsim, not in the production
// binary fleet, because the harness starts kube-apiserver and etcd with envtest and shares
// the stand-in agents of the integration tests: fleet links no test code.
func newBenchHubCommand(stdout, stderr io.Writer) *cobra.Command {
	o := hubbench.Options{}
	var fleetBinary string
	var output string
	var workers int
	var qps float64
	var burst int
	var hubFlags []string
	hub := &cobra.Command{
		Use:   "hub",
		Short: "Measure the hub on a real API server with stand-in member agents",
		Long: `bench hub starts kube-apiserver and etcd from hack/test-assets.sh's cache (or uses the API
server of --kubeconfig), runs the hub of the fleet binary (--fleet) as its own process, joins --members stand-in
member agents (heartbeating every --heartbeat, reporting each Work applied and available
after --report-delay), then creates --placements placements, --concurrent at a time, each of
a namespace with a ConfigMap, picking --pick members by label affinity (0: PickAll).

It prints the time from each placement's creation to ClusterResourcePlacementAvailable
(percentiles), the hub's decisions and API calls, and the CPU and memory of the hub,
kube-apiserver and etcd. --restart then SIGKILLs the hub and times a new one until it has
decided every stored placement again and made no decision for 5s.`,
		Example: `  fleetsim bench hub --members 40 --placements 3 --pick 0
  fleetsim bench hub --members 100 --placements 20 --pick 10 --concurrent 20 --restart --output json
  fleetsim bench hub --members 1000 --placements 3 --pick 100 --hub-flag=--pprof-bind-address=127.0.0.1:6060`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return invalid("--output %q: must be text or json", output)
			}
			exe, err := findFleetBinary(fleetBinary)
			if err != nil {
				return &exitError{code: exitInvalid, err: err}
			}
			o.HubCommand = []string{exe}
			o.HubFlags = append([]string{"--workers", fmt.Sprint(workers), "--kube-api-qps", fmt.Sprint(qps), "--kube-api-burst", fmt.Sprint(burst)}, hubFlags...)
			o.Progress = stderr
			ctrl.SetLogger(logr.Discard()) // the bench's own caches and clients say nothing
			res, err := hubbench.Run(cmd.Context(), o)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if output == "json" {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			hubbench.WriteText(stdout, res)
			return nil
		},
	}
	f := hub.Flags()
	f.IntVar(&o.Members, "members", 10, "member clusters, each with a stand-in agent")
	f.IntVar(&o.Placements, "placements", 3, "placements to create")
	f.IntVar(&o.Pick, "pick", 0, "members each placement picks (PickN by label affinity); 0 picks all")
	f.IntVar(&o.Concurrent, "concurrent", 1, "placements created at once")
	f.BoolVar(&o.Restart, "restart", false, "then SIGKILL the hub and time a new one until it settles")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "use this API server instead of starting one")
	f.DurationVar(&o.ReportDelay, "report-delay", 500*time.Millisecond, "how long an agent takes to report a Work applied and available")
	f.DurationVar(&o.Heartbeat, "heartbeat", time.Minute, "the agents' heartbeat period")
	f.DurationVar(&o.Steady, "steady", 0, "also measure the hub's CPU for this long once all placements are available")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "give up after this long")
	f.IntVar(&workers, "workers", 8, "the hub's --workers")
	f.Float64Var(&qps, "kube-api-qps", 250, "the hub's --kube-api-qps")
	f.IntVar(&burst, "kube-api-burst", 1000, "the hub's --kube-api-burst")
	f.StringArrayVar(&hubFlags, "hub-flag", nil, "another flag for the hub, as --flag=value (repeatable), e.g. --hub-flag=--pprof-bind-address=127.0.0.1:6060")
	f.StringVar(&fleetBinary, "fleet", "", "the fleet binary whose hub is measured (default: fleet beside this fleetsim, else on $PATH)")
	f.StringVarP(&output, "output", "o", "text", "text or json")
	_ = hub.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return hub
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
