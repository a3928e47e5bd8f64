package hubbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// BenchmarkAPIServerWrites measures the ceiling every figure of `fleetsim bench hub` sits
// under: how many writes of the kinds a placement costs (a binding created, its status
// written, a Work created, a member agent's report on it) kube-apiserver and etcd take per
// second on this machine with no hub and no agents running, and their CPU per write. A
// placement's time to Available cannot be shorter than its writes divided by these rates.
//
//	export KUBEBUILDER_ASSETS=$(hack/test-assets.sh)
//	go test -run '^$' -bench BenchmarkAPIServerWrites -benchtime 2000x ./prod/hubbench/
func BenchmarkAPIServerWrites(b *testing.B) {
	env := testenv.StartEnv(b)
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	cfg := *env.Config
	cfg.QPS, cfg.Burst = 10000, 10000 // the server, not the client, is measured
	c, err := client.New(&cfg, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}); err != nil {
		b.Fatal(err)
	}
	var round atomic.Int64
	b.Run("binding-create", func(b *testing.B) {
		r := round.Add(1)
		measureWrites(b, func(i int) error { return c.Create(ctx, benchBinding(r, i)) })
	})
	b.Run("binding-status", func(b *testing.B) {
		r := round.Add(1)
		objs := createAll(ctx, b, c, func(i int) *v1beta1.ClusterResourceBinding { return benchBinding(r, i) })
		measureWrites(b, func(i int) error {
			objs[i].Status.Conditions = benchConditions(objs[i].Generation)
			return c.Status().Update(ctx, objs[i])
		})
	})
	b.Run("work-create", func(b *testing.B) {
		r := round.Add(1)
		measureWrites(b, func(i int) error { return c.Create(ctx, benchWork(r, i)) })
	})
	b.Run("work-status", func(b *testing.B) {
		// A member agent's report: the Work applied and available.
		r := round.Add(1)
		objs := createAll(ctx, b, c, func(i int) *v1beta1.Work { return benchWork(r, i) })
		agent := &testenv.StandInAgent{Client: c, Member: "bench"}
		measureWrites(b, func(i int) error { return agent.ReportWork(ctx, objs[i]) })
	})
}

// benchWriters is how many writes the benchmark has in flight, as a hub's flush does
// (flushParallelism in prod/hub).
const benchWriters = 16

// createAll creates b.N objects, untimed: the ones whose status a sub-benchmark writes.
func createAll[T client.Object](ctx context.Context, b *testing.B, c client.Client, obj func(i int) T) []T {
	objs := make([]T, b.N)
	for i := range objs {
		objs[i] = obj(i)
		if err := c.Create(ctx, objs[i]); err != nil {
			b.Fatal(err)
		}
	}
	return objs
}

// measureWrites runs write(0..b.N-1), benchWriters at a time, and reports writes per second
// and the API server's and etcd's CPU per write.
func measureWrites(b *testing.B, write func(i int) error) {
	before := serverCPU()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range benchWriters {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
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
	b.StopTimer()
	if err, ok := failed.Load().(error); ok {
		b.Fatalf("write: %v", err)
	}
	after := serverCPU()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "writes/s")
	for _, comm := range []string{"kube-apiserver", "etcd"} {
		b.ReportMetric(1000*(after[comm]-before[comm])/float64(b.N), comm+"-cpu-ms/write")
	}
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
