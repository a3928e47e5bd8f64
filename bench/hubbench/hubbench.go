package hubbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fleetsim/fleetsim/apis"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
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

// quietPeriod: a restarted hub is done when it made no decision for this long.
const quietPeriod = 5 * time.Second

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

// The steps of a placement from creation to Available, in order, as the bench's watches
// see them: they split the time to Available, so a slow run says which step is slow.
var stepNames = []string{"all bindings made", "all bindings bound", "all Works made", "all Works reported available"}

// milestones are one placement's steps: the objects seen at each, and when each had them
// all.
type milestones struct {
	created time.Time
	seen    [4]map[string]bool
	done    [4]time.Duration
}

// step records that object name of placement reached step i.
func (b *bench) step(placement string, i int, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.steps[placement]
	if m == nil || m.seen[i][name] {
		return
	}
	m.seen[i][name] = true
	if len(m.seen[i]) == b.perPlacement() {
		m.done[i] = time.Since(m.created)
	}
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

// start brings up the API server, the bench's own cache and the member objects.
func (b *bench) start(ctx context.Context) error {
	b.scheme = runtime.NewScheme()
	if err := apis.AddToScheme(b.scheme); err != nil {
		return err
	}
	if b.o.Kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", b.o.Kubeconfig)
		if err != nil {
			return fmt.Errorf("kubeconfig: %w", err)
		}
		b.cfg = cfg
	} else {
		assets := b.o.Assets
		if assets == "" {
			assets = os.Getenv("KUBEBUILDER_ASSETS")
		}
		if assets == "" {
			home, _ := os.UserHomeDir()
			assets = filepath.Join(home, ".cache", "fleetsim", "k8s-1.37.1", "assets")
		}
		if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
			return fmt.Errorf("no kube-apiserver in %s: run `hack/test-assets.sh` first, or pass --kubeconfig", assets)
		}
		b.env = &envtest.Environment{CRDDirectoryPaths: []string{testenv.CRDDir()}, ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: assets,
			ControlPlaneStartTimeout: 2 * time.Minute, ControlPlaneStopTimeout: time.Minute}
		b.log("starting kube-apiserver and etcd from %s", assets)
		cfg, err := b.env.Start()
		if err != nil {
			return fmt.Errorf("start kube-apiserver and etcd: %w", err)
		}
		b.cfg = cfg
	}
	cfg := rest.CopyConfig(b.cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	var err error
	if b.admin, err = client.New(cfg, client.Options{Scheme: b.scheme}); err != nil {
		return err
	}
	if b.cache, err = ctrlcache.New(cfg, ctrlcache.Options{Scheme: b.scheme}); err != nil {
		return err
	}
	go func() { _ = b.cache.Start(ctx) }()
	inf, err := b.cache.GetInformer(ctx, &v1beta1.Work{})
	if err != nil {
		return err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if w, ok := o.(*v1beta1.Work); ok {
				b.step(w.Labels[v1beta1.CRPTrackingLabel], 2, w.Namespace+"/"+w.Name)
			}
			b.workChanged(ctx, o)
		},
		UpdateFunc: func(_, o any) { b.workChanged(ctx, o) },
	}); err != nil {
		return err
	}
	bindings, err := b.cache.GetInformer(ctx, &v1beta1.ClusterResourceBinding{})
	if err != nil {
		return err
	}
	bindingSeen := func(o any) {
		if rb, ok := o.(*v1beta1.ClusterResourceBinding); ok {
			b.step(rb.Labels[v1beta1.CRPTrackingLabel], 0, rb.Name)
			if rb.Spec.State == placement.Bound {
				b.step(rb.Labels[v1beta1.CRPTrackingLabel], 1, rb.Name)
			}
		}
	}
	if _, err := bindings.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: bindingSeen, UpdateFunc: func(_, o any) { bindingSeen(o) },
	}); err != nil {
		return err
	}
	// The kick channels exist before the watch that reads them (a --kubeconfig server may
	// hold InternalMemberClusters already).
	for i := range b.o.Members {
		b.kicks[fmt.Sprintf("member-%04d", i)] = make(chan struct{}, 1)
	}
	// Agents watch their InternalMemberCluster, as real ones do, rather than poll for it: a
	// thousand agents polling every second until the hub makes it would load the API
	// server more than the hub does.
	imcs, err := b.cache.GetInformer(ctx, &clusterv1beta1.InternalMemberCluster{})
	if err != nil {
		return err
	}
	if _, err := imcs.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { b.kick(o) },
		UpdateFunc: func(old, o any) {
			if a, ok := old.(*clusterv1beta1.InternalMemberCluster); ok && a.Generation != o.(*clusterv1beta1.InternalMemberCluster).Generation {
				b.kick(o)
			}
		},
	}); err != nil {
		return err
	}
	if _, err := b.cache.GetInformer(ctx, &v1beta1.ClusterResourcePlacement{}); err != nil {
		return err
	}
	if _, err := b.cache.GetInformer(ctx, &clusterv1beta1.MemberCluster{}); err != nil {
		return err
	}
	b.cache.WaitForCacheSync(ctx)
	for i := range b.o.Members {
		name := fmt.Sprintf("member-%04d", i)
		if err := b.admin.Create(ctx, &clusterv1beta1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"fleet-bench": "member"}},
			Spec: clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: int32(b.o.Heartbeat / time.Second),
				Identity: rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"}},
		}); err != nil {
			return fmt.Errorf("create MemberCluster %s: %w", name, err)
		}
		acfg := cfg
		if b.env != nil {
			u, err := b.env.ControlPlane.AddUser(envtest.User{Name: name + "-agent"}, nil)
			if err != nil {
				return fmt.Errorf("identity of %s: %w", name, err)
			}
			acfg = u.Config()
			acfg.QPS, acfg.Burst = 50, 100
		}
		c, err := client.New(acfg, client.Options{Scheme: b.scheme})
		if err != nil {
			return err
		}
		a := &testenv.StandInAgent{Client: c, Member: name}
		b.agents[name] = a
		go b.heartbeat(ctx, a)
	}
	return nil
}

