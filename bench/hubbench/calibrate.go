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
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/sim/timing"
)

// The calibration's own workloads: writes of each kind (Options.CalibrateWrites), lists of
// each kind at a quarter of that and all of it, a single writer's round trips, watched
// creates, and one small hub run (not one of the accuracy cases, which are 10, 40, 100, 300
// and 1,000 members).
const (
	calibrateSerial = 200
	// statusSizeRatio: the status writes that list clusters are measured again at
	// --calibrate-decisions over this many clusters (100 and 10 by default).
	statusSizeRatio     = 10
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
	wl := &writeLoad{c: cl, decisions: o.CalibrateDecisions}
	if err := wl.setUp(ctx); err != nil {
		return err
	}
	writes := o.CalibrateWrites
	if writes <= 0 {
		writes = DefaultCalibrateWrites
	}
	// The lists first, on an API server holding nothing of their kinds yet.
	if err := calibrateLists(ctx, b, wl, max(writes/4, 1), writes, c); err != nil {
		return err
	}
	cost := map[string]float64{}
	var cores []float64
	for _, kind := range writeKinds {
		write, err := wl.prepare(ctx, kind, writes)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		f, err := measureWrites(writes, benchWriters, write)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		cost[kind] = f.apiserverMS + f.etcdMS
		cores = append(cores, f.perSecond*cost[kind]/1000)
		b.log("%s: %.0f writes/s, %.2f ms of kube-apiserver and etcd CPU a write", kind, f.perSecond, cost[kind])
	}
	// The status writes that list clusters again, at a tenth of the clusters: their cost
	// grows with the object (timing.Calibration.PlacementStatusCost draws the line).
	large := wl.clusters()
	wl.decisions = max(large/statusSizeRatio, 1)
	smallClusters := wl.clusters()
	smallCost := map[string]float64{}
	for _, kind := range statusKinds {
		n := max(writes/4, 1)
		write, err := wl.prepare(ctx, kind, n)
		if err != nil {
			return fmt.Errorf("%s at %d clusters: %w", kind, smallClusters, err)
		}
		f, err := measureWrites(n, benchWriters, write)
		if err != nil {
			return fmt.Errorf("%s at %d clusters: %w", kind, smallClusters, err)
		}
		smallCost[kind] = f.apiserverMS + f.etcdMS
		b.log("%s at %d clusters: %.0f writes/s, %.2f ms of kube-apiserver and etcd CPU a write", kind, smallClusters, f.perSecond, smallCost[kind])
	}
	wl.decisions = large
	slices.Sort(cores)
	a := &c.APIServer
	a.StatusClustersSmall = timing.Constant{Value: float64(smallClusters), Unit: "clusters",
		Source: fmt.Sprintf("fleet bench hub --calibrate: the smaller size the status writes were measured at (--calibrate-decisions / %d)", statusSizeRatio)}
	a.StatusClustersLarge = timing.Constant{Value: float64(large), Unit: "clusters",
		Source: "fleet bench hub --calibrate: the larger size the status writes were measured at (--calibrate-decisions)"}
	smallSrc := func(kind string) string {
		return fmt.Sprintf("%s, %d %s writes, %d at once: kube-apiserver + etcd CPU per write (%d clusters listed)", workloadSource, max(writes/4, 1), kind, benchWriters, smallClusters)
	}
	a.PlacementStatusSmall = msConst(smallCost["placement-status"], smallSrc("placement-status"))
	a.PolicySnapshotStatusSmall = msConst(smallCost["policy-snapshot-status"], smallSrc("policy-snapshot-status"))
	src := func(kind string) string {
		return fmt.Sprintf("%s, %d %s writes, %d at once: kube-apiserver + etcd CPU per write", workloadSource, writes, kind, benchWriters)
	}
	clusters := fmt.Sprintf(" (%d cluster decisions a snapshot, --calibrate-decisions)", wl.clusters())
	a.BindingCreate = msConst(cost["binding-create"], src("binding-create"))
	a.BindingStatus = msConst(cost["binding-status"], src("binding-status"))
	a.WorkCreate = msConst(cost["work-create"], src("work-create"))
	a.WorkStatus = msConst(cost["work-status"], src("work-status"))
	a.SnapshotCreate = msConst((cost["policy-snapshot-create"]+cost["resource-snapshot-create"])/2,
		fmt.Sprintf("%s, %d policy-snapshot-create and %d resource-snapshot-create writes, %d at once: kube-apiserver + etcd CPU per write, the mean of the two kinds", workloadSource, writes, writes, benchWriters))
	a.PolicySnapshotStatus = msConst(cost["policy-snapshot-status"], src("policy-snapshot-status")+clusters)
	a.PlacementStatus = msConst(cost["placement-status"], src("placement-status")+fmt.Sprintf(" (a status of %d clusters, --calibrate-decisions)", wl.clusters()))
	a.HeartbeatWrite = msConst((cost["member-status"]+cost["member-cluster-status"])/2,
		fmt.Sprintf("%s, %d member-status (the agent's InternalMemberCluster heartbeat) and %d member-cluster-status (the hub's MemberCluster status) writes, %d at once: kube-apiserver + etcd CPU per write, the mean of the two a heartbeat makes", workloadSource, writes, writes, benchWriters))
	a.Cores = timing.Constant{Value: math.Round(cores[len(cores)/2]*100) / 100, Unit: "cores",
		Source: fmt.Sprintf("%s: writes a second × CPU per write at %d writes at once, the median of the %d kinds", workloadSource, benchWriters, len(cores))}

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

	// LIST of the placements and members the workload stored, per object: the kinds a
	// restarted hub lists that calibrateLists does not measure on their own.
	var pl v1beta1.ClusterResourcePlacementList
	var mcl clusterv1beta1.MemberClusterList
	var imcl clusterv1beta1.InternalMemberClusterList
	start := time.Now()
	for _, l := range []client.ObjectList{&pl, &mcl, &imcl} {
		if err := cl.List(ctx, l, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}}); err != nil {
			return err
		}
	}
	n := len(pl.Items) + len(mcl.Items) + len(imcl.Items)
	a.ListPerObject = msConst(float64(time.Since(start).Microseconds())/1000/float64(max(n, 1)),
		fmt.Sprintf("fleet bench hub --calibrate: one LIST each of the %d placements, MemberClusters and InternalMemberClusters the workload stored, time per object", n))
	return nil
}

