package timing

import (
	"fmt"
	"slices"
	"time"

	"github.com/spf13/pflag"
)

// Workload is what one hub benchmark runs, measured (`fleet bench hub`) or predicted
// (`fleetsim bench hub`): the same flags in both commands, bound by AddFlags.
type Workload struct {
	Members    int
	Placements int
	// Pick is how many members each placement picks (PickN by a label affinity every member
	// matches); 0 or Members means PickAll.
	Pick int
	// Concurrent is how many placements are in flight at once (a new one is created as soon
	// as one is Available).
	Concurrent int
	// Restart: once every placement is available, SIGKILL the hub and time a new one.
	Restart bool
	// ReportDelay is how long a member agent takes to report a Work applied and available.
	ReportDelay time.Duration
	// Heartbeat is the agents' heartbeat period.
	Heartbeat time.Duration
	// Steady measures the hub's CPU this long once all is done (measured only).
	Steady time.Duration
	// Timeout bounds a measured run.
	Timeout time.Duration
	// Workers, QPS and Burst are the hub's --workers, --kube-api-qps, --kube-api-burst.
	Workers int
	QPS     float64
	Burst   int
	// HubFlags are more flags for a measured hub.
	HubFlags []string
	// Kubeconfig: measure on this API server instead of starting one.
	Kubeconfig string
	// Fleet is the fleet binary whose hub is measured.
	Fleet string
	// Output is text or json.
	Output string
	// Calibration is the calibration file a prediction uses ("" for the reference one).
	Calibration string
	// Set overrides constants of the calibration, as NAME=VALUE (Calibration.Set).
	Set []string
	// Calibrate, when set, measures this machine's calibration and writes it to that file.
	Calibrate string
	// Compare runs both the prediction and the measurement and prints them side by side.
	Compare bool
	// CompareWith: compare the prediction with the measurement saved in this file (a
	// `-o json` answer of a measurement or of --compare) instead of measuring again.
	CompareWith string
	// CalibrateWrites and CalibrateDecisions size --calibrate's write and list workloads.
	CalibrateWrites    int
	CalibrateDecisions int
}

// AddFlags binds w's fields to the flags both bench hub commands take, with their defaults.
// It is the one definition of that flag set: a flag added here is in both commands.
func AddFlags(f *pflag.FlagSet, w *Workload) {
	f.IntVar(&w.Members, "members", 10, "member clusters, each with a stand-in agent")
	f.IntVar(&w.Placements, "placements", 3, "placements to create")
	f.IntVar(&w.Pick, "pick", 0, "members each placement picks (PickN by label affinity); 0 picks all")
	f.IntVar(&w.Concurrent, "concurrent", 1, "placements in flight at once")
	f.BoolVar(&w.Restart, "restart", false, "then SIGKILL the hub and time a new one until it settles")
	f.StringVar(&w.Kubeconfig, "kubeconfig", "", "measure on this API server instead of starting one (measurement only)")
	f.DurationVar(&w.ReportDelay, "report-delay", 500*time.Millisecond, "how long an agent takes to report a Work applied and available")
	f.DurationVar(&w.Heartbeat, "heartbeat", time.Minute, "the agents' heartbeat period")
	f.DurationVar(&w.Steady, "steady", 0, "also measure the hub's CPU for this long once all placements are available (measurement only)")
	f.DurationVar(&w.Timeout, "timeout", 30*time.Minute, "give up a measurement after this long")
	f.IntVar(&w.Workers, "workers", 8, "the hub's --workers")
	f.Float64Var(&w.QPS, "kube-api-qps", 250, "the hub's --kube-api-qps")
	f.IntVar(&w.Burst, "kube-api-burst", 1000, "the hub's --kube-api-burst")
	f.StringArrayVar(&w.HubFlags, "hub-flag", nil, "another flag for the measured hub, as --flag=value (repeatable), e.g. --hub-flag=--pprof-bind-address=127.0.0.1:6060")
	f.StringVar(&w.Fleet, "fleet", "", "the fleet binary whose hub is measured (default: fleet beside this binary, else on $PATH)")
	f.StringVarP(&w.Output, "output", "o", "text", "text, json or yaml")
	f.StringVar(&w.Calibration, "calibration", "", "the calibration file of the prediction (default: the embedded reference, reports/calibration/reference.yaml)")
	f.StringArrayVar(&w.Set, "set", nil, "override a constant of the calibration, NAME=VALUE in its unit (repeatable), e.g. --set apiServer.cores=4")
	f.StringVar(&w.Calibrate, "calibrate", "", "measure this machine's API server and hub and write the calibration YAML to this file (- for stdout)")
	f.IntVar(&w.CalibrateWrites, "calibrate-writes", 2000, "with --calibrate: writes of each kind timed, and the larger size each kind is listed at (the smaller is a quarter)")
	f.IntVar(&w.CalibrateDecisions, "calibrate-decisions", 100, "with --calibrate: cluster decisions of the policy snapshots written and listed, and clusters of the placement statuses written")
	f.BoolVar(&w.Compare, "compare", false, "run the prediction and the measurement and print both with the error of each figure")
	f.StringVar(&w.CompareWith, "compare-with", "", "compare the prediction with the measurement saved in this file (the -o json answer of a measurement or of --compare) instead of measuring again")
}

