package difftest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s"
	memberagent "github.com/fleetsim/fleetsim/agentk8s/member"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/prod/testenv"
	"github.com/fleetsim/fleetsim/scenarios"
)

// fleet is a production hub on a real API server, with one stand-in agent per member, or
// with real member agents (agentk8s/member) on member API servers of their own, driven by
// a plan's actions.
type fleet struct {
	t     *testing.T
	env   *testenv.Env
	admin client.Client
	// agents are the members whose stand-in agent runs.
	agents map[string]bool
	// real: members are real API servers with real agents; clusters are their servers,
	// running their agents (an agent stops once its member left).
	real     bool
	timeout  time.Duration
	clusters map[string]*testenv.Env
	running  map[string]<-chan error
	// kinds remembers the apiVersion of every kind applied, for delete steps (which name
	// only the kind).
	kinds map[string]schema.GroupVersionKind
	// clk is the fleet's one clock, which the test advances phase by phase.
	clk *fleetClock
	// standIns are the stand-in agents by member; down the members whose agent is stopped
	// (failed); stops the real agents' stop functions.
	standIns map[string]*testenv.StandInAgent
	down     map[string]bool
	stops    map[string]func()
	// failsAtJoin are the members that fail in the phase being played.
	failsAtJoin map[string]bool
	// workloads plays the scenario's workload steps for the stand-ins, as the simulator's
	// members play them.
	workloads *workloadOracle
	// workloadSteps are the scenario's workload steps so far, in order.
	workloadSteps []*scenarios.WorkloadStep
	// workloadRounds counts, per member with a real agent, the rounds its member
	// controllers (runWorkloads) have begun and finished.
	workloadRounds sync.Map // member -> *playerRounds
	// caughtUp is, when the stand-ins have played every Work the hub holds since the last
	// phase, those Works (workGenerations): catchUp has nothing to wait for until they
	// change.
	caughtUp map[string]string
}

// startFleet starts kube-apiserver and etcd, and the hub's manager with every controller;
// with real, members get API servers (on the hub's etcd) and real agents.
func startFleet(t *testing.T, real bool, propagation *resources.Filter) *fleet {
	t.Helper()
	env := testenv.StartEnv(t)
	f := &fleet{t: t, env: env, admin: testenv.Client(t, env.Config), agents: map[string]bool{}, real: real, timeout: settleTimeout,
		clk: newFleetClock(SimStart), standIns: map[string]*testenv.StandInAgent{}, down: map[string]bool{}, stops: map[string]func(){}, failsAtJoin: map[string]bool{},
		workloads: nil,
		clusters:  map[string]*testenv.Env{}, running: map[string]<-chan error{}, kinds: map[string]schema.GroupVersionKind{
			"MemberCluster": clusterv1beta1.GroupVersion.WithKind("MemberCluster"),
			"Namespace":     {Version: "v1", Kind: "Namespace"},
			"ConfigMap":     {Version: "v1", Kind: "ConfigMap"},
		}}
	f.workloads = newWorkloadOracle(t, f.clk)
	if real {
		// Real agents write to API servers of their own, and the machine running the test
		// may be loaded: every step of the hub and the agents takes longer.
		f.timeout = realSettleTimeout
	}
	runManager(t, env.Config, f.clk, propagation)
	f.runNamespaceController()
	return f
}

// runManager runs every hub controller until the test ends, on clk and with the
// simulator's heartbeat windows (member.DefaultEligibility): a wake-up the hub loses shows
// as a disagreement.
func runManager(t *testing.T, cfg *rest.Config, clk clock.Clock, propagation *resources.Filter) {
	t.Helper()
	o := testenv.HubOptions(testLogger(t))
	o.Clock, o.Eligibility, o.Propagation = clk, member.DefaultEligibility, propagation
	testenv.RunHubWith(t, cfg, o)
}

// testLogger logs to t with wall-clock times, to see how long the hub took over what.
func testLogger(t *testing.T) logr.Logger {
	return funcr.New(func(prefix, args string) {
		t.Log(time.Now().Format("15:04:05.000"), prefix, args)
	}, funcr.Options{})
}

