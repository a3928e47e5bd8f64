package sim

import (
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/benbjohnson/clock"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
	"github.com/fleetsim/fleetsim/sim/eventq"
	"github.com/fleetsim/fleetsim/sim/trace"
)

type eventKind uint8

const (
	evFunc eventKind = iota
	evHeartbeat
	evAgentSync
	evReconcile
	evRequeue
	evHubStart
)

// event is a pending occurrence, kept small (24 bytes) because the queue moves millions of
// them: hot kinds (heartbeats, reconciles) carry only indexes; rare closures live in a
// side table.
type event struct {
	kind  eventKind
	ctrl  controller
	epoch uint32
	// ref is the agent index (heartbeat, agent sync), the interned key (reconcile, requeue)
	// or the slot in Sim.funcs (func).
	ref int32
	// A heartbeat's send time is its agent's (agent.sent): an agent has one heartbeat on
	// its way per epoch, and a smaller event makes a smaller queue (32 bytes an item).
}

// The event queue's calendar: buckets of 1/64 s and a ring of 65,536 of them (17 minutes)
// hold heartbeats, network deliveries and health timers; later events wait in its far
// heap. Heartbeats of a jittered fleet bunch (5,000 members within a few seconds), so a
// one-second bucket held hundreds of events and each pop sifted through them; a 1/64 s
// bucket holds a handful. See eventq.Calendar and reports/benchmarks.md.
const (
	queueBucket  = time.Second / 64
	queueBuckets = 65536
)

// funcEvent is a rare action scheduled as a closure.
type funcEvent struct {
	name, subject string
	fn            func()
}

// Clock is the simulator's clock.Clock: Now is the loop's virtual time. Components take it
// as clock.Clock, the same interface production code takes; the sim never sleeps or uses
// timers (deferred work is an event), so those methods fall through to an idle clock.Mock.
type Clock struct {
	*clock.Mock
	s *Sim
}

func (c Clock) Now() time.Time                  { return c.s.Now() }
func (c Clock) Since(t time.Time) time.Duration { return c.s.Now().Sub(t) }
func (c Clock) Until(t time.Time) time.Duration { return t.Sub(c.s.Now()) }

// Sim is one simulation run.
type Sim struct {
	cfg    Config
	queue  *eventq.Calendar[event]
	now    time.Duration
	trace  *trace.Recorder
	clock  Clock
	rngMem *rand.Rand // heartbeat jitter
	rngNet *rand.Rand // network delay and loss
	rngFlt *rand.Rand // random faults

	store  *store
	agents []*agent
	hub    hub
	sched  *scheduler.Scheduler

	// barriers run when time is about to pass their instant (expectations at a time see
	// every event of that time).
	barriers []barrier
	// afterEvent hooks run after every processed event (invariants); atEnd hooks once when
	// Run returns (full checks of what was checked incrementally).
	afterEvent []func()
	atEnd      []func()
	invMemo    invMemo // named invariants' last passes (invariants_incremental.go)
	processed  uint64
	stopped    bool
	// topPending: the event being processed is still at the top of the queue.
	topPending bool

	controllers *mhub.Controllers
	fleet       fleetRegistry
	appliedAt   map[string]appliedWork // by binding name: when the member applied it
	observers   []Observer
	workloads   []Workload
	newBindings []placement.Binding // created by the event being processed

	funcs     []funcEvent
	freeFuncs []int32
	keys      []string         // interned reconcile keys
	keyIDs    map[string]int32 // key → index in keys
	// decisions and heartbeats count for Counters; decisionObservers see each decision.
	decisions         [numControllers]uint64
	heartbeats        uint64
	decisionObservers []DecisionObserver
	// lastLabels is the label map of the member added last, shared by the next member with
	// equal labels.
	lastLabels map[string]string
}

type barrier struct {
	at time.Duration
	fn func()
}

// New builds a simulation.
func New(cfg Config) (*Sim, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Sim{
		cfg:    cfg,
		queue:  eventq.NewCalendar[event](queueBucket, queueBuckets),
		trace:  trace.New(cfg.Trace),
		rngMem: component(cfg.Seed, "members"),
		rngNet: component(cfg.Seed, "network"),
		rngFlt: component(cfg.Seed, "faults"),
		sched:  scheduler.New(scheduler.Options{Eligibility: cfg.Eligibility}),
	}
	s.clock = Clock{Mock: clock.NewMock(), s: s}
	s.keyIDs = map[string]int32{}
	s.store = newStore()
	s.store.onNewBinding = func(b placement.Binding) { s.newBindings = append(s.newBindings, b) }
	s.store.onBindingDeleted = func(name string) { delete(s.appliedAt, name) }
	s.store.onWorkDeleted = func(w *mhub.Work) { s.workDeleted(w) }
	s.store.profiles.now, s.store.profiles.eligibility = s.Now, cfg.Eligibility
	s.hub = newHub(s)
	s.appliedAt = map[string]appliedWork{}
	s.fleet = newFleetRegistry()
	s.controllers = &mhub.Controllers{Store: s.store, Env: s, Scheduler: s.sched, Eligibility: cfg.Eligibility, Propagation: cfg.Propagation}
	return s, nil
}

