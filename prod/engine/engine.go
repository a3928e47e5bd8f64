package engine

import (
	"context"
	"fmt"
	"github.com/fleetsim/fleetsim/apis/convert"
	"os"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/triggers"
	"github.com/fleetsim/fleetsim/model/units"
)

// Options configures the engine.
type Options struct {
	// LeaseNamespace and LeaseName name the engine's coordination Lease.
	LeaseNamespace, LeaseName string
	// LeaseTTL is the engine lease's TTL (default units.DefaultLeaseTTL).
	LeaseTTL time.Duration
	// MachineTTL is how long a machine lives after its last heartbeat (default
	// units.DefaultMachineTTL).
	MachineTTL time.Duration
	// Holder names this engine in the lease; default hostname plus a random suffix, new for
	// every process (each hub term must win the lease anew).
	Holder string
	Clock  clock.Clock
	Log    logr.Logger
	// CheckInvariants evaluates the registry's unit invariants at every pass
	// (invariants.go); Events, when set, receives their Warning events.
	CheckInvariants bool
	Events          events.EventRecorder
}

// Engine is the unit engine. It implements manager.Runnable and needs leader election.
type Engine struct {
	c      client.Client // cached reads, writes
	api    client.Reader // uncached: the lease
	o      Options
	wake   chan struct{}
	mu     sync.Mutex
	lease  units.Lease // last lease this engine wrote or read
	passes int
	// reported is the detail last reported per invariant ("" while it holds).
	reported map[string]string
	// rounds keeps the scheduling decision between passes (Reconcile runs one at a time).
	rounds units.Rounds
}

// Setup adds the engine to mgr, with watches of Units and Machines that wake it as the
// trigger table says.
func Setup(mgr ctrl.Manager, o Options) (*Engine, error) {
	if o.LeaseNamespace == "" {
		o.LeaseNamespace = "fleet-system"
	}
	if o.LeaseName == "" {
		o.LeaseName = "fleetsim-unit-engine"
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = units.DefaultLeaseTTL
	}
	if o.MachineTTL <= 0 {
		o.MachineTTL = units.DefaultMachineTTL
	}
	if o.Holder == "" {
		h, _ := os.Hostname()
		o.Holder = h + "_" + rand.String(8)
	}
	if o.Clock == nil {
		o.Clock = clock.New()
	}
	e := &Engine{c: mgr.GetClient(), api: mgr.GetAPIReader(), o: o, wake: make(chan struct{}, 1), reported: map[string]string{}}
	ctx := context.Background()
	for obj, classify := range map[client.Object]func(old, new any) triggers.Change{
		&fleetv1.Unit{}:    func(_, _ any) triggers.Change { return triggers.UnitChanged },
		&fleetv1.Machine{}: classifyMachine,
	} {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("engine: watch %T: %w", obj, err)
		}
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { e.fire(classify(nil, o)) },
			UpdateFunc: func(old, o any) { e.fire(classify(old, o)) },
			DeleteFunc: func(o any) { e.fire(classify(nil, nil)) },
		})
		if err != nil {
			return nil, fmt.Errorf("engine: watch %T: %w", obj, err)
		}
	}
	if err := mgr.Add(e); err != nil {
		return nil, err
	}
	return e, nil
}

// classifyMachine names a Machine change for the trigger table: a new or removed machine, or
// changed metadata, is MachineChanged; anything else (heartbeats, unit states) is
// MachineHeartbeat.
func classifyMachine(old, cur any) triggers.Change {
	o, ok1 := old.(*fleetv1.Machine)
	n, ok2 := cur.(*fleetv1.Machine)
	if !ok1 || !ok2 {
		return triggers.MachineChanged
	}
	if !mapsEqual(o.Spec.Metadata, n.Spec.Metadata) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
		return triggers.MachineChanged
	}
	// A machine that comes back to life after it was lost must be seen at once.
	if o.Status.LastHeartbeat.IsZero() != n.Status.LastHeartbeat.IsZero() {
		return triggers.MachineChanged
	}
	return triggers.MachineHeartbeat
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// fire wakes the engine if the trigger table says the change wakes it.
func (e *Engine) fire(c triggers.Change) {
	for _, t := range triggers.For(c) {
		if t.Controller == triggers.UnitEngine {
			e.Wake()
			return
		}
	}
}

// Wake asks for a decision soon.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// NeedLeaderElection makes the engine run only in the elected hub replica.
func (e *Engine) NeedLeaderElection() bool { return true }