// doPhase performs a phase's actions on the real hub, in order; members that join one
// after the other join together.
func (f *fleet) doPhase(ph Phase) {
	f.t.Helper()
	// A phase may change what the stand-ins report (workload steps, failures, heals,
	// joins): the next clock step catches up whatever the Works.
	f.caughtUp = nil
	// A member that joins and fails at one instant never heartbeats in the simulator: its
	// agent starts down here, and the join does not wait for it.
	for _, a := range ph.Actions {
		if a.Fail != nil {
			f.failsAtJoin[a.Fail.Member] = true
		}
	}
	defer clear(f.failsAtJoin)
	for i := 0; i < len(ph.Actions); {
		var joins []Member
		for ; i < len(ph.Actions) && ph.Actions[i].Join != nil; i++ {
			joins = append(joins, *ph.Actions[i].Join)
		}
		if len(joins) > 0 {
			f.join(joins...)
			continue
		}
		f.do(ph.Actions[i])
		i++
	}
}

// do performs one action of a plan on the real hub.
func (f *fleet) do(a Action) {
	f.t.Helper()
	if a.Picked != nil {
		// A group step or a partition: on each member the simulator picked, in its order.
		for _, name := range a.Members() {
			f.do(a.On(name))
		}
		return
	}
	switch {
	case a.Join != nil:
		f.join(*a.Join)
	case a.Apply != nil:
		for _, m := range a.Apply {
			f.apply(m)
		}
	case a.Delete != nil:
		f.delete(a.Delete)
	case a.Label != nil:
		f.updateMember(a.Label.Member, func(mc *clusterv1beta1.MemberCluster) {
			if mc.Labels == nil {
				mc.Labels = map[string]string{}
			}
			for k, v := range a.Label.Set {
				mc.Labels[k] = v
			}
			for _, k := range a.Label.Remove {
				delete(mc.Labels, k)
			}
		})
	case a.Taint != nil:
		t := apiTaint(a.Taint.Taint)
		f.updateMember(a.Taint.Member, func(mc *clusterv1beta1.MemberCluster) {
			// As the simulator's Taint: a taint with the same key and effect is replaced.
			mc.Spec.Taints = slices.DeleteFunc(mc.Spec.Taints, func(x clusterv1beta1.Taint) bool { return x.Key == t.Key && x.Effect == t.Effect })
			mc.Spec.Taints = append(mc.Spec.Taints, t)
		})
	case a.Untaint != nil:
		f.updateMember(a.Untaint.Member, func(mc *clusterv1beta1.MemberCluster) {
			mc.Spec.Taints = slices.DeleteFunc(mc.Spec.Taints, func(x clusterv1beta1.Taint) bool { return x.Key == a.Untaint.Key })
		})
	case a.Workload != nil:
		f.workloads.set(a.Workload)
		f.workloadSteps = append(f.workloadSteps, a.Workload)
		for _, name := range sortedKeys(f.clusters) {
			f.refuseApplies(name, f.clusters[name])
		}
	case a.Fail != nil:
		f.fail(a.Fail.Member)
	case a.Heal != nil:
		f.heal(a.Heal.Member)
	case a.Approve != nil:
		f.approve(a.Approve.Name)
	case a.MemberEdit != nil:
		f.memberEdit(a.MemberEdit)
	default:
		f.t.Fatalf("empty action")
	}
}

func apiTaint(t member.Taint) clusterv1beta1.Taint {
	if t.Effect == "" {
		t.Effect = member.NoSchedule
	}
	return clusterv1beta1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
}

// join creates the MemberClusters of members with their labels and taints, starts a
// stand-in agent for each (a user of its own, as the MemberCluster's identity says; a member
// that joins again keeps its agent), and waits until the hub reports every one joined and
// healthy. Members joining at one instant are created together, as in the simulator.
func (f *fleet) join(members ...Member) {
	f.t.Helper()
	ctx := context.Background()
	for _, m := range members {
		mc := &clusterv1beta1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: m.Name, Labels: m.Labels},
			Spec: clusterv1beta1.MemberClusterSpec{
				Identity:               rbacv1.Subject{Kind: "User", Name: m.Name + "-agent", APIGroup: "rbac.authorization.k8s.io"},
				HeartbeatPeriodSeconds: 1,
			},
		}
		for _, t := range m.Taints {
			mc.Spec.Taints = append(mc.Spec.Taints, apiTaint(t))
		}
		if err := f.admin.Create(ctx, mc); err != nil {
			f.t.Fatalf("create MemberCluster %s: %v", m.Name, err)
		}
	}
	for _, m := range members {
		if f.failsAtJoin[m.Name] {
			f.down[m.Name] = true
		}
		if f.real {
			if !f.down[m.Name] {
				f.startRealAgent(m.Name)
			}
			continue
		}
		if f.agents[m.Name] {
			continue
		}
		f.agents[m.Name] = true
		name := m.Name
		a := &testenv.StandInAgent{Client: testenv.Client(f.t, f.env.User(f.t, m.Name+"-agent")), Member: m.Name,
			Clock: agentClock{Clock: clock.New(), mock: f.clk}}
		a.SetBehavior(func(o *unstructured.Unstructured) testenv.Outcome { return f.workloads.outcome(name, o) })
		a.SetDown(f.down[m.Name])
		f.standIns[m.Name] = a
		actx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { a.Run(actx); close(done) }()
		f.t.Cleanup(func() { cancel(); <-done })
	}
	for _, m := range members {
		if f.down[m.Name] {
			continue
		}
		f.eventually("member "+m.Name+" joined and healthy", func() error {
			got := &clusterv1beta1.MemberCluster{}
			if err := f.admin.Get(ctx, client.ObjectKey{Name: m.Name}, got); err != nil {
				return err
			}
			for _, typ := range []string{"Joined", "Healthy"} {
				if c := meta.FindStatusCondition(got.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
					return fmt.Errorf("%s is %v", typ, c)
				}
			}
			return nil
		})
	}
}

