package hubbench

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// BenchmarkAPIServerWrites measures the ceiling every figure of `fleet bench hub` sits
// under: how many writes of the kinds a placement costs (a binding created, its status
// written, a Work created, a member agent's report on it) kube-apiserver and etcd take per
// second on this machine with no hub and no agents running, and their CPU per write. A
// placement's time to Available cannot be shorter than its writes divided by these rates.
//
//	export KUBEBUILDER_ASSETS=$(hack/test-assets.sh)
//	go test -run '^$' -bench BenchmarkAPIServerWrites -benchtime 2000x ./bench/hubbench/
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
	wl := &writeLoad{c: c}
	if err := wl.setUp(ctx); err != nil {
		b.Fatal(err)
	}
	for _, kind := range writeKinds {
		b.Run(kind, func(b *testing.B) {
			write, err := wl.prepare(ctx, kind, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			f, err := measureWrites(b.N, benchWriters, write)
			b.StopTimer()
			if err != nil {
				b.Fatalf("write: %v", err)
			}
			b.ReportMetric(f.perSecond, "writes/s")
			b.ReportMetric(f.apiserverMS, "kube-apiserver-cpu-ms/write")
			b.ReportMetric(f.etcdMS, "etcd-cpu-ms/write")
		})
	}
}
