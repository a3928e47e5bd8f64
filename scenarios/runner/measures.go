package runner

// Measures: what a run measures over its whole length, whether or not an expectation asks
// (rollout durations, peaks of unavailable clusters, how long member groups are
// unhealthy), and the expectations on them (rollout, peakUnavailable, unhealthy), checked
// at the end. They only read the simulation: a run with or without them has the same trace.
//
// The state is sampled once per instant of simulated time in which something other than
// a heartbeat happened, after every event of that instant (a barrier), so a count that
// rises and falls within one instant is not a peak.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
)

// Measures are the run's measures, in the report whether or not an expectation asks.
// Times are seconds of simulated time.
type Measures struct {
	Rollouts []RolloutMeasure `json:"rollouts"`
	Peaks    []PeakMeasure    `json:"peaks"`
	Groups   []GroupMeasure   `json:"groups"`
}

// RolloutMeasure is one resource snapshot's rollout: from when the placement took the
// snapshot to when it was Available at it (or a later one); Completed and Duration are
// absent when it was not by the end.
type RolloutMeasure struct {
	Placement string   `json:"placement"`
	Snapshot  string   `json:"snapshot"`
	Started   float64  `json:"started"`
	Completed *float64 `json:"completed,omitempty"`
	Duration  *float64 `json:"duration,omitempty"`
}

// PeakMeasure is the most clusters unavailable at once in a scope (a placement, a member
// group, the fleet): a cluster is unavailable when a placement's resources are on it, it
// has been available there before, and it is not now. Of is how many clusters the scope
// held then; At is when the peak was first reached and For how long it lasted then.
type PeakMeasure struct {
	Scope   string  `json:"scope"`
	Peak    int     `json:"peak"`
	Of      int     `json:"of"`
	Percent float64 `json:"percent"`
	At      float64 `json:"at"`
	For     float64 `json:"for"`
}

// GroupMeasure is how long at least one member of a group was unhealthy in the hub's view
// (its Joined or Healthy condition not True, once it had joined), in seconds, and the most
// members unhealthy at once.
type GroupMeasure struct {
	Group          string   `json:"group"`
	Members        int      `json:"members"`
	Unhealthy      float64  `json:"unhealthy"`
	FirstUnhealthy *float64 `json:"firstUnhealthy,omitempty"`
	PeakUnhealthy  int      `json:"peakUnhealthy"`
}

// point is one sample of a count in a scope: n unavailable of clusters, from at.
type point struct {
	at    time.Duration
	n, of int
}

type series []point

func (s *series) add(at time.Duration, n, of int) {
	if l := len(*s); l > 0 && (*s)[l-1].n == n && (*s)[l-1].of == of {
		return
	}
	if l := len(*s); l > 0 && (*s)[l-1].at == at {
		(*s)[l-1] = point{at, n, of}
		return
	}
	*s = append(*s, point{at, n, of})
}

// peak returns the highest sample in [from, until] (the sample in effect at from counts),
// with how long it lasted; ok is false when the series is empty there.
func (s series) peak(from, until time.Duration, frac bool) (best point, lasted time.Duration, ok bool) {
	for i, p := range s {
		if p.at > until {
			break
		}
		end := until
		if i+1 < len(s) {
			end = s[i+1].at
			if end <= from {
				continue // over before the window opens
			}
		}
		better := !ok || p.n > best.n
		if frac && ok {
			better = p.n*max(best.of, 1) > best.n*max(p.of, 1)
		}
		if better {
			best, ok = p, true
			lasted = min(end, until) - max(p.at, from)
		}
	}
	if ok && best.at < from {
		best.at = from
	}
	return best, lasted, ok
}

// snapshotAt is when a placement took a resource snapshot; doneAt when it was first
// Available at it or at a later one.
type snapshotAt struct {
	index  int
	name   string
	at     time.Duration
	doneAt time.Duration
	done   bool
}

type placementTrack struct {
	name      string
	everReady map[string]bool
	unready   []string // clusters unavailable at the last sample
	series    series
	snapshots []snapshotAt
	// complete says whether the rollout of the latest snapshot was complete at the last
	// sample; changes records each change of it.
	complete bool
	changes  []completeChange
}

type completeChange struct {
	at       time.Duration
	complete bool
}

type memberHealth struct {
	joined, healthy string
	everJoined      bool
}

func (h memberHealth) unhealthy() bool {
	return h.everJoined && (h.joined != "True" || h.healthy != "True")
}

