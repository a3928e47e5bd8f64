package hubbench

// The environment the hub is measured in: kube-apiserver and etcd (or a kubeconfig's
// server), the bench's own watch cache, the MemberClusters, and a stand-in agent for each
// member, heartbeating and reporting on the Works the hub writes. Separate from the hub
// (hub.go), which the bench runs and kills on its own, and from what is measured (run.go).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
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

// startServers starts kube-apiserver and etcd from the assets.
func (b *bench) startServers() error {
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
	return nil
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
		if err := b.startServers(); err != nil {
			return err
		}
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
