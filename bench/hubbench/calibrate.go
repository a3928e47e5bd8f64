package hubbench

// Calibrate: the measurements behind every constant of the hub model (sim/timing) on this
// machine. Each constant's Source names the measurement it came from, so that a calibration
// file says how to measure it again.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/sim/timing"
)

// The calibration's own workloads: writes of each kind, a single writer's round trips,
// watched creates, and one small hub run (not one of the accuracy cases, which are 10, 40,
// 100, 300 and 1,000 members).
const (
	calibrateWrites     = 500
	calibrateSerial     = 200
	calibrateWatched    = 100
	calibrateMembers    = 20
	calibratePlacements = 4
)

// Calibrate measures this machine's API server and hub for the model: o gives the hub and
// the agents' settings (workers, report delay, heartbeat); its workload is the calibration's
// own.
func Calibrate(ctx context.Context, o Options) (*timing.Calibration, error) {
	c := &timing.Calibration{Machine: fmt.Sprintf("%d cores, %s/%s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH),
		MeasuredAt: time.Now().UTC().Format(time.RFC3339), Load: loadAverage()}
	if err := calibrateAPIServer(ctx, o, c); err != nil {
		return nil, err
	}
	if err := calibrateHub(ctx, o, c); err != nil {
		return nil, err
	}
	setCodeConstants(c)
	return c, c.Validate()
}

// loadAverage is /proc/loadavg's three figures, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func msConst(v float64, source string) timing.Constant {
	return timing.Constant{Value: math.Round(max(v, 0)*1000) / 1000, Unit: "ms", Source: source}
}

const workloadSource = "fleet bench hub --calibrate: the BenchmarkAPIServerWrites workload (bench/hubbench/writes.go)"

// calibrateAPIServer starts kube-apiserver and etcd alone and measures the write workload,
// a single writer's round trips, the watch delay and a LIST per object.
func calibrateAPIServer(ctx context.Context, o Options, c *timing.Calibration) error {
	b := &bench{o: o, log: func(string, ...any) {}}
	if o.Progress != nil {
		b.log = func(f string, a ...any) {
			fmt.Fprintf(o.Progress, "%s "+f+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
		}
	}
	if o.Kubeconfig != "" {
		return errors.New("--calibrate starts its own kube-apiserver and etcd to measure them: drop --kubeconfig")
	}
	if err := b.startServers(); err != nil {
		return err
	}
	defer func() { _ = b.env.Stop() }()
	scheme := kruntime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		return err
	}
	cfg := *b.cfg
	cfg.QPS, cfg.Burst = 10000, 10000 // the server, not the client, is measured
	cl, err := client.New(&cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	// First the informer delay (the cheapest, and the one that depends on the watch path).
	delay, err := watchDelay(ctx, &cfg, scheme, cl)
	if err != nil {
		return err
	}
	c.Hub.InformerDelay = msConst(delay, fmt.Sprintf("fleet bench hub --calibrate: %d ConfigMaps created one by one, median time from the create's answer to an informer's add event", calibrateWatched))
	b.log("informer delay %.1f ms", delay)
	wl := &writeLoad{c: cl}
	if err := wl.setUp(ctx); err != nil {
		return err
	}
	cost := map[string]float64{}
	var cores []float64
	for _, kind := range writeKinds {
		write, err := wl.prepare(ctx, kind, calibrateWrites)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		f, err := measureWrites(calibrateWrites, benchWriters, write)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		cost[kind] = f.apiserverMS + f.etcdMS
		cores = append(cores, f.perSecond*cost[kind]/1000)
		b.log("%s: %.0f writes/s, %.2f ms of kube-apiserver and etcd CPU a write", kind, f.perSecond, cost[kind])
	}
	slices.Sort(cores)
	a := &c.APIServer
	src := func(kind string) string {
		return fmt.Sprintf("%s, %d %s writes, %d at once: kube-apiserver + etcd CPU per write", workloadSource, calibrateWrites, kind, benchWriters)
	}
	a.BindingCreate = msConst(cost["binding-create"], src("binding-create"))
	a.BindingStatus = msConst(cost["binding-status"], src("binding-status"))
	a.WorkCreate = msConst(cost["work-create"], src("work-create"))
	a.WorkStatus = msConst(cost["work-status"], src("work-status"))
	a.SnapshotCreate = msConst(cost["binding-create"], "as apiServer.bindingCreate: a create of a cluster-scoped object of similar size (not measured on its own)")
	a.PlacementStatus = msConst(cost["binding-status"], "as apiServer.bindingStatus: a status write through the status subresource (not measured on its own)")
	a.HeartbeatWrite = msConst(cost["binding-status"], "as apiServer.bindingStatus: a heartbeat is a status write (not measured on its own)")
	a.Cores = timing.Constant{Value: math.Round(cores[len(cores)/2]*100) / 100, Unit: "cores",
		Source: fmt.Sprintf("%s: writes a second × CPU per write at %d writes at once, the median of the four kinds", workloadSource, benchWriters)}

	// A single writer: each write's time beyond its CPU is the round trip.
	write, err := wl.prepare(ctx, "binding-create", calibrateSerial)
	if err != nil {
		return err
	}
	f, err := measureWrites(calibrateSerial, 1, write)
	if err != nil {
		return err
	}
	a.RoundTrip = msConst(1000/f.perSecond-(f.apiserverMS+f.etcdMS), fmt.Sprintf(
		"%s: %d binding creates by one writer, time per write minus its CPU", workloadSource, calibrateSerial))

	// LIST of what the workload stored, per object, as a new hub's informers list.
	var bl v1beta1.ClusterResourceBindingList
	var wlist v1beta1.WorkList
	start := time.Now()
	if err := cl.List(ctx, &bl); err != nil {
		return err
	}
	if err := cl.List(ctx, &wlist); err != nil {
		return err
	}
	n := len(bl.Items) + len(wlist.Items)
	a.ListPerObject = msConst(float64(time.Since(start).Microseconds())/1000/float64(max(n, 1)),
		fmt.Sprintf("fleet bench hub --calibrate: one LIST of the %d bindings and Works the workload stored, time per object", n))

	return nil
}

// watchDelay is the median time in ms from a create's answer to its event in an informer's
// handler (a controller-runtime cache, as the hub's and the bench's).
func watchDelay(ctx context.Context, cfg *rest.Config, scheme *kruntime.Scheme, c client.Client) (float64, error) {
	ns := "fleet-calibrate-watch"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cache, err := ctrlcache.New(cfg, ctrlcache.Options{Scheme: scheme})
	if err != nil {
		return 0, err
	}
	inf, err := cache.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return 0, err
	}
	seen := make(chan string, calibrateWatched+16)
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Namespace == ns {
			seen <- cm.Name
		}
	}}); err != nil {
		return 0, err
	}
	go func() { _ = cache.Start(ctx) }()
	if !cache.WaitForCacheSync(ctx) {
		return 0, errors.New("the calibration's informer did not sync")
	}
	var ds []float64
	for i := range calibrateWatched {
		name := fmt.Sprintf("watched-%03d", i)
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			return 0, err
		}
		answered := time.Now()
		for got := ""; got != name; {
			select {
			case got = <-seen:
			case <-time.After(30 * time.Second):
				return 0, fmt.Errorf("no informer event for ConfigMap %s after 30s", name)
			}
		}
		ds = append(ds, float64(time.Since(answered).Microseconds())/1000)
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}

