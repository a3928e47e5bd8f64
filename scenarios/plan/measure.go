package plan

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/sim"
)

// Metric names: latencies in seconds, one sample per placement, cluster, run or member.
const (
	PlacementScheduled = "placement.scheduled"
	PlacementApplied   = "placement.applied"
	PlacementAvailable = "placement.available"
	ClusterScheduled   = "cluster.scheduled"
	ClusterApplied     = "cluster.applied"
	ClusterAvailable   = "cluster.available"
	RolloutDuration    = "rollout.duration"
	StagedRunDuration  = "staged.duration"
	MemberDetect       = "member.detect"
	MemberMoved        = "member.moved"
	HubResync          = "hub.resync"
)

// MetricInfo describes each metric for reports.
var MetricInfo = map[string]string{
	PlacementScheduled: "placement created → Scheduled (whole placement)",
	PlacementApplied:   "placement created → Applied (whole placement)",
	PlacementAvailable: "placement created → Available (whole placement)",
	ClusterScheduled:   "placement created → binding scheduled (per cluster)",
	ClusterApplied:     "placement created → Applied on the cluster",
	ClusterAvailable:   "placement created → Available on the cluster",
	RolloutDuration:    "placement updated → Available again (rollout)",
	StagedRunDuration:  "staged update run created → Succeeded",
	MemberDetect:       "member lost → hub marks it not Healthy/Joined",
	MemberMoved:        "member lost → its work rescheduled elsewhere",
	HubResync:          "hub restarted → every placement decided again",
}

// MetricOrder is the order metrics appear in reports.
var MetricOrder = []string{PlacementScheduled, PlacementApplied, PlacementAvailable, ClusterScheduled, ClusterApplied, ClusterAvailable,
	RolloutDuration, StagedRunDuration, MemberDetect, MemberMoved, HubResync}

// SketchSize bounds the samples a run keeps per metric: beyond it, a run keeps SketchSize
// evenly spaced order statistics and the count.
const SketchSize = 2001

// Sketch is a run's samples of one metric: sorted, exact up to SketchSize samples.
type Sketch struct {
	N      int       `json:"n"`
	Values []float64 `json:"values"`
}

func sketch(xs []float64) Sketch {
	xs = slices.Clone(xs)
	sort.Float64s(xs)
	if len(xs) <= SketchSize {
		return Sketch{N: len(xs), Values: xs}
	}
	out := make([]float64, SketchSize)
	for k := range out {
		out[k] = xs[k*(len(xs)-1)/(SketchSize-1)]
	}
	return Sketch{N: len(xs), Values: out}
}

// Sample is one point of a run's time series.
type Sample struct {
	T float64 `json:"t"` // seconds since the start
	// UnavailableMembers: members not Joined and Healthy (or not yet joined).
	UnavailableMembers int `json:"unavailableMembers"`
	// AvailableClusters: placement-cluster pairs whose binding reports Available.
	AvailableClusters int `json:"availableClusters"`
	// DecisionsPerSecond and WritesPerSecond over the interval ending at T.
	DecisionsPerSecond float64 `json:"decisionsPerSecond"`
	WritesPerSecond    float64 `json:"writesPerSecond"`
}

// RunResult is what one run measured.
type RunResult struct {
	Index     int               `json:"index"`
	Point     int               `json:"point"`
	Rep       int               `json:"rep"`
	Seed      uint64            `json:"seed"`
	TraceHash string            `json:"traceHash"`
	Events    uint64            `json:"events"`
	Simulated float64           `json:"simulatedSeconds"`
	Wall      float64           `json:"wallSeconds"`
	Metrics   map[string]Sketch `json:"metrics"`
	// DecisionsPerSecond by controller and in all ("total"), over the run.
	DecisionsPerSecond map[string]float64 `json:"decisionsPerSecond"`
	// WritesPerSecond is the API writes the hub's API server would take, averaged over the
	// run; PeakWritesPerSecond the highest over one sample interval. RequestsPerSecond is the
	// hub's own client requests (decisions × callsPerDecision) with a hub model.
	WritesPerSecond     float64 `json:"writesPerSecond"`
	PeakWritesPerSecond float64 `json:"peakWritesPerSecond"`
	RequestsPerSecond   float64 `json:"requestsPerSecond,omitempty"`
	// Writes by kind of object written, in all.
	Writes map[string]uint64 `json:"writes"`
	// PeakObjects is the most objects of each kind the hub held at a sample.
	PeakObjects map[string]int `json:"peakObjects"`
	Series      []Sample       `json:"series"`
}

