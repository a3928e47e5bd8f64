package units

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// Sentinels for job.cur.
const (
	unscheduled int32 = -1 // no machine
	goneMachine int32 = -2 // scheduled to a machine ID not in Input.Machines
)

// job is one unit during a decision.
type job struct {
	u    *Unit
	name string
	x    *unitfile.XFleet // resolved options; nil if invalid
	// invalid says why the unit cannot run at all (bad name, options, template); "" if fine.
	invalid string
	active  bool // desired state loaded or launched
	global  bool
	initial string // Job.Machine as given
	home    int32  // initial as a machine index, unscheduled or goneMachine
	cur     int32  // machine index, unscheduled or goneMachine
	// peers are the MachineOf peers' job indices (-1 for a unit that does not exist).
	peers []int32
	// replaces and replacedBy are the Replaces edges left after cycles are removed.
	replaces, replacedBy []int32
	// globs are the unit's own Conflicts globs, as indices into decision.globMatches.
	globs []int32
	// targeted is true if some unit's Conflicts glob matches this unit's name.
	targeted    bool
	leaveReason string
	placeReason string
}

// wants reports whether the engine must find j a machine: active, valid and not global.
func (j *job) wants() bool { return j.active && j.invalid == "" && !j.global }

// runsGlobal reports whether j is a global unit that agents run.
func (j *job) runsGlobal() bool { return j.active && j.invalid == "" && j.global }

// machine is one machine during a decision.
type machine struct {
	MachineState
	// units are the non-global units assigned here, ascending (name order).
	units []int32
	// globals are the global units running here, in name order.
	globals []int32
	// load is the least-loaded score's input: len(units) + len(globals).
	load int
}

// decision is the state of one Schedule call (or one GlobalTargets call).
type decision struct {
	jobs     []job
	byName   map[string]int32
	machines []machine
	byID     map[string]int32
	globals  []int32 // jobs that run as global units, name order
	alive    int
	// order holds the alive machines sorted by (load, ID): the least-loaded candidates first.
	order []int32
	// globMatches holds, per distinct Conflicts glob (see job.globs), the units it matches.
	globMatches [][]int32
	// settled is true once a decision's rounds ended because one changed nothing (not at
	// the safety bound): then no alive machine fits a unit left unplaced.
	settled bool
	// inc is the incremental state an [Engine] keeps between decisions; nil for Schedule.
	inc *incState
}

// newDecision sorts and indexes the input. Units are ordered by name and machines by ID, so
// nothing downstream depends on the order of the input (or on map iteration).
func newDecision(machines []MachineState, jobs []Job) *decision {
	d := &decision{}

	ms := slices.Clone(machines)
	slices.SortStableFunc(ms, func(a, b MachineState) int {
		// Among duplicate IDs, prefer an alive entry, then the smaller metadata.
		// cmp.Or evaluates every argument: render metadata only for duplicate IDs.
		if c := cmp.Or(cmp.Compare(a.ID, b.ID), boolOrder(b.Alive, a.Alive)); c != 0 {
			return c
		}
		return cmp.Compare(metadataKey(a.Metadata), metadataKey(b.Metadata))
	})
	d.byID = make(map[string]int32, len(ms))
	d.machines = make([]machine, 0, len(ms))
	for _, m := range ms {
		if _, dup := d.byID[m.ID]; dup {
			continue
		}
		d.byID[m.ID] = int32(len(d.machines))
		d.machines = append(d.machines, machine{MachineState: m})
		if m.Alive {
			d.alive++
		}
	}

	js := make([]Job, 0, len(jobs))
	for _, j := range jobs {
		if j.Unit != nil {
			js = append(js, j)
		}
	}
	slices.SortStableFunc(js, func(a, b Job) int {
		if c := cmp.Compare(a.Unit.Name, b.Unit.Name); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Machine, b.Machine),
			slices.Compare(a.Unit.Hash[:], b.Unit.Hash[:]), cmp.Compare(a.Unit.DesiredState, b.Unit.DesiredState))
	})
	d.byName = make(map[string]int32, len(js))
	d.jobs = make([]job, 0, len(js))
	for _, in := range js {
		if _, dup := d.byName[in.Unit.Name]; dup {
			continue // each unit once: later duplicates are ignored
		}
		i := int32(len(d.jobs))
		d.byName[in.Unit.Name] = i
		d.jobs = append(d.jobs, resolve(in))
	}

	for i := range d.jobs {
		j := &d.jobs[i]
		if j.x != nil {
			for _, p := range j.x.MachineOf {
				idx, ok := d.byName[p]
				if !ok {
					idx = -1
				}
				j.peers = append(j.peers, idx)
			}
		}
		if j.runsGlobal() {
			d.globals = append(d.globals, int32(i))
		}
		j.home = d.machineIndex(j.initial)
		j.cur = j.home
		if m := j.cur; m >= 0 {
			d.machines[m].units = append(d.machines[m].units, int32(i)) // ascending: i grows
		}
	}
	d.replaceEdges()
	d.indexConflicts()
	for m := range int32(len(d.machines)) {
		d.refresh(m) // d.order is still nil: only globals and load
	}
	d.order = make([]int32, 0, d.alive)
	for m := range int32(len(d.machines)) {
		if d.machines[m].Alive {
			d.order = append(d.order, m)
		}
	}
	slices.SortFunc(d.order, d.compareLoad)
	return d
}