// PerPlacement is how many bindings a placement makes: Pick members, every member for
// PickAll.
func (w Workload) PerPlacement() int {
	if w.Pick > 0 && w.Pick < w.Members {
		return w.Pick
	}
	return w.Members
}

// Validate refuses a workload neither command can run, naming the flag.
func (w Workload) Validate() error {
	switch {
	case w.Members < 1:
		return fmt.Errorf("--members %d: must be 1 or more", w.Members)
	case w.Placements < 0:
		return fmt.Errorf("--placements %d: must be 0 or more", w.Placements)
	case w.Pick < 0 || w.Pick > w.Members:
		return fmt.Errorf("--pick %d: must be from 0 to --members (%d)", w.Pick, w.Members)
	case w.Concurrent < 0:
		return fmt.Errorf("--concurrent %d: must be 0 or more", w.Concurrent)
	case w.Workers < 1:
		return fmt.Errorf("--workers %d: must be 1 or more", w.Workers)
	case w.ReportDelay < 0:
		return fmt.Errorf("--report-delay %s: must not be negative", w.ReportDelay)
	case w.Heartbeat < 0:
		return fmt.Errorf("--heartbeat %s: must not be negative", w.Heartbeat)
	case w.CalibrateWrites < 0 || w.CalibrateDecisions < 0:
		return fmt.Errorf("--calibrate-writes %d, --calibrate-decisions %d: must be 0 (the default) or more", w.CalibrateWrites, w.CalibrateDecisions)
	case w.Output != "text" && w.Output != "json" && w.Output != "yaml":
		return fmt.Errorf("--output %q: must be text, json or yaml", w.Output)
	case w.Members > MaxMembers || w.Placements*w.PerPlacement() > MaxBindings:
		return fmt.Errorf("--members %d × bindings: the prediction handles at most %d members and %d bindings", w.Members, MaxMembers, MaxBindings)
	}
	return nil
}

// The bounds of a workload: the model keeps a few numbers per binding and an event per write.
const (
	MaxMembers  = 1_000_000
	MaxBindings = 10_000_000
)

// FlagSignature lists a flag set's flags as "name/shorthand/type/default", sorted: what the
// two bench hub commands' tests compare with the set AddFlags makes.
func FlagSignature(f *pflag.FlagSet) []string {
	var out []string
	f.VisitAll(func(fl *pflag.Flag) {
		out = append(out, fmt.Sprintf("%s/%s/%s/%s", fl.Name, fl.Shorthand, fl.Value.Type(), fl.DefValue))
	})
	slices.Sort(out)
	return out
}

// WantFlagSignature is FlagSignature of the flags AddFlags binds.
func WantFlagSignature() []string {
	f := pflag.NewFlagSet("bench hub", pflag.ContinueOnError)
	AddFlags(f, &Workload{})
	return FlagSignature(f)
}