// collector measures one run from the simulator's recorded events, its decision hook and
// periodic samples.
type collector struct {
	s      *sim.Sim
	sample time.Duration
	phases []Phase

	created   map[string]time.Duration // placement → creation
	updated   map[string]time.Duration // placement → last update not yet Available
	placeDone map[string]map[string]bool
	bindings  map[string]bindingInfo // binding → placement, cluster
	available map[string]bool        // binding → Available=True now
	runs      map[string]time.Duration
	snapshots map[string]int           // resource snapshots per placement
	failed    map[string]time.Duration // member → failure time, until detected
	lost      map[string]time.Duration // member → failure time, until healed
	moving    map[string]lostMember    // member → pending move
	resync    *resyncState

	samples map[string][]float64
	writes  map[string]uint64
	// lastWriteAt de-duplicates status writes: several conditions of one object changed by
	// one decision are one write.
	lastWrite map[string]time.Duration
	series    []Sample
	peak      map[string]int
	prevDec   uint64
	prevWr    uint64
	prevAt    time.Duration
}

type bindingInfo struct{ placement, cluster string }

type lostMember struct {
	at       time.Duration
	bindings map[string]bool // placements that had a binding there
}

type resyncState struct {
	start   time.Duration
	pending map[string]bool
}

func newCollector(s *sim.Sim, sample time.Duration, phases []Phase) *collector {
	c := &collector{s: s, sample: sample, phases: phases, created: map[string]time.Duration{}, updated: map[string]time.Duration{},
		placeDone: map[string]map[string]bool{}, bindings: map[string]bindingInfo{}, available: map[string]bool{},
		runs: map[string]time.Duration{}, snapshots: map[string]int{}, failed: map[string]time.Duration{}, lost: map[string]time.Duration{}, moving: map[string]lostMember{},
		samples: map[string][]float64{}, writes: map[string]uint64{}, lastWrite: map[string]time.Duration{}, peak: map[string]int{}}
	s.Observe(c.event)
	s.OnDecision(c.decision)
	return c
}

// add records the latency from start to end; within a phase of the plan, it is also
// recorded as metric@phase.
func (c *collector) add(metric string, start, end time.Duration) {
	// Microseconds are plenty and keep results short.
	v := math.Round((end-start).Seconds()*1e6) / 1e6
	c.samples[metric] = append(c.samples[metric], v)
	for _, ph := range c.phases {
		if start >= ph.From && start < ph.To {
			c.samples[metric+"@"+ph.Name] = append(c.samples[metric+"@"+ph.Name], v)
		}
	}
}

// write counts one API write of kind to object, once per object and instant.
func (c *collector) write(at time.Duration, kind, object string) {
	k := kind + "\x00" + object
	if t, ok := c.lastWrite[k]; ok && t == at {
		return
	}
	c.lastWrite[k] = at
	c.writes[kind]++
}

func condTrue(detail, typ string) bool {
	return strings.HasPrefix(detail, typ+"=True ")
}

