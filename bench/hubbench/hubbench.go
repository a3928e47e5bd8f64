package hubbench

// The package's surface: what a run measures (Options), what it found (Result and its
// text form), and Run, which sets the bench up, measures and cleans up. How it does so is
// one concern a file: environment.go (API server and members), hub.go (the hub process),
// run.go (the phases and their timings), metrics.go (the hub's counters) and usage.go
// (CPU and memory).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fleetsim/fleetsim/prod/testenv"
)

// Options say what to measure.
type Options struct {
	Members    int
	Placements int
	// Pick is how many members each placement picks (PickN with a label affinity every
	// member matches); 0 or Members means PickAll.
	Pick int
	// Concurrent is how many placements are created at once (0: one at a time).
	Concurrent int
	// Restart SIGKILLs the hub once every placement is available and times a new hub.
	Restart bool
	// Kubeconfig, when set, is the API server to use instead of starting one; the agents
	// then use its identity.
	Kubeconfig string
	// Assets holds kube-apiserver and etcd (default $KUBEBUILDER_ASSETS, else the cache of
	// hack/test-assets.sh).
	Assets string
	// HubCommand runs the hub: the `fleet` binary and its arguments up to the hub's flags.
	HubCommand []string
	// HubFlags are passed to the hub after the bench's own (--workers and so on).
	HubFlags []string
	// ReportDelay is how long a stand-in agent takes to report a Work applied and available.
	ReportDelay time.Duration
	// Heartbeat is the agents' heartbeat period.
	Heartbeat time.Duration
	// Steady, when positive, measures the hub's CPU for that long once all is done.
	Steady time.Duration
	// Timeout bounds the whole run.
	Timeout time.Duration
	// Progress, when set, receives a line per phase.
	Progress io.Writer
}

// Usage is a process's CPU and memory over a phase.
type Usage struct {
	CPUSeconds float64 `json:"cpuSeconds"`
	CPUPercent float64 `json:"cpuPercentOfOneCore"`
	RSSMiB     float64 `json:"rssMiB"`
}

// Percentiles of durations, in seconds.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Step is one step of the placements' way to Available.
type Step struct {
	Name    string      `json:"name"`
	Seconds Percentiles `json:"seconds"`
}

// Result is what a run measured.
type Result struct {
	Members    int `json:"members"`
	Placements int `json:"placements"`
	Pick       int `json:"pick"`
	Concurrent int `json:"concurrent"`
	// JoinSeconds: from starting the hub to every member Joined and Healthy.
	JoinSeconds float64 `json:"joinSeconds"`
	// Available: per placement, creation to ClusterResourcePlacementAvailable.
	Available Percentiles `json:"availableSeconds"`
	// Steps split Available: per step (stepNames, in order), when after its creation a
	// placement had all its bindings made, all bound, all Works made, all Works reported
	// available by the agents.
	Steps []Step `json:"steps,omitempty"`
	// PlacementPhaseSeconds: from the first creation to the last placement available.
	PlacementPhaseSeconds float64 `json:"placementPhaseSeconds"`
	// Decisions and APICalls the hub made during the placement phase.
	Decisions float64 `json:"decisions"`
	// ServedInline: queued decisions skipped because a placement-wide decision had run
	// their controller for their key already (not in Decisions).
	ServedInline float64 `json:"servedInline,omitempty"`
	// DecisionsByController splits Decisions by the controller that made them.
	DecisionsByController map[string]float64 `json:"decisionsByController,omitempty"`
	// Retries: decisions taken again after a Conflict, AlreadyExists or NotFound.
	Retries float64 `json:"retries"`
	// WaitSeconds: the decisions' total wait for the cache to hold the hub's own writes.
	WaitSeconds float64 `json:"expectationWaitSeconds"`
	// MeanDecisionSeconds: a placement decision's mean time from reading to written.
	MeanDecisionSeconds float64 `json:"meanDecisionSeconds"`
	// MeanDecisionSecondsByController splits MeanDecisionSeconds by controller.
	MeanDecisionSecondsByController map[string]float64 `json:"meanDecisionSecondsByController,omitempty"`
	// MeanWaitSecondsByController: how long a decision waited before reading (the cache,
	// its lock, a worker slot), by controller.
	MeanWaitSecondsByController map[string]float64 `json:"meanWaitSecondsByController,omitempty"`
	APICalls                    float64            `json:"apiCalls"`
	APICallsPerDecision         float64            `json:"apiCallsPerDecision"`
	// Writes: the hub's successful writes during the placement phase, by "Kind verb".
	Writes map[string]float64 `json:"writes,omitempty"`
	// WritesPerBinding: all of Writes over the bindings the placements made (pick, or
	// members for PickAll, times placements).
	WritesPerBinding float64 `json:"writesPerBinding,omitempty"`
	Hub              Usage   `json:"hub"`
	APIServer        *Usage  `json:"apiserver,omitempty"`
	Etcd             *Usage  `json:"etcd,omitempty"`
	// SteadyHubCPUPercent: the hub's CPU once everything is done, members heartbeating.
	SteadyHubCPUPercent float64 `json:"steadyHubCPUPercent,omitempty"`
	// RestartSeconds: from a new hub's start (the old one SIGKILLed) until it had decided
	// every placement again and nothing changed for quietPeriod.
	RestartSeconds   float64 `json:"restartSeconds,omitempty"`
	RestartDecisions float64 `json:"restartDecisions,omitempty"`
	// RestartServedInline: the restarted hub's queued decisions that placement-wide
	// decisions served inline (not in RestartDecisions).
	RestartServedInline float64 `json:"restartServedInline,omitempty"`
	// RestartFirstDecisionSeconds: from the new hub's start to its first decision about a
	// placement, binding or Work: its informers listing what is stored.
	RestartFirstDecisionSeconds float64 `json:"restartFirstDecisionSeconds,omitempty"`
}

