package timing

import (
	"container/heap"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/model/scheduler"
)

// The kinds of the hub's writes, as the measured hub's fleetsim_hub_writes_total names them
// ("Kind verb"), and the controllers its decisions are counted under.
const (
	writePlacement        = "ClusterResourcePlacement update"
	writePolicySnapshot   = "ClusterSchedulingPolicySnapshot create"
	writePolicyStatus     = "ClusterSchedulingPolicySnapshot update-status"
	writeResourceSnapshot = "ClusterResourceSnapshot create"
	writeBindingCreate    = "ClusterResourceBinding create"
	writeWorkCreate       = "Work create"
	writeBindingStatus    = "ClusterResourceBinding update-status"
	writePlacementStatus  = "ClusterResourcePlacement update-status"
	// Writes that are not the hub's: the bench's own creates, the agents' reports and the
	// heartbeats' status writes. They load the API server but are not in Result.Writes.
	writeOther = ""

	ctrlPlacementWide = "policy-snapshot"
	ctrlRollout       = "rollout"
)

// benchCreates: the bench creates a placement's namespace, ConfigMap and placement, one
// after the other, before the hub can see it.
const benchCreates = 3

// Predict runs the model of w's placement phase (and restart) on c.
func Predict(w Workload, c *Calibration) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	m := newModel(w, c)
	m.run()
	return m.result(), nil
}

// event is one thing due at a time; seq orders events due together by their scheduling.
type event struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	return e[i].at < e[j].at || e[i].at == e[j].at && e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// placement is one placement's progress through the model.
type placement struct {
	created  time.Duration
	bindings int
	// busy: a placement-wide decision holds the placement (rule 3 of prod/hub: they are
	// serial per placement); rerun: a wake came meanwhile.
	busy, rerun bool
	// wakeAt is the rollout's pending wake (0: none).
	wakeAt time.Duration
	// awaited Works written whose report has not reached the hub; arrived reports not yet
	// fanned in; served reports fanned in.
	awaited, arrived, served int
	reported                 int
	steps                    [4]time.Duration
	available                time.Duration
}

type model struct {
	w   Workload
	c   *Calibration
	now time.Duration
	q   events
	seq uint64

	// The machine's cores, which serve the API server's writes and the hub's decisions.
	cores *Cores

	// The hub's workers and the decisions waiting for one, first come first served.
	idle    int
	waiting []func()

	placements []*placement
	next       int // the next placement the bench creates
	left       int // placements not yet available
	phaseEnd   time.Duration

	writes    map[string]float64
	decisions map[string]float64
	restart   struct{ first, settled, decisions float64 }
}

func newModel(w Workload, c *Calibration) *model {
	return &model{w: w, c: c, cores: NewCores(c), idle: w.Workers, writes: map[string]float64{}, decisions: map[string]float64{}}
}

func (m *model) at(t time.Duration, fn func()) {
	m.seq++
	heap.Push(&m.q, event{at: max(t, m.now), seq: m.seq, fn: fn})
}

func (m *model) after(d time.Duration, fn func()) { m.at(m.now+d, fn) }

func (m *model) run() {
	m.left = m.w.Placements
	for range max(m.w.Concurrent, 1) {
		m.create()
	}
	m.heartbeats()
	for m.q.Len() > 0 {
		e := heap.Pop(&m.q).(event)
		m.now = e.at
		e.fn()
	}
	if m.w.Restart {
		m.predictRestart()
	}
}

// heartbeats load the API server with the members' status writes while placements run: per
// member and period, the agent's InternalMemberCluster status and the hub's MemberCluster
// status, evenly spread.
func (m *model) heartbeats() {
	if m.w.Heartbeat <= 0 || m.left == 0 {
		return
	}
	every := m.w.Heartbeat / time.Duration(2*m.w.Members)
	if every <= 0 {
		every = time.Nanosecond
	}
	var beat func()
	beat = func() {
		if m.left == 0 {
			return
		}
		m.write(writeOther, m.c.APIServer.HeartbeatWrite, nil)
		m.after(every, beat)
	}
	m.after(every, beat)
}