// resolve checks one unit: its name, its options (parsed from the file unless given for
// this name) and the template rule.
func resolve(in Job) job {
	u := in.Unit
	j := job{u: u, name: u.Name, initial: in.Machine, active: u.DesiredState.Active()}
	if err := unitfile.ValidateName(u.Name); err != nil {
		j.invalid = err.Error()
		return j
	}
	x := u.Options
	var err error
	if x == nil || x.Name != u.Name {
		x, err = unitfile.ParseXFleet(u.File, u.Name)
	} else {
		err = x.Validate()
	}
	if err != nil {
		j.invalid = "invalid unit options: " + err.Error()
		return j
	}
	j.x, j.global = x, x.Global
	if u.IsTemplate() {
		j.invalid = "cannot activate template " + u.Name + ": instantiate it"
	}
	return j
}

func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// metadataKey renders metadata in a canonical form, sorted by key.
func metadataKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte(',')
	}
	return b.String()
}

// replaceEdges computes the Replaces relation among valid non-global units, then drops every
// Replaces edge that lies on a cycle, of any length, of Replaces edges and MachineOf edges
// (from a leader to its follower). A cycle of Replaces alone is a circular replacement,
// which the documentation forbids ("a circular replacement between multiple units is not allowed";
// upstream only ignored pairs that replace each other). A cycle through MachineOf means a
// unit would displace a unit it follows, directly or through other followers, and so
// evict itself; honouring it would never settle.
func (d *decision) replaceEdges() {
	var replacers []int32
	for i := range d.jobs {
		if j := &d.jobs[i]; j.x != nil && !j.global && len(j.x.Replaces) > 0 {
			replacers = append(replacers, int32(i))
		}
	}
	if len(replacers) == 0 {
		return
	}
	adj := make(map[int32][]int32)
	isReplace := make(map[[2]int32]bool)
	for _, a := range replacers {
		ja := &d.jobs[a]
		for b := range d.jobs {
			jb := &d.jobs[b]
			if int32(b) != a && jb.x != nil && !jb.global && ja.x.ReplacesName(jb.name) {
				adj[a] = append(adj[a], int32(b))
				isReplace[[2]int32{a, int32(b)}] = true
			}
		}
	}
	for f := range d.jobs {
		for _, p := range d.jobs[f].peers {
			if p >= 0 && !d.jobs[p].global && !isReplace[[2]int32{p, int32(f)}] {
				adj[p] = append(adj[p], int32(f))
			}
		}
	}
	comp := stronglyConnected(len(d.jobs), adj)
	for _, a := range replacers {
		for _, b := range adj[a] {
			if !isReplace[[2]int32{a, b}] || comp[a] == comp[b] {
				continue // a MachineOf edge, or on a cycle: ignored
			}
			d.jobs[a].replaces = append(d.jobs[a].replaces, b)
			d.jobs[b].replacedBy = append(d.jobs[b].replacedBy, a)
		}
	}
}