// calibrateLists measures the LIST of each kind listKinds names at small and large objects.
func calibrateLists(ctx context.Context, b *bench, wl *writeLoad, small, large int, c *timing.Calibration) error {
	a := &c.APIServer
	sizeSrc := "fleet bench hub --calibrate: the list workload (bench/hubbench/lists.go) stores each kind up to this many objects and times its LIST (--calibrate-writes"
	a.ListSmall = timing.Constant{Value: float64(small), Unit: "objects", Source: sizeSrc + " / 4)"}
	a.ListLarge = timing.Constant{Value: float64(large), Unit: "objects", Source: sizeSrc + ")"}
	into := map[string][2]*timing.Constant{
		"bindings":           {&a.ListBindingSmall, &a.ListBindingLarge},
		"Works":              {&a.ListWorkSmall, &a.ListWorkLarge},
		"policy snapshots":   {&a.ListPolicySnapshotSmall, &a.ListPolicySnapshotLarge},
		"resource snapshots": {&a.ListResourceSnapshotSmall, &a.ListResourceSnapshotLarge},
	}
	for _, k := range listKinds {
		f, err := measureList(ctx, wl, k, small, large)
		if err != nil {
			return err
		}
		what := k.name
		if k.name == "policy snapshots" {
			what = fmt.Sprintf("policy snapshots of %d cluster decisions (--calibrate-decisions)", wl.clusters())
		}
		src := func(n int) string {
			return fmt.Sprintf("fleet bench hub --calibrate: the list workload (bench/hubbench/lists.go), a LIST (resourceVersion 0, as an informer's first) of %d %s, the median of %d, time per object", n, what, listRepeats)
		}
		*into[k.name][0] = msConst(f.small, src(small))
		*into[k.name][1] = msConst(f.large, src(large))
		b.log("LIST %s: %.3f ms an object at %d, %.3f at %d", k.name, f.small, small, f.large, large)
	}
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
	if mix := timing.MixCost(c, res.Writes, reports, other, calibrateMembers); res.APIServer != nil && mix > 0 {
		perWrite := 1000 * (res.APIServer.CPUSeconds + res.Etcd.CPUSeconds) / (hubWrites + reports + other)
		c.APIServer.Watched = timing.Constant{Value: math.Round(perWrite/mix*100) / 100, Unit: "ratio", Source: run +
			fmt.Sprintf(": kube-apiserver and etcd CPU per write in the placement phase (%.2f ms: the hub's writes, the agents' reports, the bench's creates and the heartbeats) over the workload's cost of the same writes (%.2f ms)", perWrite, mix)}
	}
	// The first placement, created when every member had joined, was slower than the next
	// by about the time the hub still needed to be warm: the hub was warm that long after
	// the join.
	c.Hub.WarmUp = msConst(1000*(res.JoinSeconds+res.Available.Max-res.Available.P50),
		run+": the members' join (from the hub's start to every member Joined and Healthy) plus the first placement's time to Available (the maximum) less the median")
	c.Hub.JoinBase = msConst(1000*res.FirstJoinSeconds, run+": from the hub's start to the first member Joined and Healthy")
	c.Hub.JoinPerMember = msConst(1000*(res.JoinSeconds-res.FirstJoinSeconds)/max(calibrateMembers-1, 1),
		fmt.Sprintf("%s: from the first member Joined and Healthy to the last, over the %d others", run, calibrateMembers-1))
	c.Hub.StartDelay = msConst(1000*res.RestartFirstDecisionSeconds-float64(c.RestartList(calibrateMembers, calibratePlacements, calibrateMembers).Microseconds())/1000,
		run+": the restarted hub's time to its first decision, less listing what is stored at the measured LIST costs (Calibration.RestartList)")
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