// component derives one component's random source from the run's seed, so adding draws in
// one component never shifts another's.
func component(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// Now is the current virtual wall-clock time.
func (s *Sim) Now() time.Time { return s.cfg.Start.Add(s.now) }

// Elapsed is the current virtual time since the start.
func (s *Sim) Elapsed() time.Duration { return s.now }

// Clock returns the clock components read.
func (s *Sim) Clock() clock.Clock { return s.clock }

// push schedules an event after delay d.
func (s *Sim) push(d time.Duration, e event) { s.schedule(s.now+d, e) }

// schedule queues an event at virtual time at. While an event is being processed it is
// still the queue's minimum; the first event scheduled then takes its place in one sift
// instead of a pop and a push (a heartbeat scheduling the next one is the common case).
func (s *Sim) schedule(at time.Duration, e event) {
	if s.topPending {
		s.topPending = false
		s.queue.ReplaceMin(at, e)
		return
	}
	s.queue.Push(at, e)
}

// At runs fn at virtual time t (not before now); name is its kind in the trace.
func (s *Sim) At(t time.Duration, name string, fn func()) {
	s.atSubject(t, name, "", fn)
}

func (s *Sim) atSubject(t time.Duration, name, subject string, fn func()) {
	if t < s.now {
		t = s.now
	}
	f := funcEvent{name: name, subject: subject, fn: fn}
	var slot int32
	if n := len(s.freeFuncs); n > 0 {
		slot = s.freeFuncs[n-1]
		s.freeFuncs = s.freeFuncs[:n-1]
		s.funcs[slot] = f
	} else {
		slot = int32(len(s.funcs))
		s.funcs = append(s.funcs, f)
	}
	s.schedule(t, event{kind: evFunc, ref: slot})
}

// key interns a reconcile key.
func (s *Sim) key(k string) int32 {
	if id, ok := s.keyIDs[k]; ok {
		return id
	}
	id := int32(len(s.keys))
	s.keys = append(s.keys, k)
	s.keyIDs[k] = id
	return id
}

// Barrier runs fn once every event at or before t has been processed, before time moves
// past t (or at the end of the run).
func (s *Sim) Barrier(t time.Duration, fn func()) {
	s.barriers = append(s.barriers, barrier{at: t, fn: fn})
	// Insertion sort keeps barriers ordered by time, then by registration.
	for i := len(s.barriers) - 1; i > 0 && s.barriers[i-1].at > s.barriers[i].at; i-- {
		s.barriers[i-1], s.barriers[i] = s.barriers[i], s.barriers[i-1]
	}
}

// AfterEvent registers a hook run after every processed event.
func (s *Sim) AfterEvent(fn func()) { s.afterEvent = append(s.afterEvent, fn) }

// AtEnd registers a hook run once at the end of every Run, after its last event and
// barriers.
func (s *Sim) AtEnd(fn func()) { s.atEnd = append(s.atEnd, fn) }

// Record adds an event to the trace and shows it to observers.
func (s *Sim) Record(kind, subject, detail string) {
	s.trace.Record(s.now, kind, subject, detail)
	if len(s.observers) > 0 {
		for _, o := range s.observers {
			o(s.now, kind, subject, detail)
		}
	}
}

// Result summarises a run.
type Result struct {
	TraceHash     string
	Events        uint64
	SimulatedTime time.Duration
}

// Run processes events until the queue is empty or the next event is after until.
func (s *Sim) Run(until time.Duration) (Result, error) {
	for !s.stopped {
		it, ok := s.queue.Peek()
		if !ok || it.At > until {
			break
		}
		if len(s.barriers) > 0 && s.barriers[0].at < it.At {
			s.runBarriers(it.At - 1)
			continue // a barrier may have scheduled something earlier
		}
		s.now = it.At
		s.topPending = true
		handled := s.dispatch(&it.Value)
		if s.topPending {
			s.topPending = false
			s.queue.Pop()
		}
		if handled {
			s.processed++
			s.invMemo.inHooks = true
			for _, f := range s.afterEvent {
				f()
			}
			s.invMemo.inHooks, s.invMemo.view = false, nil
		}
		s.newBindings = s.newBindings[:0]
	}
	if !s.stopped && until > s.now {
		s.now = until
	}
	s.runBarriers(s.now)
	for _, f := range s.atEnd {
		f()
	}
	err := s.trace.Close()
	return Result{TraceHash: s.trace.HashString(), Events: s.trace.Events(), SimulatedTime: s.now}, err
}

// runBarriers runs the barriers at or before t.
func (s *Sim) runBarriers(t time.Duration) {
	for len(s.barriers) > 0 && s.barriers[0].at <= t {
		b := s.barriers[0]
		s.barriers = s.barriers[1:]
		saved := s.now
		if b.at > s.now {
			s.now = b.at
		}
		b.fn()
		s.now = saved
	}
}

// Stop ends the run after the current event.
func (s *Sim) Stop() { s.stopped = true }

// dispatch processes one event; it returns false for events that were cancelled (a crashed
// agent's heartbeat, a restarted hub's queued work), which are neither traced nor counted.
func (s *Sim) dispatch(e *event) bool {
	switch e.kind {
	case evFunc:
		f := s.funcs[e.ref]
		s.funcs[e.ref] = funcEvent{}
		s.freeFuncs = append(s.freeFuncs, e.ref)
		s.Record(f.name, f.subject, "")
		f.fn()
		return true
	case evHeartbeat:
		return s.heartbeat(e)
	case evAgentSync:
		return s.agentSync(e)
	case evReconcile:
		return s.hub.process(e)
	case evRequeue:
		return s.hub.requeueFired(e)
	case evHubStart:
		return s.hub.start(e)
	}
	return false
}