type bench struct {
	o       Options
	cfg     *rest.Config
	env     *envtest.Environment
	admin   client.Client
	cache   ctrlcache.Cache
	scheme  *runtime.Scheme
	agents  map[string]*testenv.StandInAgent
	hub     *exec.Cmd
	metrics string
	dir     string
	log     func(string, ...any)

	kicks map[string]chan struct{} // per member: its InternalMemberCluster was made or its spec changed

	mu      sync.Mutex
	pending map[string]bool        // Works with a report scheduled
	steps   map[string]*milestones // per placement, what the bench saw of its progress
}

// Run measures a hub as o says.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	if o.Members < 1 || o.Placements < 0 || o.Pick < 0 || o.Concurrent < 0 {
		return nil, errors.New("--members must be 1 or more and --placements, --pick, --concurrent 0 or more")
	}
	if o.Pick > o.Members {
		return nil, fmt.Errorf("--pick %d: more than the %d members", o.Pick, o.Members)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	b := &bench{o: o, agents: map[string]*testenv.StandInAgent{}, kicks: map[string]chan struct{}{}, pending: map[string]bool{},
		steps: map[string]*milestones{}}
	b.log = func(f string, a ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "%s "+f+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
		}
	}
	if b.dir, err = os.MkdirTemp("", "fleet-bench-hub-"); err != nil {
		return nil, err
	}
	defer b.cleanup()
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	return b.run(ctx)
}

func (b *bench) cleanup() {
	b.stopHub(false)
	if b.env != nil {
		_ = b.env.Stop()
	}
	_ = os.RemoveAll(b.dir)
}

// WriteText prints a result for people.
func WriteText(w io.Writer, r *Result) {
	fmt.Fprintf(w, "members %d, placements %d, pick %d, concurrent %d\n", r.Members, r.Placements, r.Pick, r.Concurrent)
	fmt.Fprintf(w, "join (all Joined and Healthy): %.1fs\n", r.JoinSeconds)
	fmt.Fprintf(w, "creation to Available: p50 %.2fs  p90 %.2fs  p99 %.2fs  max %.2fs  mean %.2fs  (phase %.1fs)\n",
		r.Available.P50, r.Available.P90, r.Available.P99, r.Available.Max, r.Available.Mean, r.PlacementPhaseSeconds)
	for _, st := range r.Steps {
		fmt.Fprintf(w, "  %-30s p50 %.2fs  p90 %.2fs  max %.2fs\n", st.Name+":", st.Seconds.P50, st.Seconds.P90, st.Seconds.Max)
	}
	fmt.Fprintf(w, "hub decisions %.0f (%.0f retried; %.0f more served inline), API calls %.0f, %.1f per decision; waits for own writes %.1fs in all\n",
		r.Decisions, r.Retries, r.ServedInline, r.APICalls, r.APICallsPerDecision, r.WaitSeconds)
	fmt.Fprintf(w, "placement decisions take %.1fms on average (read, decide, write)", 1000*r.MeanDecisionSeconds)
	for _, k := range slices.Sorted(maps.Keys(r.MeanDecisionSecondsByController)) {
		fmt.Fprintf(w, "; %s %.1fms (waited %.1fms)", k, 1000*r.MeanDecisionSecondsByController[k], 1000*r.MeanWaitSecondsByController[k])
	}
	fmt.Fprintln(w)
	if len(r.DecisionsByController) > 0 {
		fmt.Fprintf(w, "decisions by controller:")
		for _, k := range slices.Sorted(maps.Keys(r.DecisionsByController)) {
			fmt.Fprintf(w, " %s %.0f;", k, r.DecisionsByController[k])
		}
		fmt.Fprintln(w)
	}
	if len(r.Writes) > 0 {
		fmt.Fprintf(w, "hub writes: %.1f per binding:", r.WritesPerBinding)
		for _, k := range slices.Sorted(maps.Keys(r.Writes)) {
			fmt.Fprintf(w, " %s %.0f;", k, r.Writes[k])
		}
		fmt.Fprintln(w)
	}
	use := func(name string, u Usage) {
		fmt.Fprintf(w, "%-15s cpu %.2fs (%.0f%% of one core)  rss %.0f MiB\n", name, u.CPUSeconds, u.CPUPercent, u.RSSMiB)
	}
	use("hub", r.Hub)
	if r.APIServer != nil {
		use("kube-apiserver", *r.APIServer)
		use("etcd", *r.Etcd)
	}
	if r.SteadyHubCPUPercent > 0 {
		fmt.Fprintf(w, "steady state hub cpu: %.1f%% of one core\n", r.SteadyHubCPUPercent)
	}
	if r.RestartSeconds > 0 {
		fmt.Fprintf(w, "restart (SIGKILL, new hub until quiet): %.1fs (first decision after %.1fs), %.0f decisions (%.0f more served inline)\n",
			r.RestartSeconds, r.RestartFirstDecisionSeconds, r.RestartDecisions, r.RestartServedInline)
	}
}
