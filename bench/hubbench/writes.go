package hubbench

// The API server's write workload: the writes of the kinds a placement costs (a binding
// created, its status written, a Work created, a member agent's report on it, the policy and
// resource snapshots created, the scheduler's decisions on the policy snapshot, the
// placement's status) and a member's heartbeat costs (the agent's InternalMemberCluster
// status, the hub's MemberCluster status), each kind on its own, timed with a number of
// writers in flight, with kube-apiserver's and etcd's CPU per write. Both
// BenchmarkAPIServerWrites and Calibrate run it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// benchWriters is how many writes the workload has in flight, as a hub's flush does
// (flushParallelism in prod/hub).
const benchWriters = 16

// statusKinds are the kinds whose writes list clusters, measured at two sizes.
var statusKinds = []string{"policy-snapshot-status", "placement-status"}

// writeKinds are the workload's kinds, in the order they run.
var writeKinds = []string{"binding-create", "binding-status", "work-create", "work-status",
	"policy-snapshot-create", "policy-snapshot-status", "resource-snapshot-create", "placement-status",
	"member-status", "member-cluster-status"}

// defaultDecisions is how many clusters the workload's policy snapshots decide on and its
// placements' statuses list, unless a writeLoad says otherwise.
const defaultDecisions = 100

// writeLoad writes through one client; each prepare is a new round of objects. decisions is
// the clusters of a policy snapshot's decisions and of a placement's status (0:
// defaultDecisions).
type writeLoad struct {
	c         client.Client
	decisions int
	round     atomic.Int64
}

func (wl *writeLoad) clusters() int {
	if wl.decisions > 0 {
		return wl.decisions
	}
	return defaultDecisions
}