// stronglyConnected labels the strongly connected components of the graph on n nodes
// (Tarjan's algorithm); nodes in the same component share a label.
func stronglyConnected(n int, adj map[int32][]int32) []int32 {
	index := make([]int32, n)
	low := make([]int32, n)
	comp := make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	var stack []int32
	var next, label int32
	var visit func(v int32)
	visit = func(v int32) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range adj[v] {
			switch {
			case index[w] < 0:
				visit(w)
				low[v] = min(low[v], low[w])
			case onStack[w]:
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = label
				if w == v {
					break
				}
			}
			label++
		}
	}
	for v := range int32(n) {
		if index[v] < 0 {
			visit(v)
		}
	}
	return comp
}

// machineIndex returns the index of machine id, unscheduled for "" or goneMachine for an
// unknown machine.
func (d *decision) machineIndex(id string) int32 {
	if id == "" {
		return unscheduled
	}
	if m, ok := d.byID[id]; ok {
		return m
	}
	return goneMachine
}

// machineID names machine index m as the plan does; for goneMachine and unscheduled it uses
// the unit's initial machine or "".
func (d *decision) machineID(j *job) string {
	switch j.cur {
	case unscheduled:
		return ""
	case goneMachine:
		return j.initial
	}
	return d.machines[j.cur].ID
}

// present reports whether unit p runs on machine m: scheduled there, or a global unit
// running there.
func (d *decision) present(p, m int32) bool {
	if p < 0 {
		return false
	}
	jp := &d.jobs[p]
	if jp.global {
		return jp.runsGlobal() && slices.Contains(d.machines[m].globals, p)
	}
	return jp.wants() && jp.cur == m
}

func (d *decision) assign(i, m int32, reason string) {
	j := &d.jobs[i]
	j.cur = m
	j.placeReason = reason
	mm := &d.machines[m]
	pos, _ := slices.BinarySearch(mm.units, i)
	mm.units = slices.Insert(mm.units, pos, i)
	d.refresh(m)
	if d.inc != nil {
		d.touch(m)
	}
}

func (d *decision) unassign(i int32, reason string) {
	j := &d.jobs[i]
	if j.cur == j.home {
		j.leaveReason = reason
	}
	if m := j.cur; m >= 0 {
		mm := &d.machines[m]
		if pos, found := slices.BinarySearch(mm.units, i); found {
			mm.units = slices.Delete(mm.units, pos, pos+1)
		}
		j.cur = unscheduled
		d.refresh(m)
		if d.inc != nil {
			d.touch(m)
			d.inc.pos[i] = -1
		}
		return
	}
	j.cur = unscheduled
	if d.inc != nil {
		d.inc.pos[i] = -1
	}
}

// Schedule makes one engine decision (CoreOS fleet's engine, "Exact algorithm", with the
// upstream bugs fixed; see the package documentation). It is a pure function of in: the
// result does not depend on the order of in.Machines or in.Units.
//
// Each round has two passes over the units in name order, and rounds repeat until one
// changes nothing:
//
//  1. Every scheduled unit is checked where it is. It is unscheduled if its desired state is
//     inactive, it is invalid or global, its machine went away (unknown or not alive), or it
//     fails a filter there: MachineID, MachineMetadata, MachineOf (a peer left), Conflicts
//     (against units of smaller name still there, so of two conflicting units the one with
//     the greater name gives way) or Replaces (a unit there replaces it).
//  2. Every unit that wants a machine and has none goes to the least-loaded alive machine
//     that passes every filter, ties broken by the smaller machine ID. A unit that lands on
//     a machine running a unit it replaces displaces that unit, which is placed again like
//     any other: on the least-loaded other machine that satisfies its own constraints.
//
// Followers thus land with their leader and move with it in the same decision, and units of
// a lost machine are rescheduled at once.
func Schedule(in Input) Plan {
	d := newDecision(in.Machines, in.Units)
	// Every round but the last changes at least one assignment. The bound only guards
	// against a pathological mix of MachineOf and Replaces that never settles.
	maxRounds := 2*len(d.jobs) + 4
	for round := 0; round < maxRounds; round++ {
		changed := d.keepPass()
		if d.placePass() {
			changed = true
		}
		if !changed {
			d.settled = true
			break
		}
	}
	return d.plan(in.Lease.Fence())
}

// keepPass is pass 1.
func (d *decision) keepPass() bool {
	changed := false
	for i := range int32(len(d.jobs)) {
		if d.jobs[i].cur == unscheduled {
			continue
		}
		if reason := d.keepReason(i); reason != "" {
			d.unassign(i, reason)
			changed = true
		}
	}
	return changed
}