func (c *collector) event(at time.Duration, kind, subject, detail string) {
	switch kind {
	case "placement-created":
		c.created[subject] = at
		c.snapshots[subject] = 0
		c.placeDone[subject] = map[string]bool{}
		c.write(at, "ClusterResourcePlacement", subject)
	case "placement-updated":
		c.updated[subject] = at
		c.write(at, "ClusterResourcePlacement", subject)
	case "placement-status":
		c.write(at, "ClusterResourcePlacement/status", subject)
		t0, ok := c.created[subject]
		done := c.placeDone[subject]
		for _, m := range []struct{ typ, metric string }{
			{"ClusterResourcePlacementScheduled", PlacementScheduled},
			{"ClusterResourcePlacementApplied", PlacementApplied},
			{"ClusterResourcePlacementAvailable", PlacementAvailable},
		} {
			if ok && !done[m.metric] && condTrue(detail, m.typ) {
				done[m.metric] = true
				c.add(m.metric, t0, at)
			}
		}
		if u, ok := c.updated[subject]; ok && condTrue(detail, "ClusterResourcePlacementAvailable") {
			c.add(RolloutDuration, u, at)
			delete(c.updated, subject)
		}
	case "binding-scheduled":
		c.write(at, "ClusterResourceBinding", subject)
		cluster := ""
		if _, rest, ok := strings.Cut(detail, " on "); ok {
			cluster, _, _ = strings.Cut(rest, " ")
		}
		pl := placementOf(subject, cluster)
		c.bindings[subject] = bindingInfo{placement: pl, cluster: cluster}
		if t0, ok := c.created[pl]; ok && !c.placeDone[pl]["s/"+cluster] {
			c.placeDone[pl]["s/"+cluster] = true
			c.add(ClusterScheduled, t0, at)
		}
		for m, lm := range c.moving {
			if m != cluster && lm.bindings[pl] {
				delete(lm.bindings, pl)
				if len(lm.bindings) == 0 {
					c.add(MemberMoved, lm.at, at)
					delete(c.moving, m)
				}
			}
		}
	case "binding-condition":
		c.write(at, "ClusterResourceBinding/status", subject)
		b, ok := c.bindings[subject]
		if !ok {
			return
		}
		if strings.HasPrefix(detail, "Available=") {
			c.available[subject] = condTrue(detail, "Available")
		}
		t0, ok := c.created[b.placement]
		if !ok {
			return
		}
		done := c.placeDone[b.placement]
		for _, m := range []struct{ typ, metric string }{{"Applied", ClusterApplied}, {"Available", ClusterAvailable}} {
			if k := m.metric + "/" + b.cluster; !done[k] && condTrue(detail, m.typ) {
				done[k] = true
				c.add(m.metric, t0, at)
			}
		}
	case "binding-rolled", "binding-repicked", "binding-unscheduled", "binding-waiting":
		c.write(at, "ClusterResourceBinding", subject)
	case "binding-deleted":
		c.write(at, "ClusterResourceBinding", subject)
		delete(c.available, subject)
		delete(c.bindings, subject)
	case "work-synchronized":
		c.write(at, "Work", subject)
	case "work-status":
		c.write(at, "Work/status", subject)
	case "policy-snapshot-created", "policy-snapshot-scaled":
		c.write(at, "ClusterSchedulingPolicySnapshot", subject)
	case "resource-snapshot-created":
		c.write(at, "ClusterResourceSnapshot", subject)
		// A placement's second and later snapshots start a rollout of new resources.
		if c.snapshots[subject]++; c.snapshots[subject] > 1 {
			c.updated[subject] = at
		}
	case "namespace-created", "namespace-deleted":
		c.write(at, "Namespace", subject)
	case "imc-created", "imc-leave":
		c.write(at, "InternalMemberCluster", subject)
	case "member-condition":
		c.write(at, "MemberCluster/status", subject)
		if t, ok := c.failed[subject]; ok && (strings.HasPrefix(detail, "Healthy=False") || strings.HasPrefix(detail, "Healthy=Unknown") ||
			strings.HasPrefix(detail, "Joined=False") || strings.HasPrefix(detail, "Joined=Unknown")) {
			c.add(MemberDetect, t, at)
			delete(c.failed, subject)
		}
	case "member-failed":
		c.failed[subject] = at
		c.lost[subject] = at
		lm := lostMember{at: at, bindings: map[string]bool{}}
		for _, b := range c.bindings {
			if b.cluster == subject {
				lm.bindings[b.placement] = true
			}
		}
		if len(lm.bindings) > 0 {
			c.moving[subject] = lm
		}
	case "member-healed":
		delete(c.failed, subject)
		delete(c.lost, subject)
		delete(c.moving, subject)
	case "unit-unscheduled":
		// A fleet unit leaving a lost machine: "from <machine>: reason".
		m, _, _ := strings.Cut(strings.TrimPrefix(detail, "from "), ":")
		if lm, ok := c.moving[m]; ok {
			lm.bindings["unit/"+subject] = true
		} else if t, ok := c.failed[m]; ok {
			c.moving[m] = lostMember{at: t, bindings: map[string]bool{"unit/" + subject: true}}
		} else if t, ok := c.lost[m]; ok {
			c.moving[m] = lostMember{at: t, bindings: map[string]bool{"unit/" + subject: true}}
		}
	case "unit-scheduled":
		for m, lm := range c.moving {
			if lm.bindings["unit/"+subject] {
				delete(lm.bindings, "unit/"+subject)
				if len(lm.bindings) == 0 {
					c.add(MemberMoved, lm.at, at)
					delete(c.moving, m)
				}
			}
		}
	case "staged-run-created":
		c.runs[subject] = at
		c.write(at, "ClusterStagedUpdateRun", subject)
	case "staged-run-condition":
		c.write(at, "ClusterStagedUpdateRun/status", subject)
		if t, ok := c.runs[subject]; ok && condTrue(detail, "Succeeded") {
			c.add(StagedRunDuration, t, at)
			delete(c.runs, subject)
		}
	case "approval-requested":
		c.write(at, "ClusterApprovalRequest", subject)
	case "hub-started":
		c.resync = &resyncState{start: at, pending: map[string]bool{}}
		for _, p := range c.s.Placements() {
			c.resync.pending[p.Name] = true
		}
		if len(c.resync.pending) == 0 {
			c.resync = nil
		}
	}
}