// startRealAgent starts the member's API server, once, and its real agent unless one runs:
// an agent stops after its member left, and a member that joins again gets a new one.
func (f *fleet) startRealAgent(name string) {
	f.t.Helper()
	if done, ok := f.running[name]; ok {
		select {
		case err := <-done:
			f.t.Logf("member %s's agent had stopped (%v); starting a new one", name, err)
		default:
			return
		}
	}
	env, ok := f.clusters[name]
	if !ok {
		env = f.env.StartMemberOn(f.t, name)
		f.clusters[name] = env
		f.runWorkloads(name, env)
		f.runMemberNamespaceController(name, env)
		f.refuseApplies(name, env)
	}
	f.agents[name] = true
	f.stops[name], f.running[name] = testenv.RunMemberAgentClock(f.t, name, f.env.User(f.t, name+"-agent"), env.Config, testLogger(f.t),
		250*time.Millisecond, memberagent.DefaultDriftPeriod, agentClock{Clock: clock.New(), mock: f.clk})
}

// apply creates or updates one manifest as the admin. A MemberCluster manifest makes a new
// member join, or replaces an existing member's labels and taints, as in the simulator.
func (f *fleet) apply(m scenarios.Manifest) {
	f.t.Helper()
	o := m.Object.DeepCopy()
	f.kinds[o.GetKind()] = o.GroupVersionKind()
	if agentk8s.Classify(o) == agentk8s.Trackable {
		f.workloads.placesTrackable()
	}
	if o.GetKind() == "MemberCluster" {
		spec, err := memberClusterSpec(o)
		if err != nil {
			f.t.Fatalf("line %d: MemberCluster %s: %v", m.Line, o.GetName(), err)
		}
		err = f.admin.Get(context.Background(), client.ObjectKey{Name: o.GetName()}, &clusterv1beta1.MemberCluster{})
		switch {
		case apierrors.IsNotFound(err):
			f.join(Member{Name: o.GetName(), Labels: o.GetLabels(), Taints: spec.Taints})
		case err != nil:
			f.t.Fatalf("line %d: get MemberCluster %s: %v", m.Line, o.GetName(), err)
		default:
			f.updateMember(o.GetName(), func(mc *clusterv1beta1.MemberCluster) {
				mc.Labels = o.GetLabels()
				mc.Spec.Taints = nil
				for _, t := range spec.Taints {
					mc.Spec.Taints = append(mc.Spec.Taints, apiTaint(t))
				}
			})
		}
		return
	}
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := f.admin.Create(ctx, o.DeepCopy())
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(o.GroupVersionKind())
		if err := f.admin.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			return err
		}
		upd := o.DeepCopy()
		upd.SetResourceVersion(cur.GetResourceVersion())
		return f.admin.Update(ctx, upd)
	})
	if err != nil {
		f.t.Fatalf("line %d: apply %s %s: %v", m.Line, o.GetKind(), o.GetName(), err)
	}
}

// delete deletes an object as the admin; deleting a MemberCluster makes the member leave.
func (f *fleet) delete(ref *scenarios.ObjectRef) {
	f.t.Helper()
	gvk, ok := f.kinds[ref.Kind]
	if !ok {
		f.t.Fatalf("delete %s %s: the kind's apiVersion is unknown (not applied before)", ref.Kind, ref.Name)
	}
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetName(ref.Name)
	o.SetNamespace(ref.Namespace)
	if err := f.admin.Delete(context.Background(), o); err != nil {
		f.t.Fatalf("delete %s %s: %v", ref.Kind, ref.Name, err)
	}
}