// keepReason says why scheduled unit i must leave its machine, or "" if it stays.
func (d *decision) keepReason(i int32) string {
	j := &d.jobs[i]
	switch {
	case j.u.DesiredState == StateInactive:
		return "target state inactive"
	case !j.active:
		return fmt.Sprintf("invalid desired state %q", string(j.u.DesiredState))
	case j.invalid != "":
		return j.invalid
	case j.global:
		return "global units are not scheduled by the engine: agents run them on every eligible machine"
	case j.cur == goneMachine:
		return fmt.Sprintf("machine %s went away: it is not registered", j.initial)
	}
	m := &d.machines[j.cur]
	if !m.Alive {
		return fmt.Sprintf("machine %s went away: its presence lapsed", m.ID)
	}
	if v := d.fit(i, j.cur, true); v.plugin != "" {
		reason := d.explain(i, j.cur, v)
		if v.plugin == PluginConflicts {
			reason += "; of two conflicting units the one with the greater name gives way"
		}
		return reason
	}
	return ""
}

// placePass is pass 2.
func (d *decision) placePass() bool {
	changed := false
	for i := range int32(len(d.jobs)) {
		j := &d.jobs[i]
		if j.cur != unscheduled || !j.wants() {
			continue
		}
		m, load := d.pick(i)
		if m < 0 {
			continue
		}
		changed = true
		d.place(i, m, load)
	}
	return changed
}

// place assigns unit i to machine m (whose load was load when it was picked), displacing
// the units there that i replaces.
func (d *decision) place(i, m int32, load int) {
	j := &d.jobs[i]
	reason := d.placeReason(i, m, load)
	var displaced []int32
	for _, v := range d.machines[m].units {
		if slices.Contains(j.replaces, v) {
			displaced = append(displaced, v)
		}
	}
	for _, v := range displaced {
		reason += fmt.Sprintf("; displaces %s (Replaces)", d.jobs[v].name)
	}
	d.assign(i, m, reason)
	for _, v := range displaced {
		d.unassign(v, fmt.Sprintf("machine %s now runs %s, which replaces it", d.machines[m].ID, j.name))
	}
}

// pick returns the least-loaded alive machine that passes every filter for unit i, with its
// load, or -1.
func (d *decision) pick(i int32) (best int32, load int) {
	j := &d.jobs[i]
	if len(j.peers) > 0 && (j.peers[0] < 0 || !d.jobs[j.peers[0]].global) {
		// A follower can only go where its (first) leader is.
		if p := j.peers[0]; p >= 0 && d.jobs[p].cur >= 0 {
			if m := d.jobs[p].cur; d.machines[m].Alive && d.fit(i, m, false).plugin == "" {
				return m, d.machines[m].load
			}
		}
		return -1, 0
	}
	// d.order is sorted by (load, ID): the first machine that fits is the answer.
	for _, m := range d.order {
		if d.fit(i, m, false).plugin == "" {
			return m, d.machines[m].load
		}
	}
	return -1, 0
}

func (d *decision) placeReason(i, m int32, load int) string {
	x := d.jobs[i].x
	base := fmt.Sprintf("least-loaded eligible machine (load %d)", load)
	switch {
	case x.MachineID != "":
		return "matches MachineID " + x.MachineID
	case len(x.MachineOf) > 0:
		return "next to MachineOf " + strings.Join(x.MachineOf, ", ") + "; " + base
	}
	return base
}

// plan turns the final assignment into writes: only units whose machine changed appear.
func (d *decision) plan(fence FencedWrite) Plan {
	p := Plan{Fence: fence}
	for i := range int32(len(d.jobs)) {
		j := &d.jobs[i]
		if j.cur != j.home {
			final := d.machineID(j)
			if j.initial != "" {
				p.Unschedule = append(p.Unschedule, Action{Unit: j.name, Machine: j.initial, Reason: j.leaveReason})
			}
			if final != "" {
				p.Schedule = append(p.Schedule, Action{Unit: j.name, Machine: final, Reason: j.placeReason})
			}
		}
		if j.active && (j.invalid != "" || (!j.global && j.cur == unscheduled)) {
			p.Unschedulable = append(p.Unschedulable, Unplaced{Unit: j.name, Reason: d.unplacedReason(i)})
		}
	}
	return p
}
