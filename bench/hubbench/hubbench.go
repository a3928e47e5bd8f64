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
	"os"
	"os/exec"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fleetsim/fleetsim/prod/testenv"
	"github.com/fleetsim/fleetsim/sim/timing"
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
	// CalibrateWrites is how many writes of each kind Calibrate times (0:
	// DefaultCalibrateWrites), and the larger of the two sizes it lists each kind at.
	CalibrateWrites int
	// CalibrateDecisions is how many clusters the calibration's policy snapshots decide on
	// and its placements' statuses list (0: 100).
	CalibrateDecisions int
}

// DefaultCalibrateWrites: the cost per write fell from 500 writes a kind to 2,000 (6.64 to
// 4.35 ms a binding create on the same quiet machine, reports/accuracy.md): the longer run
// is the default.
const DefaultCalibrateWrites = 2000

// The result's types are sim/timing's: the prediction of `fleetsim bench hub` and this
// measurement print the same JSON.
type (
	Usage       = timing.Usage
	Percentiles = timing.Percentiles
	Step        = timing.Step
	Result      = timing.Result
)

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

	firstJoin time.Time // when the first member was Joined and Healthy

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

// WriteText prints a result for people (timing.WriteText, shared with the prediction).
func WriteText(w io.Writer, r *Result) { timing.WriteText(w, r) }