// updateMember changes a MemberCluster, retrying on conflicts with the hub's writes.
func (f *fleet) updateMember(name string, change func(*clusterv1beta1.MemberCluster)) {
	f.t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		change(mc)
		return f.admin.Update(ctx, mc)
	})
	if err != nil {
		f.t.Fatalf("update MemberCluster %s: %v", name, err)
	}
}

// settleTimeout bounds how long the hub may take to reach the simulator's state;
// realSettleTimeout with real agents. They absorb a starved two-core machine (one phase
// was measured at 62 s under load), not lost wake-ups: the hub has no periodic resync, so a
// decision that is never woken fails the phase however long the wait.
const (
	settleTimeout     = 2 * time.Minute
	realSettleTimeout = 3 * time.Minute
)

// settle waits until the hub's state equals want and has stayed equal for stable, and fails
// the test with the difference if it does not within settleTimeout.
func (f *fleet) settle(what string, want State, stable time.Duration) {
	f.t.Helper()
	ctx := context.Background()
	var got State
	var err error
	var equalSince time.Time
	for deadline := time.Now().Add(f.timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		got, err = ReadHub(ctx, f.admin)
		got.Works = projectWorks(want.Works, got.Works)
		switch {
		case err != nil || !equalStates(want, got):
			equalSince = time.Time{}
		case equalSince.IsZero():
			equalSince = time.Now()
		case time.Since(equalSince) >= stable:
			return
		}
	}
	if err != nil {
		f.t.Fatalf("%s: reading the hub: %v", what, err)
	}
	f.t.Fatalf("%s: the hub did not reach the simulator's state in %s (-simulator +hub):\n%s\nsimulator:\n%s\nhub:\n%s",
		what, f.timeout, cmp.Diff(want, got, cmpopts.EquateEmpty()), indent(want.Summary()), indent(got.Summary()))
}

func equalStates(a, b State) bool { return cmp.Equal(a, b, cmpopts.EquateEmpty()) }

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// eventually retries f every 100ms for up to settleTimeout.
func (f *fleet) eventually(what string, fn func() error) {
	f.t.Helper()
	var err error
	for deadline := time.Now().Add(f.timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = fn(); err == nil {
			return
		}
	}
	f.t.Fatalf("%s: still %v after %s", what, err, f.timeout)
}

// checkMembersHoldTheirPlacements checks the member side of an agreed state: every Bound
// binding the hub reports Applied has each manifest of its Work on the member's API server,
// owned by the Work's AppliedWork.
func (f *fleet) checkMembersHoldTheirPlacements() {
	f.t.Helper()
	ctx := context.Background()
	var bindings v1beta1.ClusterResourceBindingList
	if err := f.admin.List(ctx, &bindings); err != nil {
		f.t.Fatalf("list bindings: %v", err)
	}
	for _, b := range bindings.Items {
		if b.Spec.State != "Bound" || !meta.IsStatusConditionTrue(b.Status.Conditions, "Applied") {
			continue
		}
		env, ok := f.clusters[b.Spec.TargetCluster]
		if !ok {
			f.t.Fatalf("binding %s targets %s, which has no API server", b.Name, b.Spec.TargetCluster)
		}
		var works v1beta1.WorkList
		if err := f.admin.List(ctx, &works, client.InNamespace("fleet-member-"+b.Spec.TargetCluster),
			client.MatchingLabels{v1beta1.ParentBindingLabel: b.Name}); err != nil {
			f.t.Fatalf("list Works of %s: %v", b.Name, err)
		}
		memberClient := testenv.Client(f.t, env.Config)
		for _, w := range works.Items {
			for i, m := range w.Spec.Workload.Manifests {
				want := &unstructured.Unstructured{}
				if err := want.UnmarshalJSON(m.Raw); err != nil {
					f.t.Fatalf("Work %s manifest %d: %v", w.Name, i, err)
				}
				f.eventually(fmt.Sprintf("%s %s on %s, owned by AppliedWork %s", want.GetKind(), want.GetName(), b.Spec.TargetCluster, w.Name), func() error {
					got := &unstructured.Unstructured{}
					got.SetGroupVersionKind(want.GroupVersionKind())
					if err := memberClient.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
						return err
					}
					if !slices.ContainsFunc(got.GetOwnerReferences(), func(r metav1.OwnerReference) bool {
						return r.Kind == "AppliedWork" && r.Name == w.Name
					}) {
						return fmt.Errorf("owners %+v", got.GetOwnerReferences())
					}
					return nil
				})
			}
		}
	}
}
