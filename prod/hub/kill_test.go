package hub_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fleetsim/fleetsim/apis"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/prod/hub"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// hubProcessEnv names the kubeconfig of a hub that the test binary, run again, serves as
// its own process (so that a test can SIGKILL it).
const hubProcessEnv = "FLEETSIM_TEST_HUB_KUBECONFIG"

func TestMain(m *testing.M) {
	if kc := os.Getenv(hubProcessEnv); kc != "" {
		os.Exit(runHubProcess(kc))
	}
	os.Exit(m.Run())
}

// runHubProcess runs every hub controller until the process is killed.
func runHubProcess(kubeconfig string) int {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: s, Logger: logr.Discard(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := hub.Setup(mgr, hub.Options{Log: logr.Discard(), Resync: time.Hour,
		Eligibility: member.EligibilityConfig{HeartbeatTimeout: 30 * time.Second, UnhealthyTolerance: 30 * time.Second}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := mgr.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// hubProcess is a hub running as a child process of the test.
type hubProcess struct {
	t          testing.TB
	kubeconfig string
	cmd        *exec.Cmd
}

func newHubProcess(t testing.TB, cfg *rest.Config) *hubProcess {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "hub"
	path := filepath.Join(t.TempDir(), "hub.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	p := &hubProcess{t: t, kubeconfig: path}
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *hubProcess) start() {
	p.t.Helper()
	p.cmd = exec.Command(os.Args[0])
	p.cmd.Env = append(os.Environ(), hubProcessEnv+"="+p.kubeconfig)
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start the hub process: %v", err)
	}
}

// kill SIGKILLs the hub: no deferred function, no flush timeout, no lease release runs.
func (p *hubProcess) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
	p.cmd = nil
}

// killRounds runs rounds of: change the placed ConfigMap (a new version to roll out), wait
// a seeded random time, SIGKILL the hub, check, start a new hub, and wait until the
// rollout completes, checking at every read that no binding is lost or duplicated, the
// rollout budget (maxUnavailable 1) is kept and no resource snapshot is made twice.
func killRounds(t testing.TB, seed uint64, rounds int) {
	env := testenv.StartEnv(t)
	f := &fleetHub{env: env, admin: testenv.Client(t, env.Config), agents: map[string]*testenv.StandInAgent{}}
	p := newHubProcess(t, env.Config)
	p.start()
	members := []string{"east", "north", "south", "west"}
	for _, m := range members {
		f.joinTB(t, m)
	}
	f.createTB(t, namespaceWithConfigMap("shop")...)
	f.createTB(t, &placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: placementv1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: namespaceSelector("shop"),
			Strategy: placementv1beta1.RolloutStrategy{Type: "RollingUpdate", RollingUpdate: &placementv1beta1.RollingUpdateConfig{
				MaxUnavailable: ptr.To(intstr.FromInt32(1)), UnavailablePeriodSeconds: ptr.To(1),
			}},
		},
	})
	rng := rand.New(rand.NewPCG(seed, 18))
	for r := range rounds {
		// Round r rolls out resource snapshot r+1 (the placement started on 0).
		latest := resources.SnapshotName("shop", r+1)
		if r == 0 {
			f.waitRolledOut(t, "shop", resources.SnapshotName("shop", 0), members, false)
		}
		f.setColorTB(t, "shop", "settings", "v"+strconv.Itoa(r))
		delay := time.Duration(rng.Int64N(int64(1500 * time.Millisecond)))
		time.Sleep(delay)
		p.kill()
		if err := f.checkKillInvariants("shop", members, r+1); err != nil {
			t.Fatalf("round %d, killed %v after the update: %v", r, delay, err)
		}
		p.start()
		f.waitRolledOut(t, "shop", latest, members, true)
		if err := f.checkKillInvariants("shop", members, r+1); err != nil {
			t.Fatalf("round %d, killed %v after the update, after the rollout: %v", r, delay, err)
		}
	}
}

// waitRolledOut waits (2 minutes at most) until every member's binding carries snapshot and
// is available, checking the invariants at every read, and the budget when it is an update
// (a new placement has nothing available to keep).
func (f *fleetHub) waitRolledOut(t testing.TB, crp, snapshot string, members []string, budget bool) {
	t.Helper()
	idx := 0
	if _, err := fmt.Sscanf(snapshot, crp+"-%d-snapshot", &idx); err != nil {
		t.Fatalf("snapshot name %s: %v", snapshot, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := f.checkKillInvariants(crp, members, idx); err != nil {
			t.Fatal(err)
		}
		v, err := f.budgetView(crp, snapshot)
		if err != nil {
			t.Fatal(err)
		}
		if budget && len(v.notReady) > 1 {
			t.Fatalf("%d bindings not ready (%s), want at most maxUnavailable=1", len(v.notReady), v)
		}
		done := len(v.notReady) == 0 && len(v.snapshots) == len(members)
		for _, m := range members {
			done = done && v.snapshots[m] == snapshot
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not rolled out to %s after 2m: %v (%s)", snapshot, v.snapshots, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkKillInvariants: one binding per member and no other, one policy snapshot, and no
// resource snapshot past maxIndex (a version made twice would take a new index).
func (f *fleetHub) checkKillInvariants(crp string, members []string, maxIndex int) error {
	if err := f.checkRolloutInvariants(crp, members); err != nil {
		return err
	}
	ctx := context.Background()
	var ps placementv1beta1.ClusterSchedulingPolicySnapshotList
	if err := f.admin.List(ctx, &ps, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return err
	}
	if len(ps.Items) > 1 {
		return fmt.Errorf("%d policy snapshots, want 1", len(ps.Items))
	}
	var rs placementv1beta1.ClusterResourceSnapshotList
	if err := f.admin.List(ctx, &rs, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return err
	}
	for _, s := range rs.Items {
		n, _ := strconv.Atoi(s.Labels[placementv1beta1.ResourceIndexLabel])
		if n > maxIndex {
			return fmt.Errorf("resource snapshot %s has index %d, but only %d versions were made", s.Name, n, maxIndex+1)
		}
	}
	return nil
}

// TestHubSIGKILLedDuringRollouts kills the hub process at twenty seeded points of twenty
// rollouts (KILL-RESTART in reports/hub.md): no binding is lost or duplicated, the budget
// holds, and every rollout completes under the next hub.
func TestHubSIGKILLedDuringRollouts(t *testing.T) {
	killRounds(t, 1, 20)
}

// BenchmarkHubSIGKILLSoak is the long form: FLEETSIM_SOAK_ROUNDS rounds (default 100) with
// seed FLEETSIM_SOAK_SEED (default 2). One op is the whole soak.
func BenchmarkHubSIGKILLSoak(b *testing.B) {
	rounds, seed := 100, uint64(2)
	if s := os.Getenv("FLEETSIM_SOAK_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("FLEETSIM_SOAK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	for range b.N {
		killRounds(b, seed, rounds)
	}
	b.ReportMetric(float64(rounds), "kills/op")
}

// joinTB creates a member whose stand-in agent reports every 100ms and waits until it is
// joined and healthy.
func (f *fleetHub) joinTB(t testing.TB, name string) {
	t.Helper()
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta1.MemberClusterSpec{
			Identity:               rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"},
			HeartbeatPeriodSeconds: 1,
		},
	}
	if err := f.admin.Create(ctx, mc); err != nil {
		t.Fatalf("create MemberCluster %s: %v", name, err)
	}
	a := &testenv.StandInAgent{Client: testenv.Client(t, f.env.User(t, name+"-agent")), Member: name, Period: 100 * time.Millisecond}
	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { a.Run(actx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	f.agents[name] = a
	testenv.Eventually(t, "member "+name+" joined and healthy", func() error {
		got := &clusterv1beta1.MemberCluster{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return err
		}
		for _, typ := range []string{"Joined", "Healthy"} {
			if !meta.IsStatusConditionTrue(got.Status.Conditions, typ) {
				return fmt.Errorf("%s is not True", typ)
			}
		}
		return nil
	})
}

func (f *fleetHub) createTB(t testing.TB, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := f.admin.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

func (f *fleetHub) setColorTB(t testing.TB, ns, name, color string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := f.admin.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			return err
		}
		cm.Data["color"] = color
		return f.admin.Update(context.Background(), cm)
	}); err != nil {
		t.Fatalf("update ConfigMap %s/%s: %v", ns, name, err)
	}
}