// heartbeat reports the member every Heartbeat, and at once when the hub makes its
// InternalMemberCluster or changes its spec. The agent reads its InternalMemberCluster
// from the bench's watch cache, as a real agent reads it from its informer's: a heartbeat
// is one write (three requests when each agent read it first, half the API server's
// requests at 1,000 members).
func (b *bench) heartbeat(ctx context.Context, a *testenv.StandInAgent) {
	key := client.ObjectKey{Namespace: membership.Namespace(a.Member), Name: a.Member}
	for {
		wait := b.o.Heartbeat
		imc := &clusterv1beta1.InternalMemberCluster{}
		if err := b.cache.Get(ctx, key, imc); err != nil {
			// Not made yet: its creation kicks.
			wait = min(wait, 5*time.Second)
		} else if err := a.HeartbeatOn(ctx, imc); err != nil {
			// The hub changed it after the cache's copy (a conflict), or a failed write:
			// try again soon on the cache's next copy.
			wait = min(wait, time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-b.kicks[a.Member]:
		case <-time.After(wait):
		}
	}
}

// kick wakes the agent of an InternalMemberCluster.
func (b *bench) kick(o any) {
	imc, ok := o.(*clusterv1beta1.InternalMemberCluster)
	if !ok {
		return
	}
	if ch := b.kicks[imc.Name]; ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// workChanged schedules the member's report on a Work the hub wrote, ReportDelay later.
func (b *bench) workChanged(ctx context.Context, o any) {
	w, ok := o.(*v1beta1.Work)
	if !ok {
		return
	}
	a := b.agents[strings.TrimPrefix(w.Namespace, "fleet-member-")]
	if a == nil {
		return
	}
	key := client.ObjectKeyFromObject(w)
	b.mu.Lock()
	if b.pending[key.String()] {
		b.mu.Unlock()
		return
	}
	b.pending[key.String()] = true
	b.mu.Unlock()
	var report func()
	report = func() {
		b.mu.Lock()
		delete(b.pending, key.String())
		b.mu.Unlock()
		cur := &v1beta1.Work{}
		if err := b.cache.Get(ctx, key, cur); err != nil {
			return
		}
		if err := a.ReportWork(ctx, cur); err != nil {
			if ctx.Err() == nil {
				b.mu.Lock()
				b.pending[key.String()] = true
				b.mu.Unlock()
				time.AfterFunc(100*time.Millisecond, report)
			}
			return
		}
		b.step(cur.Labels[v1beta1.CRPTrackingLabel], 3, key.String())
	}
	time.AfterFunc(b.o.ReportDelay, report)
}

// startHub runs the hub process with a metrics endpoint of its own.
func (b *bench) startHub() error {
	kc := filepath.Join(b.dir, "hub.kubeconfig")
	if err := writeKubeconfig(b.cfg, kc); err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	b.metrics = l.Addr().String()
	_ = l.Close()
	args := append(slices.Clone(b.o.HubCommand[1:]), "hub", "--kubeconfig", kc, "--leader-elect=false",
		"--metrics-bind-address", b.metrics, "--health-probe-bind-address", "0", "--log-format", "text")
	args = append(args, b.o.HubFlags...)
	logf, err := os.Create(filepath.Join(os.TempDir(), "fleet-bench-hub.log"))
	if err != nil {
		return err
	}
	b.hub = exec.Command(b.o.HubCommand[0], args...)
	b.hub.Stdout, b.hub.Stderr = logf, logf
	if err := b.hub.Start(); err != nil {
		return fmt.Errorf("start the hub: %w", err)
	}
	b.log("hub started (pid %d), log in %s", b.hub.Process.Pid, logf.Name())
	return nil
}

// stopHub ends the hub: SIGKILL when kill, else SIGTERM.
func (b *bench) stopHub(kill bool) {
	if b.hub == nil || b.hub.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = b.hub.Process.Signal(sig)
	_, _ = b.hub.Process.Wait()
	b.hub = nil
}

func (b *bench) run(ctx context.Context) (*Result, error) {
	res := &Result{Members: b.o.Members, Placements: b.o.Placements, Pick: b.o.Pick, Concurrent: max(b.o.Concurrent, 1)}
	start := time.Now()
	if err := b.startHub(); err != nil {
		return nil, err
	}
	if err := b.until(ctx, "every member joined and healthy", b.allHealthy); err != nil {
		return nil, err
	}
	res.JoinSeconds = time.Since(start).Seconds()
	b.log("%d members joined and healthy after %.1fs", b.o.Members, res.JoinSeconds)

	m0, err := b.scrape()
	if err != nil {
		return nil, err
	}
	u0 := b.usage()
	t0 := time.Now()
	times, err := b.place(ctx)
	if err != nil {
		return nil, err
	}
	res.PlacementPhaseSeconds = time.Since(t0).Seconds()
	m1, err := b.scrape()
	if err != nil {
		return nil, err
	}
	u1 := b.usage()
	res.Available = percentiles(times)
	b.mu.Lock()
	for i, n := range stepNames {
		var ds []time.Duration
		for _, m := range b.steps {
			if m.done[i] > 0 {
				ds = append(ds, m.done[i])
			}
		}
		res.Steps = append(res.Steps, Step{Name: n, Seconds: percentiles(ds)})
	}
	b.mu.Unlock()
	res.Decisions = m1.decisions - m0.decisions
	res.ServedInline = m1.servedInline - m0.servedInline
	res.APICalls = m1.requests - m0.requests
	res.Retries, res.WaitSeconds = m1.retries-m0.retries, round(m1.waited-m0.waited)
	if n := m1.decideCount - m0.decideCount; n > 0 {
		res.MeanDecisionSeconds = math.Round((m1.decideSum-m0.decideSum)/n*1e4) / 1e4
	}
	for k, n := range m1.durCount {
		if d := n - m0.durCount[k]; d > 0 {
			if res.MeanDecisionSecondsByController == nil {
				res.MeanDecisionSecondsByController = map[string]float64{}
			}
			res.MeanDecisionSecondsByController[k] = math.Round((m1.durSum[k]-m0.durSum[k])/d*1e4) / 1e4
			if res.MeanWaitSecondsByController == nil {
				res.MeanWaitSecondsByController = map[string]float64{}
			}
			res.MeanWaitSecondsByController[k] = math.Round((m1.waitSum[k]-m0.waitSum[k])/d*1e4) / 1e4
		}
	}
	if res.Decisions > 0 {
		res.APICallsPerDecision = res.APICalls / res.Decisions
	}
	for k, v := range m1.byController {
		if d := v - m0.byController[k]; d > 0 {
			if res.DecisionsByController == nil {
				res.DecisionsByController = map[string]float64{}
			}
			res.DecisionsByController[k] = d
		}
	}
	var writes float64
	for k, v := range m1.writes {
		if d := v - m0.writes[k]; d > 0 {
			if res.Writes == nil {
				res.Writes = map[string]float64{}
			}
			res.Writes[k] = d
			writes += d
		}
	}
	if n := b.bindingsPlaced(); n > 0 {
		res.WritesPerBinding = math.Round(writes/float64(n)*10) / 10
	}
	span := time.Since(t0)
	res.Hub = diff(u0["hub"], u1["hub"], span)
	if _, ok := u1["kube-apiserver"]; ok {
		a, e := diff(u0["kube-apiserver"], u1["kube-apiserver"], span), diff(u0["etcd"], u1["etcd"], span)
		res.APIServer, res.Etcd = &a, &e
	}
	b.log("%d placements available; p50 %.2fs p90 %.2fs", len(times), res.Available.P50, res.Available.P90)
	if b.o.Steady > 0 {
		s0 := b.usage()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(b.o.Steady):
		}
		res.SteadyHubCPUPercent = diff(s0["hub"], b.usage()["hub"], b.o.Steady).CPUPercent
	}
	if b.o.Restart {
		b.log("SIGKILL of the hub; starting a new one")
		b.stopHub(true)
		rs := time.Now()
		if err := b.startHub(); err != nil {
			return nil, err
		}
		// Settled: every placement decided again (the policy-snapshot controller, which a
		// starting hub wakes for each, has taken them all, deciding or finding them served
		// inline), then no decision about placements, bindings or Works for quietPeriod.
		// The membership decisions of the members' heartbeats (17 a second at 1,000
		// members) never stop, and a new hub's first round of them is counted in the
		// decisions.
		last, lastChange := -1.0, time.Now()
		var firstDecision time.Time
		for {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("restart: %w", ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
			m, err := b.scrape()
			if err != nil {
				continue // not listening yet
			}
			if m.placementReconciles > 0 && firstDecision.IsZero() {
				firstDecision = time.Now()
			}
			if m.placementReconciles != last {
				last, lastChange = m.placementReconciles, time.Now()
				res.RestartDecisions, res.RestartServedInline = m.decisions, m.servedInline
				continue
			}
			if last > 0 && m.snapshotReconciles >= float64(b.o.Placements) && time.Since(lastChange) >= quietPeriod {
				break
			}
		}
		res.RestartSeconds = lastChange.Sub(rs).Seconds()
		res.RestartFirstDecisionSeconds = firstDecision.Sub(rs).Seconds()
		if err := b.until(ctx, "every placement available after the restart", func(ctx context.Context) error {
			for i := range b.o.Placements {
				if err := b.available(ctx, placementName(i)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		b.log("restarted hub settled after %.1fs (%v decisions)", res.RestartSeconds, last)
	}
	return res, nil
}

func placementName(i int) string { return fmt.Sprintf("bench-%04d", i) }

// place creates the placements, Concurrent at a time, and times each to Available.
func (b *bench) place(ctx context.Context) ([]time.Duration, error) {
	conc := max(b.o.Concurrent, 1)
	times := make([]time.Duration, b.o.Placements)
	errs := make([]error, b.o.Placements)
	next := make(chan int)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := range next {
				t, err := b.placeOne(ctx, i)
				times[i], errs[i] = t, err
			}
		})
	}
	for i := range b.o.Placements {
		next <- i
	}
	close(next)
	wg.Wait()
	return times, errors.Join(errs...)
}

func (b *bench) placeOne(ctx context.Context, i int) (time.Duration, error) {
	name := placementName(i)
	policy := &v1beta1.PlacementPolicy{PlacementType: placement.PickAll}
	if b.o.Pick > 0 && b.o.Pick < b.o.Members {
		n := int32(b.o.Pick)
		policy = &v1beta1.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n,
			Affinity: &v1beta1.Affinity{ClusterAffinity: &v1beta1.ClusterAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1beta1.ClusterSelector{
				ClusterSelectorTerms: []v1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet-bench": "member"}}}},
			}}}}
	}
	start := time.Now()
	m := &milestones{created: start}
	for i := range m.seen {
		m.seen[i] = map[string]bool{}
	}
	b.mu.Lock()
	b.steps[name] = m
	b.mu.Unlock()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"n": name}},
		&v1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: []v1beta1.ClusterResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}}, Policy: policy}},
	} {
		if err := b.admin.Create(ctx, o); err != nil {
			return 0, fmt.Errorf("create %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	for {
		if err := b.available(ctx, name); err == nil {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("placement %s: %w", name, b.available(ctx, name))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// available says why the placement is not available yet on the members it should pick.
func (b *bench) available(ctx context.Context, name string) error {
	crp := &v1beta1.ClusterResourcePlacement{}
	if err := b.cache.Get(ctx, client.ObjectKey{Name: name}, crp); err != nil {
		return err
	}
	want := b.o.Members
	if b.o.Pick > 0 {
		want = b.o.Pick
	}
	c := meta.FindStatusCondition(crp.Status.Conditions, "ClusterResourcePlacementAvailable")
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != crp.Generation || len(crp.Status.PlacementStatuses) != want {
		return fmt.Errorf("placement %s not available on %d members yet", name, want)
	}
	return nil
}

func (b *bench) allHealthy(ctx context.Context) error {
	var l clusterv1beta1.MemberClusterList
	if err := b.cache.List(ctx, &l); err != nil {
		return err
	}
	n := 0
	for _, mc := range l.Items {
		if meta.IsStatusConditionTrue(mc.Status.Conditions, "Joined") && meta.IsStatusConditionTrue(mc.Status.Conditions, "Healthy") {
			n++
		}
	}
	if n < b.o.Members {
		return fmt.Errorf("%d of %d members joined and healthy", n, b.o.Members)
	}
	return nil
}

func (b *bench) until(ctx context.Context, what string, f func(context.Context) error) error {
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if b.hub != nil && b.hub.ProcessState != nil {
			return fmt.Errorf("%s: the hub exited", what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %v)", what, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type metricSums struct {
	// reconciles counts every dequeued key; decisions leaves out those skipped because
	// another decision had served them inline.
	reconciles, decisions, requests, retries, waited, decideSum, decideCount float64
	servedInline                                                             float64
	// placementReconciles are the reconciles of every controller but membership, whose
	// heartbeats never stop.
	placementReconciles float64
	// snapshotReconciles are the policy-snapshot controller's, decided or served inline:
	// a starting hub wakes it once for every placement.
	snapshotReconciles   float64
	writes, byController map[string]float64
	// decision time by controller: sum and count of the hub's own histogram
	durSum, durCount map[string]float64
	// waits before deciding by controller: sum of the hub's histogram
	waitSum map[string]float64
}

// scrape reads the hub's decisions (controller-runtime's reconcile count, over every
// controller) and API requests (client-go's) from its metrics endpoint.
func (b *bench) scrape() (metricSums, error) {
	m := metricSums{writes: map[string]float64{}, byController: map[string]float64{}, durSum: map[string]float64{}, durCount: map[string]float64{}, waitSum: map[string]float64{}}
	resp, err := http.Get("http://" + b.metrics + "/metrics")
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var into *float64
		switch {
		case strings.HasPrefix(line, "controller_runtime_reconcile_total{"):
			into = &m.decisions
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.byController[label(line, "controller")] += v
				if label(line, "controller") != "membership" {
					m.placementReconciles += v
				}
				if label(line, "controller") == "policy-snapshot" {
					m.snapshotReconciles += v
				}
			}
		case strings.HasPrefix(line, "fleetsim_hub_wakes_served_inline_total{"):
			into = &m.servedInline
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.byController[label(line, "controller")] -= v
			}
		case strings.HasPrefix(line, "rest_client_requests_total{"):
			into = &m.requests
		case strings.HasPrefix(line, "fleetsim_hub_decision_retries_total{"):
			into = &m.retries
		case strings.HasPrefix(line, "fleetsim_hub_expectation_wait_seconds_total "):
			into = &m.waited
		case strings.HasPrefix(line, "fleetsim_hub_decision_duration_seconds_sum{"):
			into = &m.decideSum
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.durSum[label(line, "controller")] += v
			}
		case strings.HasPrefix(line, "fleetsim_hub_decision_duration_seconds_count{"):
			into = &m.decideCount
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.durCount[label(line, "controller")] += v
			}
		case strings.HasPrefix(line, "fleetsim_hub_decision_wait_seconds_sum{"):
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.waitSum[label(line, "controller")] += v
			}
			continue
		case strings.HasPrefix(line, "fleetsim_hub_writes_total{"):
			kind, verb := label(line, "kind"), label(line, "verb")
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				m.writes[kind+" "+verb] += v
			}
			continue
		default:
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			*into += v
		}
	}
	m.reconciles = m.decisions
	m.decisions -= m.servedInline
	return m, sc.Err()
}