// group is a member group the measures follow: a `members` entry (names) or a group an
// expectation names (sel).
type group struct {
	label     string
	names     map[string]bool
	sel       *scenarios.MemberSelector
	series    series
	unhealthy map[string]bool
	since     time.Duration
	total     time.Duration
	first     *time.Duration
	peak      int
}

func (g *group) contains(s *sim.Sim, name string) bool {
	if g.names != nil {
		return g.names[name]
	}
	labels, ok := s.MemberLabels(name)
	return ok && g.sel.Matches(name, labels)
}

type measurer struct {
	s          *sim.Sim
	dirty      bool
	sampleAt   time.Duration
	placements map[string]*placementTrack
	groups     []*group
	fleet      series
	health     map[string]*memberHealth
	// changed are the members whose Joined or Healthy condition changed in this instant.
	changed map[string]bool
}

// groupLabel names a `members` entry: its name, or its first and last names.
func groupLabel(g scenarios.MemberGroup) string {
	if len(g.Names) == 1 {
		return g.Names[0]
	}
	return g.Names[0] + ".." + g.Names[len(g.Names)-1]
}

// watchMeasures installs the observer and barriers that take the measures.
func (r *run) watchMeasures() {
	m := &measurer{s: r.s, sampleAt: -1, placements: map[string]*placementTrack{}, health: map[string]*memberHealth{}, changed: map[string]bool{}}
	seen := map[string]bool{}
	for _, g := range r.sc.Members {
		gr := &group{label: "members " + groupLabel(g), names: map[string]bool{}, unhealthy: map[string]bool{}}
		for _, n := range g.Names {
			gr.names[n] = true
		}
		m.groups, seen[gr.label] = append(m.groups, gr), true
	}
	for _, e := range r.sc.Expect {
		var sel *scenarios.MemberSelector
		switch {
		case e.Peak != nil && e.Peak.Group != nil:
			sel = e.Peak.Group
		case e.Unhealthy != nil:
			sel = e.Unhealthy.Group
		}
		if sel != nil && !seen[sel.String()] {
			m.groups, seen[sel.String()] = append(m.groups, &group{label: sel.String(), sel: sel, unhealthy: map[string]bool{}}), true
		}
	}
	r.measures = m
	r.s.Observe(func(at time.Duration, kind, subject, detail string) {
		switch kind {
		case "heartbeat", "heartbeat-lost":
			return
		case "placement-created":
			if m.placements[subject] == nil {
				m.placements[subject] = &placementTrack{name: subject, everReady: map[string]bool{}}
			}
		case "member-condition":
			m.memberCondition(at, subject, detail)
		case "member-left":
			m.memberCondition(at, subject, "")
		}
		if !m.dirty || m.sampleAt != at {
			m.dirty, m.sampleAt = true, at
			r.s.Barrier(at, m.sample)
		}
	})
}

// memberCondition follows a member's Joined and Healthy conditions ("" when it left).
func (m *measurer) memberCondition(at time.Duration, name, detail string) {
	h := m.health[name]
	if h == nil {
		h = &memberHealth{}
		m.health[name] = h
	}
	typ, rest, _ := strings.Cut(detail, "=")
	status, _, _ := strings.Cut(rest, " ")
	switch {
	case detail == "":
		*h = memberHealth{}
	case typ == "Joined":
		h.joined = status
		h.everJoined = h.everJoined || status == "True"
	case typ == "Healthy":
		h.healthy = status
	default:
		return
	}
	m.changed[name] = true
}

// healthSample updates the groups' unhealthy members with the members whose conditions
// changed in this instant, once its events are done (a member joining reports Joined and
// then Healthy in one instant, which is no unhealthy spell).
func (m *measurer) healthSample(at time.Duration) {
	for _, name := range slices.Sorted(maps.Keys(m.changed)) {
		h := m.health[name]
		for _, g := range m.groups {
			was, is := g.unhealthy[name], h.unhealthy() && g.contains(m.s, name)
			if was == is {
				continue
			}
			if is {
				if len(g.unhealthy) == 0 {
					g.since = at
					if g.first == nil {
						g.first = &at
					}
				}
				g.unhealthy[name] = true
				g.peak = max(g.peak, len(g.unhealthy))
			} else {
				delete(g.unhealthy, name)
				if len(g.unhealthy) == 0 {
					g.total += at - g.since
				}
			}
		}
	}
	clear(m.changed)
}