// Passes returns how many decisions the engine made (for tests).
func (e *Engine) Passes() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.passes
}

// Start runs the engine until ctx ends: a decision on start, on every wake, when the lease
// needs renewing and when the next machine would expire.
func (e *Engine) Start(ctx context.Context) error {
	log := e.o.Log.WithValues("controller", string(triggers.UnitEngine), "holder", e.o.Holder)
	log.Info("unit engine starting")
	for {
		next, err := e.Reconcile(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error(err, "engine decision failed; retrying")
			next = time.Second
		}
		t := e.o.Clock.Timer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			e.release(log)
			return nil
		case <-e.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// Reconcile makes one decision and returns when to look again.
func (e *Engine) Reconcile(ctx context.Context) (time.Duration, error) {
	now := e.o.Clock.Now()
	lease, held, err := e.acquire(ctx, now)
	if err != nil {
		return 0, err
	}
	renew := e.o.LeaseTTL / 3
	if !held {
		// Wait for the holder's lease to lapse (or a wake).
		return max(lease.Expires.Sub(now)+10*time.Millisecond, 100*time.Millisecond), nil
	}
	var ul fleetv1.UnitList
	if err := e.c.List(ctx, &ul); err != nil {
		return 0, fmt.Errorf("list units: %w", err)
	}
	var ml fleetv1.MachineList
	if err := e.c.List(ctx, &ml); err != nil {
		return 0, fmt.Errorf("list machines: %w", err)
	}
	jobs, bad := convert.UnitJobs(ul.Items)
	if e.o.CheckInvariants {
		e.checkInvariants(ul.Items, jobs)
	}
	// The round is the simulator's too (units.Rounds): the machines' liveness by the TTL,
	// the schedule, and when the next machine would be lost. It keeps its decision between
	// passes, so a pass reschedules only what changed since the last.
	round := e.rounds.Decide(units.RoundInput{Now: now, MachineTTL: e.o.MachineTTL, Machines: convert.MachinePresences(ml.Items), Units: jobs, Lease: lease})
	e.mu.Lock()
	e.passes++
	e.mu.Unlock()
	if err := e.apply(ctx, ul.Items, round.Plan, bad); err != nil {
		return 0, err
	}
	// Renew the lease in time, and look again when the next machine would be lost (its
	// units then move); 10ms after it, as timer slack.
	next := renew
	if !round.LookAgain.IsZero() {
		next = min(next, round.LookAgain.Sub(now)+10*time.Millisecond)
	}
	return max(next, 10*time.Millisecond), nil
}

// apply writes the plan: each unit's new machine and reason, fenced by the lease, with the
// resourceVersion the decision read.
func (e *Engine) apply(ctx context.Context, list []fleetv1.Unit, plan units.Plan, bad map[string]error) error {
	type change struct {
		machine string
		reason  string
	}
	want := map[string]change{}
	for _, a := range plan.Unschedule {
		want[a.Unit] = change{"", "unscheduled from " + a.Machine + ": " + a.Reason}
	}
	for _, a := range plan.Schedule {
		want[a.Unit] = change{a.Machine, a.Reason}
	}
	for _, u := range plan.Unschedulable {
		if _, ok := want[u.Unit]; !ok {
			want[u.Unit] = change{"", u.Reason}
		}
	}
	for n, err := range bad {
		want[n] = change{"", "invalid: " + err.Error()}
	}
	fenced := false
	for i := range list {
		u := &list[i]
		c, ok := want[u.Spec.Name]
		if !ok || (u.Status.MachineID == c.machine && u.Status.Reason == c.reason) {
			continue
		}
		// A write that only changes the reason needs no fence beyond its resourceVersion.
		if (c.machine != u.Status.MachineID || movesMachine(plan, u.Spec.Name)) && !fenced {
			if err := e.admit(ctx, plan.Fence); err != nil {
				return err
			}
			fenced = true
		}
		nu := u.DeepCopy()
		nu.Status.MachineID = c.machine
		nu.Status.Reason = c.reason
		nu.Status.FenceToken = int64(plan.Fence.Token)
		if err := e.c.Status().Update(ctx, nu); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				e.Wake() // decided on a stale unit: decide again on fresh objects
				continue
			}
			return fmt.Errorf("write schedule of %s: %w", u.Spec.Name, err)
		}
		e.o.Log.V(1).Info("unit scheduled", "unit", u.Spec.Name, "machine", c.machine, "reason", c.reason, "token", plan.Fence.Token)
	}
	return nil
}