// bindingsPlaced is how many bindings the placement phase makes.
func (b *bench) bindingsPlaced() int { return b.perPlacement() * b.o.Placements }

// perPlacement is how many bindings a placement makes: pick members (every member for
// PickAll).
func (b *bench) perPlacement() int {
	if b.o.Pick > 0 && b.o.Pick < b.o.Members {
		return b.o.Pick
	}
	return b.o.Members
}

// label reads one label's value from a line of the Prometheus text format.
func label(line, name string) string {
	_, rest, ok := strings.Cut(line, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

type sample struct {
	cpu float64 // seconds
	rss float64 // MiB
}

// usage samples the hub, and the kube-apiserver and etcd this process started.
func (b *bench) usage() map[string]sample {
	out := map[string]sample{}
	if b.hub != nil && b.hub.Process != nil {
		if s, ok := procSample(b.hub.Process.Pid); ok {
			out["hub"] = s
		}
	}
	if b.env == nil {
		return out
	}
	for comm, pid := range childServers(os.Getpid()) {
		if s, ok := procSample(pid); ok {
			out[comm] = s
		}
	}
	return out
}

// childServers finds the kube-apiserver and etcd that process parent started, by command.
func childServers(parent int) map[string]int {
	out := map[string]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		comm, rest, ok := splitStat(string(stat))
		if !ok || len(rest) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(rest[1]); ppid == parent && (comm == "kube-apiserver" || comm == "etcd") {
			out[comm] = pid
		}
	}
	return out
}

// splitStat splits /proc/PID/stat into the command and the fields after it.
func splitStat(s string) (string, []string, bool) {
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", nil, false
	}
	return s[i+1 : j], strings.Fields(s[j+1:]), true
}