// write sends one write of kind to the API server; done runs when its answer is back.
func (m *model) write(kind string, cost Constant, done func()) {
	if kind != writeOther {
		m.writes[kind]++
	}
	end := m.cores.Serve(m.now, m.c.WriteCPU(cost))
	if done != nil {
		m.at(end+m.c.RoundTrip(), done)
	}
}

// MixCost is the mean CPU cost in ms, in the write workload alone, of the writes of a run:
// the hub's by kind (as Result.Writes names them), reports the agents' reports and other
// the heartbeats' and the bench's writes; the run's statuses list clusters clusters.
// Calibrate divides a hub run's CPU per write by it.
func MixCost(c *Calibration, hubWrites map[string]float64, reports, other float64, clusters int) float64 {
	a := c.APIServer
	cost := map[string]Constant{writePlacement: a.SnapshotCreate, writePolicySnapshot: a.SnapshotCreate,
		writePolicyStatus: c.PolicyStatusCost(clusters), writeResourceSnapshot: a.SnapshotCreate, writeBindingCreate: a.BindingCreate,
		writeWorkCreate: a.WorkCreate, writeBindingStatus: a.BindingStatus, writePlacementStatus: c.PlacementStatusCost(clusters)}
	sum, n := reports*a.WorkStatus.Value+other*a.HeartbeatWrite.Value, reports+other
	// In key order: a float sum in map order can differ in its last bit from run to run.
	for _, k := range slices.Sorted(maps.Keys(hubWrites)) {
		v := hubWrites[k]
		kc, ok := cost[k]
		if !ok {
			kc = a.BindingStatus // a write the model does not make (an event, a member's status): an update
		}
		sum += v * kc.Value
		n += v
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// chain writes ws one after the other, then runs then.
func (m *model) chain(ws []Write, then func()) {
	if len(ws) == 0 {
		then()
		return
	}
	m.write(ws[0].Kind, ws[0].Cost, func() { m.chain(ws[1:], then) })
}

// parallel writes n objects of kind, flushParallelism at a time as a flush phase does; each
// runs after each write and then after all of them. hub is the hub's CPU that goes with each
// write (see hubShare), served on the cores before the write's own.
func (m *model) parallel(n int, kind string, cost Constant, hub time.Duration, each func(), then func()) {
	if n == 0 {
		then()
		return
	}
	issued, left := 0, n
	var issue, done func()
	issue = func() {
		issued++
		if hub > 0 {
			// The hub's share is served before the write reaches the API server.
			m.at(m.cores.Serve(m.now, hub), func() { m.write(kind, cost, done) })
			return
		}
		m.write(kind, cost, done)
	}
	done = func() {
		if each != nil {
			each()
		}
		left--
		if issued < n {
			issue()
		}
		if left == 0 {
			then()
		}
	}
	for issued < min(int(m.c.Hub.FlushParallelism.Value), n) {
		issue()
	}
}

// decide runs a decision of controller ctrl on a worker: read is called when it starts (what
// it reads then) and returns its CPU time and what it writes, which gets release to call
// once written.
func (m *model) decide(ctrl string, read func() (time.Duration, func(release func()))) {
	start := func() {
		m.decisions[ctrl]++
		cpu, body := read()
		m.at(m.cores.Serve(m.now, cpu), func() { body(m.release) })
	}
	if m.idle > 0 {
		m.idle--
		start()
		return
	}
	m.waiting = append(m.waiting, start)
}

func (m *model) release() {
	if len(m.waiting) > 0 {
		next := m.waiting[0]
		m.waiting = m.waiting[1:]
		next()
		return
	}
	m.idle++
}

func (m *model) cpu(bindings int) time.Duration { return m.c.DecisionCPU(bindings) }

// hubShare is the hub's CPU for one binding spread over the binding's n writes
// (Calibration.HubCPUPerWrite).
func (m *model) hubShare(n int) time.Duration { return m.c.HubCPUPerWrite(1, n) }

// create is the bench creating the next placement, if any is left.
func (m *model) create() {
	if m.next >= m.w.Placements {
		return
	}
	m.next++
	p := &placement{created: m.now, bindings: m.w.PerPlacement()}
	m.placements = append(m.placements, p)
	var bench func(i int)
	bench = func(i int) {
		if i == benchCreates {
			// The hub sees the placement an informer delay later, and decides on it once
			// warm (Calibration.WarmAfterJoin).
			m.at(max(m.now+ms(m.c.Hub.InformerDelay), m.c.WarmAfterJoin(m.w.Members)), func() { m.placementWide(p) })
			return
		}
		m.write(writeOther, m.c.APIServer.BindingCreate, func() { bench(i + 1) })
	}
	bench(0)
}

// placementWide is the placement's first decision: the chain run inline (policy snapshot,
// scheduler, rollout, work generator), then one flush in the hub's order.
func (m *model) placementWide(p *placement) {
	p.busy = true
	a := m.c.APIServer
	seen := ms(m.c.Hub.InformerDelay)
	// The decision's CPU per binding goes with the binding's three writes.
	share := m.hubShare(3)
	// The flush, phase after phase: the placement (its finalizer) and its snapshots one
	// after the other, then the bindings, their Works and the bindings' statuses, each
	// flushParallelism at a time, and the placement's status last.
	flush := func(release func()) {
		statuses := func() {
			m.parallel(p.bindings, writeBindingStatus, a.BindingStatus, share, nil, func() {
				m.write(writePlacementStatus, m.c.PlacementStatusCost(p.bindings), func() {
					release()
					m.unlock(p)
				})
			})
		}
		works := func() {
			p.steps[0], p.steps[1] = m.now+seen-p.created, m.now+seen-p.created
			m.parallel(p.bindings, writeWorkCreate, a.WorkCreate, share, func() { m.workWritten(p) }, func() {
				p.steps[2] = m.now + seen - p.created
				statuses()
			})
		}
		// The policy snapshot's status holds a decision for every member, up to the
		// scheduler's limit.
		decisions := min(m.w.Members, scheduler.DefaultMaxDecisions)
		m.chain(m.c.DecisionWrites(ctrlPlacementWide, p.bindings, decisions), func() {
			m.parallel(p.bindings, writeBindingCreate, a.BindingCreate, share, nil, works)
		})
	}
	m.decide(ctrlPlacementWide, func() (time.Duration, func(func())) { return m.cpu(0), flush })
}

// workWritten: the member's agent sees the Work an informer delay later, reports after the
// report delay, and the hub sees the report an informer delay after it is written.
func (m *model) workWritten(p *placement) {
	p.awaited++
	seen := ms(m.c.Hub.InformerDelay)
	m.after(seen+m.w.ReportDelay, func() {
		m.write(writeOther, m.c.APIServer.WorkStatus, func() {
			p.reported++
			if p.reported == p.bindings {
				p.steps[3] = m.now + seen - p.created
			}
			m.after(seen, func() { m.reportArrived(p) })
		})
	})
}

// reportArrived wakes the rollout as prod/hub's triggers do: 20 ms later for the last report
// awaited, else 300 ms later; an earlier wake stands.
func (m *model) reportArrived(p *placement) {
	p.awaited--
	p.arrived++
	d := ms(m.c.Hub.ReportWindow)
	if p.awaited == 0 {
		d = ms(m.c.Hub.ReportBatchDelay)
	}
	due := m.now + d
	if p.wakeAt != 0 && p.wakeAt <= due {
		return
	}
	p.wakeAt = due
	m.at(due, func() {
		if p.wakeAt != m.now {
			return // superseded by an earlier wake
		}
		p.wakeAt = 0
		m.rollout(p)
	})
}

// rollout fans in the reports that arrived by the time it reads: their bindings' statuses,
// then the placement's status.
func (m *model) rollout(p *placement) {
	if p.busy {
		p.rerun = true
		return
	}
	if p.arrived == 0 {
		return
	}
	p.busy = true
	a := m.c.APIServer
	m.decide(ctrlRollout, func() (time.Duration, func(func())) {
		n := p.arrived
		p.arrived = 0
		return m.cpu(0), func(release func()) {
			m.parallel(n, writeBindingStatus, a.BindingStatus, m.hubShare(1), nil, func() {
				m.write(writePlacementStatus, m.c.PlacementStatusCost(p.bindings), func() {
					p.served += n
					release()
					if p.served == p.bindings && p.available == 0 {
						m.available(p)
					}
					m.unlock(p)
				})
			})
		}
	})
}

func (m *model) unlock(p *placement) {
	p.busy = false
	if p.rerun || p.arrived > 0 && p.wakeAt == 0 && p.awaited == 0 {
		p.rerun = false
		m.rollout(p)
	}
}

// available: the bench sees the placement's status an informer delay later, at its next poll.
func (m *model) available(p *placement) {
	d := m.now + ms(m.c.Hub.InformerDelay) - p.created
	if poll := ms(m.c.Agent.PollInterval); poll > 0 {
		d = (d + poll - 1) / poll * poll
	}
	p.available = d
	m.left--
	m.phaseEnd = max(m.phaseEnd, p.created+d)
	m.at(p.created+d, m.create)
}

// predictRestart: a new hub starts, its informers list what is stored, kind by kind at each
// kind's measured cost for its size (Calibration.RestartList), then each placement is
// decided again on the workers; nothing changed, so nothing is written.
func (m *model) predictRestart() {
	b := m.w.PerPlacement()
	first := ms(m.c.Hub.StartDelay) + m.c.RestartList(m.w.Members, m.w.Placements, b)
	free := make([]time.Duration, m.w.Workers)
	for i := range free {
		free[i] = first
	}
	last := first
	for range m.w.Placements {
		w := 0
		for i := range free {
			if free[i] < free[w] {
				w = i
			}
		}
		free[w] += m.cpu(b)
		last = max(last, free[w])
	}
	m.restart.first, m.restart.settled, m.restart.decisions = first.Seconds(), last.Seconds(), float64(m.w.Placements)
}

func (m *model) result() *Result {
	r := &Result{Source: "predicted", Members: m.w.Members, Placements: m.w.Placements, Pick: m.w.Pick,
		Concurrent: max(m.w.Concurrent, 1), PlacementPhaseSeconds: Round2(m.phaseEnd.Seconds())}
	var avail []time.Duration
	steps := make([][]time.Duration, len(StepNames))
	for _, p := range m.placements {
		avail = append(avail, p.available)
		for i := range StepNames {
			steps[i] = append(steps[i], p.steps[i])
		}
	}
	r.Available = PercentilesOf(avail)
	for i, n := range StepNames {
		r.Steps = append(r.Steps, Step{Name: n, Seconds: PercentilesOf(steps[i])})
	}
	if len(m.decisions) > 0 {
		r.DecisionsByController = m.decisions
	}
	for _, k := range slices.Sorted(maps.Keys(m.decisions)) {
		r.Decisions += m.decisions[k]
	}
	if len(m.writes) > 0 {
		r.Writes = m.writes
	}
	var all float64
	for _, k := range slices.Sorted(maps.Keys(m.writes)) {
		all += m.writes[k]
	}
	r.APICalls = all
	if r.Decisions > 0 {
		r.APICallsPerDecision = Round2(all / r.Decisions)
	}
	if n := m.w.PerPlacement() * m.w.Placements; n > 0 {
		r.WritesPerBinding = Round2(all / float64(n))
	}
	if m.w.Restart {
		r.RestartSeconds, r.RestartFirstDecisionSeconds, r.RestartDecisions = Round2(m.restart.settled), Round2(m.restart.first), m.restart.decisions
	}
	return r
}
