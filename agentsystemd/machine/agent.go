package machine

import (
	"context"
	"fmt"
	"github.com/fleetsim/fleetsim/apis/convert"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentsystemd"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/units"
)

// Systemd is what the agent needs from the machine's systemd (agentsystemd/dbus.Driver).
type Systemd interface {
	agentsystemd.Systemd
	// Watch calls notify when systemd reports a change of one of the agent's units.
	Watch(ctx context.Context, notify func()) error
	Connected() bool
}

// Options configures an agent.
type Options struct {
	MachineID string
	PublicIP  string
	// Metadata is set on the Machine's spec at start (other keys are left as they are).
	Metadata map[string]string
	// MachineTTL is the hub's machine TTL; the agent beats every third of it.
	MachineTTL time.Duration
	// Interval is the reconcile period (fleet's 5 s).
	Interval time.Duration
	Version  string
	Log      logr.Logger
	// Clock is the agent's time: its rounds and heartbeats tick on it, heartbeats carry its
	// time, and machines' liveness is judged by it (nil: the wall clock). Tests drive a
	// mock so that a machine TTL costs no wall time.
	Clock clock.Clock
}

// Agent is one machine's agent.
type Agent struct {
	c    client.WithWatch
	sd   Systemd
	o    Options
	wake chan struct{}
	// mem is what the agent has acted on (agentsystemd.Memory); Round alone uses it.
	mem agentsystemd.Memory

	mu        sync.Mutex
	lastRound time.Time
	lastErr   error
	published []fleetv1.UnitState
	lastBeat  time.Time
	rounds    int
	failures  int
}

// New returns an agent.
func New(c client.WithWatch, sd Systemd, o Options) (*Agent, error) {
	if o.MachineID == "" {
		return nil, fmt.Errorf("no machine ID")
	}
	if o.MachineTTL <= 0 {
		o.MachineTTL = units.DefaultMachineTTL
	}
	if o.Interval <= 0 {
		o.Interval = 5 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.New()
	}
	return &Agent{c: c, sd: sd, o: o, wake: make(chan struct{}, 1)}, nil
}

// Wake asks for a round soon.
func (a *Agent) Wake() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Healthy reports nil if the agent is connected to systemd and made a round recently.
func (a *Agent) Healthy() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.sd.Connected() {
		return fmt.Errorf("D-Bus connection to systemd lost")
	}
	if a.lastRound.IsZero() {
		return fmt.Errorf("no round yet")
	}
	if since := a.o.Clock.Since(a.lastRound); since > 3*a.o.Interval+a.o.MachineTTL {
		return fmt.Errorf("last round %v ago", since.Round(time.Second))
	}
	return nil
}

// Stats returns the rounds made and the rounds whose tasks or writes failed.
func (a *Agent) Stats() (rounds, failures int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rounds, a.failures
}

// Run registers the machine and runs rounds until ctx ends. Units keep running when the
// agent stops, as in fleet: a restarted agent finds them in systemd and leaves them alone.
func (a *Agent) Run(ctx context.Context) error {
	log := a.o.Log.WithValues("machine", a.o.MachineID)
	if err := a.register(ctx); err != nil {
		return err
	}
	log.Info("machine registered", "publicIP", a.o.PublicIP, "metadata", a.o.Metadata)
	if err := a.sd.Watch(ctx, a.Wake); err != nil {
		log.Error(err, "cannot watch systemd; relying on the reconcile period")
	}
	go a.watchUnits(ctx, log)
	tick := a.o.Clock.Ticker(a.o.Interval)
	defer tick.Stop()
	beat := a.o.Clock.Ticker(a.o.MachineTTL / 3)
	defer beat.Stop()
	for {
		if err := a.Round(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "round failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-beat.C:
		case <-a.wake:
		}
	}
}

// watchUnits wakes the agent on every change of a Unit on the hub; the watch is restarted
// when the API server ends it. The pause before a retry is wall time on purpose: it paces
// calls to the API server and decides nothing.
func (a *Agent) watchUnits(ctx context.Context, log logr.Logger) {
	for ctx.Err() == nil {
		w, err := a.c.Watch(ctx, &fleetv1.UnitList{})
		if err != nil {
			log.V(1).Info("watch units failed; retrying", "err", err.Error())
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type != watch.Bookmark {
				a.Wake()
			}
		}
		w.Stop()
	}
}