const clockTicks = 100 // USER_HZ on Linux

func procSample(pid int) (sample, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return sample{}, false
	}
	_, f, ok := splitStat(string(stat))
	if !ok || len(f) < 13 {
		return sample{}, false
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	s := sample{cpu: (ut + st) / clockTicks}
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				if kb, err := strconv.ParseFloat(strings.Fields(line)[1], 64); err == nil {
					s.rss = kb / 1024
				}
			}
		}
	}
	return s, true
}

func diff(a, b sample, span time.Duration) Usage {
	cpu := b.cpu - a.cpu
	return Usage{CPUSeconds: round(cpu), CPUPercent: round(100 * cpu / span.Seconds()), RSSMiB: round(b.rss)}
}

func round(f float64) float64 { return math.Round(f*100) / 100 }

func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	s := make([]float64, len(ds))
	sum := 0.0
	for i, d := range ds {
		s[i] = d.Seconds()
		sum += s[i]
	}
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return round(s[max(i, 0)])
	}
	return Percentiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: round(s[len(s)-1]), Mean: round(sum / float64(len(s)))}
}

// writeKubeconfig writes cfg (certificate or token auth) as a kubeconfig file.
func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile, Token: cfg.BearerToken}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "hub"
	return clientcmd.WriteToFile(*kc, path)
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