// sample reads every placement's rollout view once the instant's events are done.
func (m *measurer) sample() {
	m.dirty = false
	now := m.s.Elapsed()
	m.healthSample(now)
	unready := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(m.placements)) {
		pt := m.placements[name]
		v, ok := m.s.Rollout(name)
		if !ok {
			pt.unready = nil
			pt.series.add(now, 0, 0)
			continue
		}
		for _, c := range v.Available {
			pt.everReady[c] = true
		}
		pt.unready = pt.unready[:0]
		for _, c := range v.Unavailable {
			if pt.everReady[c] {
				pt.unready = append(pt.unready, c)
				unready[c] = true
			}
		}
		pt.series.add(now, len(pt.unready), len(v.Available)+len(v.Unavailable))
		if l := len(pt.snapshots); v.LatestIndex >= 0 && (l == 0 || pt.snapshots[l-1].index < v.LatestIndex) {
			pt.snapshots = append(pt.snapshots, snapshotAt{index: v.LatestIndex, name: v.LatestSnapshot, at: now})
		}
		if v.Complete {
			for i := range pt.snapshots {
				if sn := &pt.snapshots[i]; !sn.done && sn.index <= v.LatestIndex {
					sn.done, sn.doneAt = true, now
				}
			}
		}
		if v.Complete != pt.complete || len(pt.changes) == 0 {
			pt.complete = v.Complete
			pt.changes = append(pt.changes, completeChange{at: now, complete: v.Complete})
		}
	}
	m.fleet.add(now, len(unready), len(m.s.MemberNames()))
	for _, g := range m.groups {
		n, of := 0, 0
		if g.names != nil {
			of = len(g.names)
			for c := range unready {
				if g.names[c] {
					n++
				}
			}
		} else {
			for _, name := range m.s.SelectMembers(g.sel.Matches) {
				of++
				if unready[name] {
					n++
				}
			}
		}
		g.series.add(now, n, of)
	}
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// ms rounds a measured time to the millisecond for the expectation's detail (the measures
// keep it whole).
func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// result closes the measures at until and returns them for the report.
func (m *measurer) result(until time.Duration) Measures {
	out := Measures{Rollouts: []RolloutMeasure{}, Peaks: []PeakMeasure{}, Groups: []GroupMeasure{}}
	names := slices.Sorted(maps.Keys(m.placements))
	for _, name := range names {
		pt := m.placements[name]
		for _, sn := range pt.snapshots {
			rm := RolloutMeasure{Placement: name, Snapshot: sn.name, Started: seconds(sn.at)}
			if sn.done {
				c, d := seconds(sn.doneAt), seconds(sn.doneAt-sn.at)
				rm.Completed, rm.Duration = &c, &d
			}
			out.Rollouts = append(out.Rollouts, rm)
		}
	}
	add := func(scope string, s series) {
		best, lasted, ok := s.peak(0, until, false)
		if !ok {
			return
		}
		out.Peaks = append(out.Peaks, peakMeasure(scope, best, lasted))
	}
	for _, name := range names {
		add("placement "+name, m.placements[name].series)
	}
	for _, g := range m.groups {
		add(g.label, g.series)
		gm := GroupMeasure{Group: g.label, PeakUnhealthy: g.peak, Unhealthy: seconds(g.unhealthyFor(until))}
		if g.names != nil {
			gm.Members = len(g.names)
		} else if l := len(g.series); l > 0 {
			gm.Members = g.series[l-1].of
		}
		if g.first != nil {
			f := seconds(*g.first)
			gm.FirstUnhealthy = &f
		}
		out.Groups = append(out.Groups, gm)
	}
	add("fleet", m.fleet)
	return out
}

func peakMeasure(scope string, best point, lasted time.Duration) PeakMeasure {
	pm := PeakMeasure{Scope: scope, Peak: best.n, Of: best.of, At: seconds(best.at), For: seconds(lasted)}
	if best.of > 0 {
		pm.Percent = float64(best.n) * 100 / float64(best.of)
	}
	return pm
}

// unhealthyFor is the group's unhealthy time, counting a spell still open at until.
func (g *group) unhealthyFor(until time.Duration) time.Duration {
	if len(g.unhealthy) > 0 {
		return g.total + until - g.since
	}
	return g.total
}

