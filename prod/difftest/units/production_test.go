package units

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentsystemd"
	"github.com/fleetsim/fleetsim/agentsystemd/machine"
	sdbus "github.com/fleetsim/fleetsim/agentsystemd/machine/dbus"
	"github.com/fleetsim/fleetsim/agentsystemd/machine/dbus/sdtest"
	"github.com/fleetsim/fleetsim/apis/convert"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
	"github.com/fleetsim/fleetsim/prod/engine"
	"github.com/fleetsim/fleetsim/prod/testenv"
	"github.com/fleetsim/fleetsim/scenarios"
)

const (
	// machineTTL is the engine's and the agents' machine TTL: the simulator's default
	// (sim.Config.MachineTTL), fleet's agent_ttl.
	machineTTL = units.DefaultMachineTTL
	// agentInterval is the agents' reconcile period, fleet's 5 s.
	agentInterval = 5 * time.Second
	// maxStep is the longest move of the shared clock between two settles. An agent beats at
	// a round once its last beat is a third of the TTL less half an interval old (7.5 s), and
	// a step of an interval or more ends with a round at most an interval (5 s) before the
	// step's end; so after a settled step no running machine's beat is older than 12.5 s,
	// and a step of 15 s leaves it 2.5 s within the TTL, its agent beating again within the
	// step. A step is never why a machine is lost.
	maxStep = 15 * time.Second
	// quiet is how long production must show no change at all (no object written, no
	// systemd state changed) to count as settled: many times a goroutine's wake-up on a
	// loaded machine.
	quiet = 300 * time.Millisecond
	// quietBeforeCompare is the longer quiet required before a state is compared, so that a
	// goroutine the machine's load kept waiting past quiet cannot pass for settled there.
	quietBeforeCompare = 2 * time.Second
	// pollEvery is how often the settle loop looks.
	pollEvery = 50 * time.Millisecond
	// leaseTTL is the engine lease's TTL. `fleet hub`'s 10 s is shorter than a clock step: the
	// engine renews at a third of it on the mock clock, and a step would let the lease lapse
	// and the engine take a new term at every step. Four steps keep one term for the run.
	leaseTTL = 4 * maxStep
	// settleTimeout bounds one settle: production that never goes quiet is a failure.
	settleTimeout = 2 * time.Minute
)

// start is the mock clock's time at the scenario's 0s.
var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// production is `fleet hub`'s unit engine on a real API server and one `fleet agent` per
// machine on a real systemd, all on one mock clock, driven by a plan's phases.
type production struct {
	t      *testing.T
	plan   *Plan
	admin  client.Client
	agentC client.WithWatch
	clock  *clock.Mock
	now    time.Duration // scenario time of the clock
	eng    *engine.Engine
	// names are every unit name the scenario ever submits, the names looked up in systemd.
	names    []string
	machines map[string]*prodMachine
	// steps counts clock moves, settles the settles, for the report.
	steps int
}

// prodMachine is one machine: its systemd sandbox, always up, and its agent when running.
type prodMachine struct {
	m        Machine
	sb       *sdtest.Sandbox
	obs      *sddbus.Conn // the test's own connection to the machine's systemd
	metadata map[string]string
	joined   bool
	agent    *runningAgent // nil while crashed or partitioned, or before it joins
}

type runningAgent struct {
	a      *machine.Agent
	drv    *sdbus.Driver
	cancel context.CancelFunc
	done   chan error
}

// startProduction starts the API server, one systemd sandbox per machine of the plan, and
// the unit engine on the mock clock. Agents start when their machine joins.
func startProduction(t *testing.T, p *Plan) *production {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skips the tests that start kube-apiserver, etcd and systemd")
	}
	sdtest.Require(t)
	env := testenv.StartEnv(t)
	mock := clock.NewMock()
	mock.Set(start)
	agentC, err := client.NewWithWatch(env.Config, client.Options{Scheme: testenv.Scheme(t)})
	if err != nil {
		t.Fatalf("agents' hub client: %v", err)
	}
	f := &production{t: t, plan: p, admin: testenv.Client(t, env.Config), agentC: agentC, clock: mock, machines: map[string]*prodMachine{}, names: unitNames(p)}
	for _, m := range p.Machines {
		sb := sdtest.Start(t)
		obs, err := sdbus.Connect(context.Background(), sb.BusAddress)
		if err != nil {
			t.Fatalf("machine %s: %v", m.Name, err)
		}
		t.Cleanup(obs.Close)
		f.machines[m.Name] = &prodMachine{m: m, sb: sb, obs: obs, metadata: maps.Clone(m.Metadata)}
	}
	log := f.logger("engine")
	testenv.RunManager(t, env.Config, log, func(mgr ctrl.Manager) error {
		var err error
		f.eng, err = engine.Setup(mgr, engine.Options{Clock: mock, MachineTTL: machineTTL, LeaseTTL: leaseTTL, Log: log, CheckInvariants: true})
		return err
	})
	// Agents stop before the manager and the sandboxes (cleanups run last first).
	t.Cleanup(func() {
		for _, pm := range f.machines {
			f.stopAgent(pm)
		}
	})
	return f
}