// calibrateHub runs the hub on a small workload and derives its CPU per binding and per
// decision and a new hub's start from the result.
func calibrateHub(ctx context.Context, o Options, c *timing.Calibration) error {
	o.Members, o.Placements, o.Pick, o.Concurrent, o.Restart, o.Steady = calibrateMembers, calibratePlacements, 0, 1, true, 0
	res, err := Run(ctx, o)
	if err != nil {
		return fmt.Errorf("the calibration's hub run: %w", err)
	}
	bindings := float64(calibrateMembers * calibratePlacements)
	run := fmt.Sprintf("fleet bench hub --calibrate: the hub's run of %d PickAll placements on %d members, one at a time, then --restart", calibratePlacements, calibrateMembers)
	// Each binding is handled by two decisions: the placement-wide one that creates it and
	// the rollout that fans its report in.
	perBinding := 1000 * res.Hub.CPUSeconds / (2 * bindings)
	c.Hub.CPUPerBinding = msConst(perBinding, run+": the hub's CPU in the placement phase over twice the bindings")
	// One run gives one CPU figure: it is charged per binding, and no part of it per
	// decision.
	c.Hub.CPUPerDecision = msConst(0, run+": the hub's CPU of the run is charged per binding (hub.cpuPerBinding); one run does not separate a per-decision part")
	// The API server's CPU per write with everything watching, against the workload alone.
	var hubWrites float64
	for _, v := range res.Writes {
		hubWrites += v
	}
	reports := bindings
	other := float64(3*calibratePlacements) + 2*calibrateMembers*res.PlacementPhaseSeconds/max(o.Heartbeat.Seconds(), 1)
	if mix := timing.MixCost(c, res.Writes, reports, other); res.APIServer != nil && mix > 0 {
		perWrite := 1000 * (res.APIServer.CPUSeconds + res.Etcd.CPUSeconds) / (hubWrites + reports + other)
		c.APIServer.Watched = timing.Constant{Value: math.Round(perWrite/mix*100) / 100, Unit: "ratio", Source: run +
			fmt.Sprintf(": kube-apiserver and etcd CPU per write in the placement phase (%.2f ms: the hub's writes, the agents' reports, the bench's creates and the heartbeats) over the workload's cost of the same writes (%.2f ms)", perWrite, mix)}
	}
	c.Hub.FirstPlacement = msConst(1000*(res.Available.Max-res.Available.P50), run+": the first placement's time to Available (the maximum) less the median")
	objects := float64(calibratePlacements*(3+2*calibrateMembers) + 2*calibrateMembers)
	c.Hub.StartDelay = msConst(1000*res.RestartFirstDecisionSeconds-objects*c.APIServer.ListPerObject.Value,
		run+": the restarted hub's time to its first decision, less listing what is stored at apiServer.listPerObject")
	return nil
}

// setCodeConstants sets the constants prod/hub's and the bench's code fix.
func setCodeConstants(c *timing.Calibration) {
	c.Hub.FlushParallelism = timing.Constant{Value: 16, Unit: "writes", Source: "prod/hub/flush.go: flushParallelism"}
	c.Hub.ReportBatchDelay = timing.Constant{Value: 20, Unit: "ms", Source: "prod/hub/fanins.go: reportBatchDelay"}
	c.Hub.ReportWindow = timing.Constant{Value: 300, Unit: "ms", Source: "prod/hub/fanins.go: reportWindow"}
	c.Hub.AwaitLimit = timing.Constant{Value: 10_000, Unit: "ms", Source: "prod/hub/batch.go: awaitLimit"}
	c.Agent.PollInterval = timing.Constant{Value: 20, Unit: "ms", Source: "bench/hubbench/run.go: placeOne checks Available every 20ms"}
}