// setUp creates the namespace the Works go to.
func (wl *writeLoad) setUp(ctx context.Context) error {
	err := wl.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// prepare makes what n writes of kind need (the objects whose status they write, untimed)
// and returns the write of object i.
func (wl *writeLoad) prepare(ctx context.Context, kind string, n int) (func(i int) error, error) {
	r := wl.round.Add(1)
	c := wl.c
	switch kind {
	case "binding-create":
		return func(i int) error { return c.Create(ctx, benchBinding(r, i)) }, nil
	case "binding-status":
		objs, err := createAll(ctx, c, n, func(i int) *v1beta1.ClusterResourceBinding { return benchBinding(r, i) })
		if err != nil {
			return nil, err
		}
		return func(i int) error {
			objs[i].Status.Conditions = benchConditions(objs[i].Generation)
			return c.Status().Update(ctx, objs[i])
		}, nil
	case "work-create":
		return func(i int) error { return c.Create(ctx, benchWork(r, i)) }, nil
	case "work-status":
		// A member agent's report: the Work applied and available.
		objs, err := createAll(ctx, c, n, func(i int) *v1beta1.Work { return benchWork(r, i) })
		if err != nil {
			return nil, err
		}
		agent := &testenv.StandInAgent{Client: c, Member: "bench"}
		return func(i int) error { return agent.ReportWork(ctx, objs[i]) }, nil
	case "policy-snapshot-create":
		return func(i int) error { return c.Create(ctx, benchPolicySnapshot(r, i, wl.clusters())) }, nil
	case "policy-snapshot-status":
		// The scheduler's decisions, one a cluster.
		objs, err := createAll(ctx, c, n, func(i int) *v1beta1.ClusterSchedulingPolicySnapshot {
			return benchPolicySnapshot(r, i, wl.clusters())
		})
		if err != nil {
			return nil, err
		}
		return func(i int) error {
			objs[i].Status = benchPolicyStatus(objs[i].Generation, wl.clusters())
			return c.Status().Update(ctx, objs[i])
		}, nil
	case "resource-snapshot-create":
		return func(i int) error { return c.Create(ctx, benchResourceSnapshot(r, i)) }, nil
	case "placement-status":
		objs, err := createAll(ctx, c, n, func(i int) *v1beta1.ClusterResourcePlacement { return benchPlacement(r, i, wl.clusters()) })
		if err != nil {
			return nil, err
		}
		return func(i int) error {
			objs[i].Status = benchPlacementStatus(objs[i].Name, objs[i].Generation, wl.clusters())
			return c.Status().Update(ctx, objs[i])
		}, nil
	case "member-status":
		// A member agent's heartbeat on its InternalMemberCluster.
		objs, err := createAll(ctx, c, n, func(i int) *clusterv1beta1.InternalMemberCluster { return benchIMC(r, i) })
		if err != nil {
			return nil, err
		}
		return func(i int) error {
			objs[i].Status = benchIMCStatus(objs[i].Generation)
			return c.Status().Update(ctx, objs[i])
		}, nil
	case "member-cluster-status":
		// The hub's MemberCluster status after the heartbeat.
		objs, err := createAll(ctx, c, n, func(i int) *clusterv1beta1.MemberCluster { return benchMC(r, i) })
		if err != nil {
			return nil, err
		}
		return func(i int) error {
			objs[i].Status = benchMCStatus(objs[i].Generation)
			return c.Status().Update(ctx, objs[i])
		}, nil
	}
	return nil, fmt.Errorf("no write kind %q (want one of %v)", kind, writeKinds)
}

// createAll creates n objects, untimed, benchWriters at a time: the ones whose status a kind
// writes.
func createAll[T client.Object](ctx context.Context, c client.Client, n int, obj func(i int) T) ([]T, error) {
	objs := make([]T, n)
	for i := range objs {
		objs[i] = obj(i)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, benchWriters)
	for w := range benchWriters {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := c.Create(ctx, objs[i]); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return objs, nil
}

// writeFigures are one kind's figures: writes a second, and the CPU of kube-apiserver and
// etcd per write in milliseconds.
type writeFigures struct {
	perSecond, apiserverMS, etcdMS float64
}

// measureWrites runs write(0..n-1), writers at a time, and measures it.
func measureWrites(n, writers int, write func(i int) error) (writeFigures, error) {
	before := serverCPU()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range writers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := write(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, ok := failed.Load().(error); ok {
		return writeFigures{}, err
	}
	after := serverCPU()
	return writeFigures{perSecond: float64(n) / elapsed.Seconds(),
		apiserverMS: 1000 * (after["kube-apiserver"] - before["kube-apiserver"]) / float64(n),
		etcdMS:      1000 * (after["etcd"] - before["etcd"]) / float64(n)}, nil
}

// serverCPU is the CPU seconds of the kube-apiserver and etcd this process started.
func serverCPU() map[string]float64 {
	out := map[string]float64{}
	for comm, pid := range childServers(os.Getpid()) {
		if s, ok := procSample(pid); ok {
			out[comm] = s.cpu
		}
	}
	return out
}

func benchBinding(round int64, i int) *v1beta1.ClusterResourceBinding {
	member := fmt.Sprintf("member-%04d", i%1000)
	return &v1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:       fmt.Sprintf("bench-%d-%05d-%s", round, i, member),
			Labels:     map[string]string{v1beta1.CRPTrackingLabel: fmt.Sprintf("bench-%d", round)},
			Finalizers: []string{v1beta1.WorkCleanupFinalizer},
		},
		Spec: v1beta1.ResourceBindingSpec{
			State:                        "Bound",
			ResourceSnapshotName:         fmt.Sprintf("bench-%d-0-snapshot", round),
			SchedulingPolicySnapshotName: fmt.Sprintf("bench-%d-0", round),
			TargetCluster:                member,
			ClusterDecision: v1beta1.ClusterDecision{ClusterName: member, Selected: true,
				Reason: "picked by scheduling policy"},
		},
	}
}

// benchConditions are the conditions a binding's first status write holds.
func benchConditions(generation int64) []metav1.Condition {
	now := metav1.Now()
	var out []metav1.Condition
	for _, t := range []string{"RolloutStarted", "Overridden", "WorkSynchronized"} {
		out = append(out, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t,
			Message: "set by the write benchmark", ObservedGeneration: generation, LastTransitionTime: now})
	}
	return out
}

// benchNamespace holds the benchmark's Works, as a member's reserved namespace would.
const benchNamespace = "fleet-member-bench"

// benchWork is a Work of two manifests, a namespace and a ConfigMap, as the hub bench's
// placements select.
func benchWork(round int64, i int) *v1beta1.Work {
	ns := fmt.Sprintf("bench-%d-%05d", round, i)
	manifest := func(o any) v1beta1.Manifest {
		raw, err := json.Marshal(o)
		if err != nil {
			panic(err) // the objects below always marshal
		}
		return v1beta1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
	}
	return &v1beta1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ns + "-work",
			Namespace: benchNamespace,
			Labels:    map[string]string{v1beta1.CRPTrackingLabel: fmt.Sprintf("bench-%d", round)},
		},
		Spec: v1beta1.WorkSpec{Workload: v1beta1.WorkloadTemplate{Manifests: []v1beta1.Manifest{
			manifest(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Name: ns}}),
			manifest(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: ns},
				Data:       map[string]string{"replicas": "3", "image": "nginx:1.27"}}),
		}}},
	}
}