// logger logs to t; an invariant the engine finds violated fails the test.
func (f *production) logger(name string) logr.Logger {
	var mu sync.Mutex
	return funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(args, "invariant violated") {
			f.t.Errorf("%s: %s %s", name, prefix, args)
		}
		if testing.Verbose() {
			f.t.Log(time.Now().Format("15:04:05.000"), name, prefix, args)
		}
	}, funcr.Options{})
}

// unitNames are the units the plan's fleetctl steps name, sorted, but templates: a template
// never runs (fleet keeps it inactive), and systemd refuses to look one up.
func unitNames(p *Plan) []string {
	seen := map[string]bool{}
	for _, ph := range p.Phases {
		for _, a := range ph.Actions {
			if a.Fleetctl != nil && !unitfile.IsTemplate(a.Fleetctl.Unit) {
				seen[a.Fleetctl.Unit] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// advance moves the shared clock to scenario time to, in steps of at most maxStep,
// settling after each.
func (f *production) advance(to time.Duration) {
	f.t.Helper()
	for f.now < to {
		step := min(maxStep, to-f.now)
		before := f.rounds()
		f.clock.Add(step)
		f.now += step
		f.steps++
		if step >= agentInterval {
			f.waitRounds(before)
		}
		f.settle(fmt.Sprintf("clock moved to %s", f.now))
	}
}

// rounds returns each running agent's round count.
func (f *production) rounds() map[string]int {
	out := map[string]int{}
	for name, pm := range f.machines {
		if pm.agent != nil {
			out[name], _ = pm.agent.a.Stats()
		}
	}
	return out
}

// waitRounds waits until every agent running at before has made a round since: a step of
// an interval or more fires its ticker, and its round must start before quiet can count.
func (f *production) waitRounds(before map[string]int) {
	f.t.Helper()
	deadline := time.Now().Add(settleTimeout)
	for name, n := range before {
		pm := f.machines[name]
		for pm.agent != nil {
			if r, _ := pm.agent.a.Stats(); r > n {
				break
			}
			if time.Now().After(deadline) {
				f.t.Fatalf("at %s: agent %s made no round within %s of a clock step", f.now, name, settleTimeout)
			}
			time.Sleep(pollEvery)
		}
	}
}

// settle waits until production shows no change for quiet: no Unit or Machine written, no
// unit's state in any systemd changed. It never looks at the simulator.
func (f *production) settle(what string) { f.settleFor(what, quiet) }

// settleFor is settle with a quiet period of its own.
func (f *production) settleFor(what string, quiet time.Duration) {
	f.t.Helper()
	deadline := time.Now().Add(settleTimeout)
	last, err := f.fingerprint()
	since, changed := time.Now(), ""
	for {
		time.Sleep(pollEvery)
		fp, ferr := f.fingerprint()
		if ferr != nil || fp != last {
			changed = newLines(last, fp)
			last, err, since = fp, ferr, time.Now()
		} else if time.Since(since) >= quiet {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: production did not settle within %s (last read error: %v); last change:\n%s\nlast state:\n%s", what, settleTimeout, err, changed, last)
		}
	}
}

// newLines are the lines of b not in a.
func newLines(a, b string) string {
	old := strings.Split(a, "\n")
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if !slices.Contains(old, l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// fingerprint is what production shows: every Unit and Machine object's resourceVersion and
// the state of every scenario unit in every machine's systemd. Agent rounds and engine passes
// are left out: an agent woken by its watch, or an engine by its timer, that changes nothing
// is not production moving (and on a loaded API server the agents' watches wake them often).
func (f *production) fingerprint() (string, error) {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(f.machines)) {
		st, err := f.systemd(f.machines[name])
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "systemd %s: %v\n", name, st)
	}
	ctx := context.Background()
	var ul fleetv1.UnitList
	if err := f.admin.List(ctx, &ul); err != nil {
		return "", fmt.Errorf("list units: %w", err)
	}
	for _, u := range ul.Items {
		fmt.Fprintf(&b, "unit %s %s\n", u.Name, u.ResourceVersion)
	}
	var ml fleetv1.MachineList
	if err := f.admin.List(ctx, &ml); err != nil {
		return "", fmt.Errorf("list machines: %w", err)
	}
	for _, m := range ml.Items {
		fmt.Fprintf(&b, "machine %s %s\n", m.Name, m.ResourceVersion)
	}
	return b.String(), nil
}

// systemd returns "name=load/active/sub" for every scenario unit the machine's systemd knows.
func (f *production) systemd(pm *prodMachine) ([]string, error) {
	if len(f.names) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	us, err := pm.obs.ListUnitsByNamesContext(ctx, f.names)
	if err != nil {
		return nil, fmt.Errorf("systemd of %s: list units: %w", pm.m.Name, err)
	}
	var out []string
	for _, u := range us {
		if u.LoadState == agentsystemd.LoadNotFound && u.ActiveState == agentsystemd.ActiveInactive {
			continue
		}
		out = append(out, u.Name+"="+u.LoadState+"/"+u.ActiveState+"/"+u.SubState)
	}
	slices.Sort(out)
	return out, nil
}

// read returns production's State: the registry's units (desired state, target machine)
// and, from each joined machine's systemd, where each runs. A scenario unit that runs
// somewhere but is no longer in the registry is listed with desired state "(not in the
// registry)", so that a leftover shows as a difference.
func (f *production) read() State {
	f.t.Helper()
	st := State{Units: map[string]Unit{}}
	var ul fleetv1.UnitList
	if err := f.admin.List(context.Background(), &ul); err != nil {
		f.t.Fatalf("list units: %v", err)
	}
	for _, u := range ul.Items {
		st.Units[u.Spec.Name] = Unit{Desired: u.Spec.DesiredState, Machine: u.Status.MachineID, Running: []string{}}
	}
	for _, name := range slices.Sorted(maps.Keys(f.machines)) {
		pm := f.machines[name]
		if !pm.joined {
			continue // not a member yet, as in the simulator (its systemd runs nothing of fleet's)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		us, err := pm.obs.ListUnitsByNamesContext(ctx, f.names)
		cancel()
		if err != nil {
			f.t.Fatalf("systemd of %s: %v", name, err)
		}
		for _, u := range us {
			c := agentsystemd.CurrentUnit{Name: u.Name, LoadState: u.LoadState, ActiveState: u.ActiveState, SubState: u.SubState}
			if !c.Started() {
				continue
			}
			x, ok := st.Units[u.Name]
			if !ok {
				x = Unit{Desired: "(not in the registry)"}
			}
			x.Running = append(x.Running, name)
			st.Units[u.Name] = x
		}
	}
	st.normalize()
	return st
}

// doPhase performs a phase's actions in order, at the clock's current time.
func (f *production) doPhase(ph Phase) {
	f.t.Helper()
	for _, a := range ph.Actions {
		if err := f.do(a); err != nil {
			f.t.Fatalf("at %s: %s: %v", ph.At, a, err)
		}
	}
}

func (f *production) do(a Action) error {
	switch {
	case a.Join != nil:
		pm := f.machines[a.Join.Name]
		pm.joined = true
		return f.startAgent(pm)
	case a.Fleetctl != nil:
		return f.fleetctl(a.Fleetctl)
	case a.Fail != nil:
		pm, ok := f.machines[a.Fail.Member]
		if !ok {
			return fmt.Errorf("no machine %s", a.Fail.Member)
		}
		f.stopAgent(pm)
		if a.Fail.Mode == scenarios.Crash {
			return f.emptySystemd(pm)
		}
		return nil // a partitioned machine's systemd keeps running its units
	case a.Heal != nil:
		pm, ok := f.machines[a.Heal.Member]
		if !ok {
			return fmt.Errorf("no machine %s", a.Heal.Member)
		}
		if pm.agent != nil {
			return nil // never failed: nothing to heal, as in the simulator
		}
		return f.startAgent(pm)
	case a.Label != nil:
		return f.label(a.Label)
	}
	return fmt.Errorf("empty action")
}

// startAgent starts the machine's `fleet agent` on the mock clock, with a D-Bus connection
// of its own to the machine's systemd, and waits for its first round (it registers the
// machine and beats).
func (f *production) startAgent(pm *prodMachine) error {
	ctx, cancel := context.WithCancel(context.Background())
	drv, err := sdbus.Dial(ctx, pm.sb.BusAddress, pm.sb.UnitDir)
	if err != nil {
		cancel()
		return fmt.Errorf("agent %s: %w", pm.m.Name, err)
	}
	a, err := machine.New(f.agentC, drv, machine.Options{MachineID: pm.m.Name, Metadata: maps.Clone(pm.metadata),
		MachineTTL: machineTTL, Interval: agentInterval, Version: "difftest", Log: f.logger("agent " + pm.m.Name), Clock: f.clock})
	if err != nil {
		cancel()
		drv.Close()
		return err
	}
	ra := &runningAgent{a: a, drv: drv, cancel: cancel, done: make(chan error, 1)}
	go func() { ra.done <- a.Run(ctx) }()
	pm.agent = ra
	deadline := time.Now().Add(settleTimeout)
	for {
		if r, _ := a.Stats(); r > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("agent %s made no round within %s", pm.m.Name, settleTimeout)
		}
		time.Sleep(pollEvery)
	}
}

// stopAgent stops the machine's agent, if it runs, and closes its D-Bus connection. The
// units it started keep running, as when fleetd stops.
func (f *production) stopAgent(pm *prodMachine) {
	ra := pm.agent
	if ra == nil {
		return
	}
	pm.agent = nil
	ra.cancel()
	if err := <-ra.done; err != nil {
		f.t.Errorf("agent %s: %v", pm.m.Name, err)
	}
	ra.drv.Close()
}

// emptySystemd makes a crashed machine's systemd run nothing of fleet's, as a machine that
// rebooted has: every unit the agent wrote is stopped and its file removed (the agent's unit
// directory is under /run, which a reboot empties). It uses the agent's own decision with
// nothing desired.
func (f *production) emptySystemd(pm *prodMachine) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drv, err := sdbus.Dial(ctx, pm.sb.BusAddress, pm.sb.UnitDir)
	if err != nil {
		return fmt.Errorf("crash %s: %w", pm.m.Name, err)
	}
	defer drv.Close()
	for range 10 {
		plan, _, err := agentsystemd.Reconcile(nil, drv)
		if err != nil {
			return fmt.Errorf("crash %s: plan %v: %w", pm.m.Name, plan, err)
		}
		if len(plan) == 0 {
			return nil
		}
	}
	return fmt.Errorf("crash %s: its systemd still runs units after 10 rounds", pm.m.Name)
}

// fleetctl performs a fleetctl step as the simulator does: model/units.ApplyCommand on the
// registry's units decides the unit's next version (or its removal), which is written as a
// Unit object.
func (f *production) fleetctl(st *scenarios.FleetctlStep) error {
	ctx := context.Background()
	var file *unitfile.File
	if st.File != "" {
		parsed, err := unitfile.Parse(st.File)
		if err != nil {
			return fmt.Errorf("unit %s: %w", st.Unit, err)
		}
		file = parsed
	}
	var ul fleetv1.UnitList
	if err := f.admin.List(ctx, &ul); err != nil {
		return fmt.Errorf("list units: %w", err)
	}
	stored := map[string]*fleetv1.Unit{}
	for i := range ul.Items {
		stored[ul.Items[i].Spec.Name] = &ul.Items[i]
	}
	var lookupErr error
	lookup := func(name string) *units.Unit {
		u := stored[name]
		if u == nil {
			return nil
		}
		mu, err := convert.UnitToModel(u)
		if err != nil && lookupErr == nil {
			lookupErr = err
		}
		return mu
	}
	next, err := units.ApplyCommand(lookup, st.Unit, file, units.Op(st.Command))
	if err = cmpErr(err, lookupErr); err != nil {
		return err
	}
	cur := stored[st.Unit]
	switch {
	case next == nil && cur == nil:
		return nil
	case next == nil:
		return f.admin.Delete(ctx, cur)
	case cur == nil:
		return f.admin.Create(ctx, &fleetv1.Unit{ObjectMeta: metav1.ObjectMeta{Name: convert.UnitObjectName(st.Unit)},
			Spec: fleetv1.UnitSpec{Name: st.Unit, File: unitfile.Serialize(next.File), DesiredState: string(next.DesiredState)}})
	}
	cur.Spec.File, cur.Spec.DesiredState = unitfile.Serialize(next.File), string(next.DesiredState)
	return f.admin.Update(ctx, cur)
}

func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// label changes a machine's metadata on its Machine object (fleet API v1's "Edit Machine
// Metadata"); a restarted agent registers with the metadata as it is now.
func (f *production) label(l *scenarios.LabelStep) error {
	pm, ok := f.machines[l.Member]
	if !ok {
		return fmt.Errorf("no machine %s", l.Member)
	}
	maps.Copy(pm.metadata, l.Set)
	for _, k := range l.Remove {
		delete(pm.metadata, k)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &fleetv1.Machine{}
		if err := f.admin.Get(context.Background(), client.ObjectKey{Name: l.Member}, m); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("machine %s has not registered", l.Member)
			}
			return err
		}
		m.Spec.Metadata = maps.Clone(pm.metadata)
		return f.admin.Update(context.Background(), m)
	})
}