func (a *Agent) register(ctx context.Context) error {
	for {
		m := &fleetv1.Machine{}
		err := a.c.Get(ctx, client.ObjectKey{Name: a.o.MachineID}, m)
		switch {
		case apierrors.IsNotFound(err):
			m = &fleetv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: a.o.MachineID}, Spec: fleetv1.MachineSpec{Metadata: a.o.Metadata}}
			err = a.c.Create(ctx, m)
		case err == nil:
			md := maps.Clone(m.Spec.Metadata)
			if md == nil {
				md = map[string]string{}
			}
			maps.Copy(md, a.o.Metadata)
			if !maps.Equal(md, m.Spec.Metadata) && len(md) > 0 {
				m.Spec.Metadata = md
				err = a.c.Update(ctx, m)
			}
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("register machine %s: %w", a.o.MachineID, err)
		}
		return nil
	}
}

// Desired returns the units machine id should run, given the hub's units and machines as
// listed: it converts them to the model and leaves the decision to agentsystemd.DesiredOn,
// which the simulator's agents share. Units that do not convert are left out (the engine
// reports them invalid; a unit the agent cannot read is not one it can run).
func Desired(id string, ul []fleetv1.Unit, ml []fleetv1.Machine, now time.Time, ttl time.Duration) []agentsystemd.DesiredUnit {
	jobs, _ := convert.UnitJobs(ul)
	return agentsystemd.DesiredOn(id, convert.MachineStates(ml, now, ttl), jobs)
}

// Round makes one reconcile round and publishes the states systemd reports.
func (a *Agent) Round(ctx context.Context) error {
	var ul fleetv1.UnitList
	if err := a.c.List(ctx, &ul); err != nil {
		return a.done(fmt.Errorf("list units: %w", err))
	}
	var ml fleetv1.MachineList
	if err := a.c.List(ctx, &ml); err != nil {
		return a.done(fmt.Errorf("list machines: %w", err))
	}
	desired := Desired(a.o.MachineID, ul.Items, ml.Items, a.o.Clock.Now(), a.o.MachineTTL)
	plan, done, rerr := a.mem.Reconcile(desired, a.sd)
	for _, t := range done {
		a.o.Log.Info("task done", "task", t.String(), "reason", t.Reason)
	}
	if rerr != nil {
		rerr = fmt.Errorf("plan %v: %w", plan, rerr)
	}
	cur, err := a.sd.Units()
	if err != nil {
		return a.done(fmt.Errorf("read units from systemd: %w", err))
	}
	states := toAPI(a.mem.ReportStates(cur, a.o.MachineID))
	if err := a.publish(ctx, states); err != nil {
		return a.done(err)
	}
	if len(done) > 0 {
		a.Wake() // states may still settle (a unit starting): look again soon
	}
	return a.done(rerr)
}

func (a *Agent) done(err error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastRound = a.o.Clock.Now()
	a.lastErr = err
	a.rounds++
	if err != nil {
		a.failures++
	}
	return err
}

func toAPI(in []agentsystemd.UnitState) []fleetv1.UnitState {
	out := make([]fleetv1.UnitState, 0, len(in))
	for _, s := range in {
		out = append(out, fleetv1.UnitState{Name: s.Name, Hash: s.Hash.String(), LoadState: s.LoadState, ActiveState: s.ActiveState, SubState: s.SubState, State: string(s.Current)})
	}
	return out
}

// publish writes the heartbeat and the unit states if they changed or a beat is due.
func (a *Agent) publish(ctx context.Context, states []fleetv1.UnitState) error {
	a.mu.Lock()
	due := a.o.Clock.Since(a.lastBeat) >= a.o.MachineTTL/3-a.o.Interval/2 || !slices.Equal(states, a.published)
	a.mu.Unlock()
	if !due {
		return nil
	}
	for {
		m := &fleetv1.Machine{}
		if err := a.c.Get(ctx, client.ObjectKey{Name: a.o.MachineID}, m); err != nil {
			if apierrors.IsNotFound(err) {
				if err := a.register(ctx); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("read machine: %w", err)
		}
		now := a.o.Clock.Now()
		m.Status = fleetv1.MachineStatus{PublicIP: a.o.PublicIP, LastHeartbeat: metav1.NewMicroTime(now), Version: a.o.Version, Units: states}
		err := a.c.Status().Update(ctx, m)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("heartbeat: %w", err)
		}
		a.mu.Lock()
		a.lastBeat, a.published = now, states
		a.mu.Unlock()
		return nil
	}
}