func movesMachine(plan units.Plan, name string) bool {
	for _, a := range plan.Schedule {
		if a.Unit == name {
			return true
		}
	}
	for _, a := range plan.Unschedule {
		if a.Unit == name {
			return true
		}
	}
	return false
}

// admit re-reads the lease from the API server and checks the plan's fence against it.
func (e *Engine) admit(ctx context.Context, fence units.FencedWrite) error {
	var l coordinationv1.Lease
	if err := e.api.Get(ctx, client.ObjectKey{Namespace: e.o.LeaseNamespace, Name: e.o.LeaseName}, &l); err != nil {
		return fmt.Errorf("read engine lease: %w", err)
	}
	if err := units.Admit(fence, fromLease(&l)); err != nil {
		return fmt.Errorf("engine write refused: %w", err)
	}
	return nil
}

func fromLease(l *coordinationv1.Lease) units.Lease {
	var out units.Lease
	if l.Spec.HolderIdentity != nil {
		out.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseTransitions != nil {
		out.Token = uint64(*l.Spec.LeaseTransitions)
	}
	if l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil {
		out.Expires = l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
	}
	return out
}

func toLease(l units.Lease, ttl time.Duration, into *coordinationv1.Lease) {
	into.Spec.HolderIdentity = ptr.To(l.Holder)
	into.Spec.LeaseTransitions = ptr.To(int32(l.Token))
	secs := int32((ttl + time.Second - 1) / time.Second)
	into.Spec.LeaseDurationSeconds = ptr.To(secs)
	renew := metav1.NewMicroTime(l.Expires.Add(-time.Duration(secs) * time.Second))
	into.Spec.RenewTime = &renew
	if l.Holder == "" {
		into.Spec.HolderIdentity = nil
	}
}

// acquire takes or renews the engine lease, writing it with the resourceVersion read.
func (e *Engine) acquire(ctx context.Context, now time.Time) (units.Lease, bool, error) {
	key := client.ObjectKey{Namespace: e.o.LeaseNamespace, Name: e.o.LeaseName}
	var l coordinationv1.Lease
	err := e.api.Get(ctx, key, &l)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return units.Lease{}, false, fmt.Errorf("read engine lease: %w", err)
	}
	var cur *units.Lease
	if exists {
		c := fromLease(&l)
		cur = &c
	}
	next, ok := units.Claim(cur, e.o.Holder, now, e.o.LeaseTTL)
	if !ok {
		return next, false, nil
	}
	toLease(next, e.o.LeaseTTL, &l)
	// The lease duration is whole seconds; keep the model's expiry consistent with it.
	next = fromLease(&l)
	if exists {
		err = e.c.Update(ctx, &l)
	} else {
		l.Namespace, l.Name = key.Namespace, key.Name
		err = e.c.Create(ctx, &l)
		if apierrors.IsNotFound(err) { // the lease's namespace does not exist yet
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}}
			if cerr := e.c.Create(ctx, ns); cerr != nil && !apierrors.IsAlreadyExists(cerr) {
				return units.Lease{}, false, fmt.Errorf("create namespace %s for the engine lease: %w", key.Namespace, cerr)
			}
			l.ResourceVersion = ""
			err = e.c.Create(ctx, &l)
		}
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return units.Lease{Expires: now.Add(100 * time.Millisecond)}, false, nil
	}
	if err != nil {
		return units.Lease{}, false, fmt.Errorf("write engine lease: %w", err)
	}
	e.mu.Lock()
	if e.lease.Token != next.Token {
		e.o.Log.Info("engine lease acquired", "holder", next.Holder, "token", next.Token)
	}
	e.lease = next
	e.mu.Unlock()
	return next, true, nil
}

// release gives up the lease on a clean stop, so the next hub takes over at once.
func (e *Engine) release(log logr.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var l coordinationv1.Lease
	if err := e.api.Get(ctx, client.ObjectKey{Namespace: e.o.LeaseNamespace, Name: e.o.LeaseName}, &l); err != nil {
		return
	}
	cur := fromLease(&l)
	next, ok := units.Release(&cur, e.o.Holder, e.o.Clock.Now())
	if !ok {
		return
	}
	l.Spec.HolderIdentity = nil
	l.Spec.LeaseTransitions = ptr.To(int32(next.Token))
	if err := e.c.Update(ctx, &l); err != nil {
		log.Info("could not release the engine lease", "err", err.Error())
	}
}