// placementOf recovers a binding's placement from its name, <placement>-<cluster>-<hash>.
func placementOf(binding, cluster string) string {
	i := strings.LastIndex(binding, "-")
	if i < 0 {
		return binding
	}
	return strings.TrimSuffix(binding[:i], "-"+cluster)
}

// decision tracks the hub's resync after a restart: done when every placement has had a
// rollout decision (the last controller of a placement's chain that every placement runs).
func (c *collector) decision(controller, key string) {
	r := c.resync
	if r == nil || controller != "rollout" {
		return
	}
	if r.pending[key] {
		delete(r.pending, key)
		if len(r.pending) == 0 {
			c.add(HubResync, r.start, c.s.Elapsed())
			c.resync = nil
		}
	}
}

func (c *collector) totalWrites() uint64 {
	var n uint64
	for _, v := range c.writes {
		n += v
	}
	return n + c.s.Counters().Heartbeats
}

func (c *collector) totalDecisions() uint64 {
	var n uint64
	for _, v := range c.s.Counters().Decisions {
		n += v
	}
	return n
}

// takeSample records one point of the time series.
func (c *collector) takeSample() {
	now := c.s.Elapsed()
	smp := Sample{T: now.Seconds()}
	for _, m := range c.s.Members() {
		j, _ := sim.ConditionOf(m.Conditions, "Joined")
		h, _ := sim.ConditionOf(m.Conditions, "Healthy")
		if j.Status != "True" || h.Status != "True" {
			smp.UnavailableMembers++
		}
	}
	for _, ok := range c.available {
		if ok {
			smp.AvailableClusters++
		}
	}
	dec, wr := c.totalDecisions(), c.totalWrites()
	if dt := (now - c.prevAt).Seconds(); dt > 0 {
		smp.DecisionsPerSecond = float64(dec-c.prevDec) / dt
		smp.WritesPerSecond = float64(wr-c.prevWr) / dt
	}
	c.prevDec, c.prevWr, c.prevAt = dec, wr, now
	c.series = append(c.series, smp)
	for k, v := range c.s.ObjectCounts() {
		c.peak[k] = max(c.peak[k], v)
	}
}

func (c *collector) result(until time.Duration, calls int) RunResult {
	r := RunResult{Metrics: map[string]Sketch{}, DecisionsPerSecond: map[string]float64{}, Writes: maps.Clone(c.writes),
		PeakObjects: c.peak, Series: c.series}
	for k, v := range c.samples {
		r.Metrics[k] = sketch(v)
	}
	secs := until.Seconds()
	cnt := c.s.Counters()
	var total uint64
	for k, v := range cnt.Decisions {
		total += v
		if secs > 0 {
			r.DecisionsPerSecond[k] = float64(v) / secs
		}
	}
	r.Writes["InternalMemberCluster/status (heartbeats)"] = cnt.Heartbeats
	if secs > 0 {
		r.DecisionsPerSecond["total"] = float64(total) / secs
		r.WritesPerSecond = float64(c.totalWrites()) / secs
		r.RequestsPerSecond = float64(total) * float64(calls) / secs
	}
	for _, s := range c.series {
		r.PeakWritesPerSecond = max(r.PeakWritesPerSecond, s.WritesPerSecond)
	}
	return r
}