// rolloutDone is when the rollout from `from` completed: that of the first snapshot the
// placement took at or after from, or, when it took none, of its snapshot then.
func (pt *placementTrack) rolloutDone(from time.Duration) (done time.Duration, snapshot string, ok bool, why string) {
	for _, sn := range pt.snapshots {
		if sn.at >= from {
			if !sn.done {
				return 0, sn.name, false, fmt.Sprintf("the rollout of %s (taken at %s) had not completed by the end", sn.name, sn.at)
			}
			return sn.doneAt, sn.name, true, ""
		}
	}
	if len(pt.snapshots) == 0 {
		return 0, "", false, "the placement took no resource snapshot"
	}
	last := pt.snapshots[len(pt.snapshots)-1]
	// Complete at from already (the last change at or before it says so), or the first
	// time after it.
	complete := false
	for _, c := range pt.changes {
		switch {
		case c.at <= from:
			complete = c.complete
		case complete:
			return from, last.name, true, ""
		case c.complete:
			return c.at, last.name, true, ""
		}
	}
	if complete {
		return from, last.name, true, ""
	}
	return 0, last.name, false, fmt.Sprintf("the placement was not Available at %s by the end", last.name)
}

// checkMeasured checks a rollout, peakUnavailable or unhealthy expectation at the end.
func (r *run) checkMeasured(e *scenarios.Expectation, until time.Duration) ExpectationResult {
	m := r.measures
	res := ExpectationResult{Line: e.Line, At: Seconds(until), Measured: true}
	switch {
	case e.Rollout != nil:
		ro := e.Rollout
		from := ro.From.String()
		if ro.FromStep != "" {
			from = fmt.Sprintf("step %s (%s)", ro.FromStep, ro.From)
		}
		if ro.HasBy {
			res.Description = fmt.Sprintf("rollout of placement %s from %s completes by %s", ro.Placement, from, ro.By)
		} else {
			res.Description = fmt.Sprintf("rollout of placement %s from %s completes within %s", ro.Placement, from, ro.Within)
		}
		pt := m.placements[ro.Placement]
		if pt == nil {
			res.Detail = fmt.Sprintf("placement %s was never created", ro.Placement)
			return res
		}
		done, snap, ok, why := pt.rolloutDone(ro.From)
		if !ok {
			res.Detail = why
			return res
		}
		took := done - ro.From
		res.Detail = fmt.Sprintf("%s completed at %s, %s after %s", snap, ms(done), ms(took), ro.From)
		if ro.HasBy {
			res.Passed = done <= ro.By
		} else {
			res.Passed = took <= ro.Within
		}
	case e.Peak != nil:
		pe := e.Peak
		scope, s := "the fleet", m.fleet
		switch {
		case pe.Placement != "":
			scope = "placement " + pe.Placement
			if pt := m.placements[pe.Placement]; pt != nil {
				s = pt.series
			} else {
				s = nil
			}
		case pe.Group != nil:
			scope = pe.Group.String()
			for _, g := range m.groups {
				if g.label == pe.Group.String() {
					s = g.series
				}
			}
		}
		limit := fmt.Sprint(pe.AtMost)
		if pe.IsPercent {
			limit = fmt.Sprintf("%g%%", pe.Percent)
		}
		res.Description = fmt.Sprintf("at most %s cluster(s) of %s unavailable at once from %s to %s", limit, scope, pe.From, pe.Until)
		best, lasted, ok := s.peak(pe.From, min(pe.Until, until), pe.IsPercent)
		if !ok {
			res.Passed, res.Detail = true, "nothing was measured in that window (no placement had resources there)"
			return res
		}
		pm := peakMeasure(scope, best, lasted)
		res.Detail = fmt.Sprintf("peak %d of %d (%.1f%%) at %s, for %s", pm.Peak, pm.Of, pm.Percent, ms(best.at), ms(lasted))
		if pe.IsPercent {
			res.Passed = float64(best.n)*100 <= pe.Percent*float64(best.of)
		} else {
			res.Passed = best.n <= pe.AtMost
		}
	case e.Unhealthy != nil:
		ue := e.Unhealthy
		res.Description = fmt.Sprintf("%s unhealthy for at most %s in all", ue.Group, ue.AtMost)
		for _, g := range m.groups {
			if g.label != ue.Group.String() {
				continue
			}
			d := g.unhealthyFor(until)
			res.Detail = fmt.Sprintf("unhealthy for %s (at most %d member(s) at once)", ms(d), g.peak)
			if g.first != nil {
				res.Detail += fmt.Sprintf(", first at %s", ms(*g.first))
			}
			res.Passed = d <= ue.AtMost
		}
	}
	return res
}
