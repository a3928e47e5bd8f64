package units

import (
	"maps"
	"slices"
)

// Engine is the scheduling decision kept between decisions, so that a change reschedules
// only what it affects: [Engine.Schedule] returns exactly the plan [Schedule] would return
// for [Engine.Input], but after a machine loss it looks at the lost machine's units and at
// the machines that then change, not at the whole fleet.
//
// The caller reports every change of the registry: machines ([Engine.SetMachine],
// [Engine.RemoveMachine]), units ([Engine.SetUnit], [Engine.RemoveUnit]) and the machine
// each unit is scheduled to ([Engine.SetTarget], or [Engine.Apply] for a plan's writes).
// A machine's liveness or metadata and a unit's machine change in place; adding or removing
// a machine or a unit, or changing a unit's file or desired state, re-indexes the engine
// (sorting names and matching Conflicts globs, O(units + machines)) and still reschedules
// only what the change affects.
//
// How it stays equal to a from-scratch decision: [Schedule] repeats rounds of a keep pass
// and a place pass over every unit, in name order. A unit's keep verdict can only change
// when the unit itself or its machine changes (its liveness, metadata, the units scheduled
// or global units running there), and a unit without a machine can only find one among the
// machines that changed since it last found none. So the engine marks the units of every
// machine that changes ("touched") for the keep pass, logs the touched machines, and tries
// an unplaced unit only on the machines logged since it was last tried. Passes still go in
// name order, so every write happens in the same order and with the same reason as in
// [Schedule]; units the full decision would visit without effect are skipped. A property
// test applies random changes and compares with [Schedule] after each.
//
// An Engine is not safe for concurrent use.
type Engine struct {
	machines map[string]MachineState
	units    map[string]Job
	// ids and names are the keys of machines and units, sorted.
	ids, names []string
	d          *decision
	// reindex: a change needs the decision rebuilt before the next Schedule; touchIDs and
	// dirty record what that change affected (machine IDs, unit names).
	reindex  bool
	touchIDs map[string]bool
	dirty    map[string]bool
	// moved are units whose current machine in d may differ from their registry machine:
	// changed by the last Schedule, or given a new machine by SetTarget.
	moved []int32
}

// incState is what an Engine's decision keeps for incremental passes.
type incState struct {
	// keep marks the units the next keep pass must check (their machine changed).
	keep []bool
	// log lists the machines touched (their units, globals, liveness or metadata changed)
	// since the log was last cleared, possibly repeated.
	log []int32
	// pos is, per unit, how much of log the unit has been tried on: it is known not to fit
	// any machine touched before log[pos] and any machine not in log. -1: try it everywhere.
	pos []int32
}

// NewEngine returns an engine holding in's machines and units (duplicates are collapsed as
// [Schedule] does) with nothing decided yet: its first Schedule is a whole decision.
func NewEngine(in Input) *Engine {
	e := &Engine{machines: map[string]MachineState{}, units: map[string]Job{}, touchIDs: map[string]bool{}, dirty: map[string]bool{}}
	d := newDecision(in.Machines, in.Units)
	for _, m := range d.machines {
		e.machines[m.ID] = m.MachineState
		e.ids = append(e.ids, m.ID)
	}
	for i := range d.jobs {
		e.units[d.jobs[i].name] = Job{Unit: d.jobs[i].u, Machine: d.jobs[i].initial}
		e.names = append(e.names, d.jobs[i].name)
	}
	d.startIncremental(true)
	e.d = d
	return e
}

// Input returns what the engine holds, as the input of an equivalent [Schedule] call:
// machines sorted by ID, units by name. The lease is left zero.
func (e *Engine) Input() Input {
	var in Input
	in.Machines = make([]MachineState, len(e.ids))
	for k, id := range e.ids {
		in.Machines[k] = e.machines[id]
	}
	in.Units = make([]Job, len(e.names))
	for k, n := range e.names {
		in.Units[k] = e.units[n]
	}
	return in
}

// Sync makes the engine hold exactly in's machines and units, reporting each difference
// from what it holds as the change it is (so the next Schedule reschedules only what they
// affect); in.Lease is ignored. It costs a map lookup per machine and unit. Input with a
// machine ID or unit name given twice is collapsed as [Schedule] does, by starting over.
func (e *Engine) Sync(in Input) {
	ids := make(map[string]bool, len(in.Machines))
	for _, m := range in.Machines {
		if ids[m.ID] {
			*e = *NewEngine(in)
			return
		}
		ids[m.ID] = true
	}
	names := make(map[string]bool, len(in.Units))
	for _, j := range in.Units {
		if j.Unit == nil {
			continue
		}
		if names[j.Unit.Name] {
			*e = *NewEngine(in)
			return
		}
		names[j.Unit.Name] = true
	}
	for _, id := range slices.Clone(e.ids) {
		if !ids[id] {
			e.RemoveMachine(id)
		}
	}
	for _, n := range slices.Clone(e.names) {
		if !names[n] {
			e.RemoveUnit(n)
		}
	}
	for _, m := range in.Machines {
		if old, ok := e.machines[m.ID]; !ok || old.Alive != m.Alive || !maps.Equal(old.Metadata, m.Metadata) {
			e.SetMachine(m)
		}
	}
	for _, j := range in.Units {
		if j.Unit == nil {
			continue
		}
		if old, ok := e.units[j.Unit.Name]; !ok || old != j {
			e.SetUnit(j)
		}
	}
}

// SetMachine adds a machine or changes one (its liveness or metadata).
func (e *Engine) SetMachine(m MachineState) {
	if _, ok := e.machines[m.ID]; !ok {
		e.ids = insertSorted(e.ids, m.ID)
	}
	e.machines[m.ID] = m
	if e.reindex {
		e.touchIDs[m.ID] = true
		return
	}
	idx, ok := e.d.byID[m.ID]
	if !ok {
		e.reindex = true
		e.touchIDs[m.ID] = true
		return
	}
	e.d.setMachine(idx, m)
}

// RemoveMachine forgets a machine: its units' machine "went away" (it is not registered).
func (e *Engine) RemoveMachine(id string) {
	if _, ok := e.machines[id]; !ok {
		return
	}
	delete(e.machines, id)
	e.ids = deleteSorted(e.ids, id)
	e.reindex = true
	e.touchIDs[id] = true
}

// SetUnit adds a unit or replaces one (a new file or desired state), with the machine it
// is scheduled to ("" if none). A nil Unit is ignored.
func (e *Engine) SetUnit(j Job) {
	if j.Unit == nil {
		return
	}
	old, ok := e.units[j.Unit.Name]
	if ok && old.Unit == j.Unit {
		e.SetTarget(j.Unit.Name, j.Machine)
		return
	}
	if ok && !e.reindex && sameFile(old.Unit, j.Unit) {
		// Only the desired state changed: no name, option or relation changes.
		old.Unit = j.Unit
		e.units[j.Unit.Name] = old
		e.d.setUnitState(e.d.byName[j.Unit.Name], j.Unit)
		e.SetTarget(j.Unit.Name, j.Machine)
		return
	}
	if !ok {
		e.names = insertSorted(e.names, j.Unit.Name)
	}
	e.unitChanged(j.Unit.Name)
	e.units[j.Unit.Name] = j
	e.touchIDs[j.Machine] = true
}

func insertSorted(s []string, v string) []string {
	k, _ := slices.BinarySearch(s, v)
	return slices.Insert(s, k, v)
}

func deleteSorted(s []string, v string) []string {
	if k, found := slices.BinarySearch(s, v); found {
		return slices.Delete(s, k, k+1)
	}
	return s
}

// sameFile reports whether two units differ at most in their desired state.
func sameFile(a, b *Unit) bool {
	return a.Name == b.Name && a.Hash == b.Hash && a.File == b.File && a.Options == b.Options
}

// RemoveUnit forgets a unit (fleetctl destroy).
func (e *Engine) RemoveUnit(name string) {
	if _, ok := e.units[name]; !ok {
		return
	}
	e.unitChanged(name)
	delete(e.units, name)
	e.names = deleteSorted(e.names, name)
}

// unitChanged records that unit name is about to change: where it is and was scheduled is
// touched.
func (e *Engine) unitChanged(name string) {
	if old, ok := e.units[name]; ok {
		e.touchIDs[old.Machine] = true
	}
	if !e.reindex {
		if i, ok := e.d.byName[name]; ok {
			e.touchIDs[e.d.machineID(&e.d.jobs[i])] = true
		}
	}
	e.dirty[name] = true
	e.reindex = true
}

// SetTarget records that unit name is now scheduled to machine ("" for none), as written
// to the registry. It does nothing for an unknown unit.
func (e *Engine) SetTarget(name, machine string) {
	j, ok := e.units[name]
	if !ok || j.Machine == machine {
		return
	}
	j.Machine = machine
	e.units[name] = j
	if e.reindex {
		e.touchIDs[machine] = true
		e.dirty[name] = true
		return
	}
	i := e.d.byName[name]
	e.d.jobs[i].initial = machine
	e.d.jobs[i].home = e.d.machineIndex(machine)
	e.moved = append(e.moved, i)
}

// Apply records a plan's writes, as [Plan.Apply] does to jobs.
func (e *Engine) Apply(p Plan) {
	for _, a := range p.Unschedule {
		e.SetTarget(a.Unit, "")
	}
	for _, a := range p.Schedule {
		e.SetTarget(a.Unit, a.Machine)
	}
}

// Schedule makes the engine's decision under lease: the plan [Schedule] returns for
// [Engine.Input] with that lease. It does not record the plan's writes; call
// [Engine.Apply] once they are made.
func (e *Engine) Schedule(lease Lease) Plan {
	if e.reindex {
		e.rebuild()
	}
	d := e.d
	d.revert(e.moved)
	e.moved = e.moved[:0]
	d.settled = false
	maxRounds := 2*len(d.jobs) + 4
	for round := 0; round < maxRounds; round++ {
		changed := d.keepPassIncremental()
		if d.placePassIncremental() {
			changed = true
		}
		if !changed {
			d.settled = true
			break
		}
	}
	p := d.plan(lease.Fence())
	for i := range d.jobs {
		if d.jobs[i].cur != d.jobs[i].home {
			e.moved = append(e.moved, int32(i))
		}
	}
	in := d.inc
	if d.settled {
		// Every unplaced unit that wants a machine has been tried on every touched machine
		// (units that do not want one get -1 again when they start to): start a new log.
		in.log = in.log[:0]
		clear(in.pos)
	} else {
		d.startIncremental(true)
	}
	return p
}

// startIncremental gives d an empty incremental state; with all, every unit is to be
// checked and tried everywhere, as in a whole decision.
func (d *decision) startIncremental(all bool) {
	n := len(d.jobs)
	in := &incState{keep: make([]bool, n), pos: make([]int32, n)}
	if all {
		for i := range n {
			in.keep[i] = true
			in.pos[i] = -1
		}
	}
	d.inc = in
}

// touch records that machine m changed: its units are checked again and unplaced units
// are tried on it.
func (d *decision) touch(m int32) {
	d.inc.log = append(d.inc.log, m)
	for _, v := range d.machines[m].units {
		d.inc.keep[v] = true
	}
}

// setMachine changes machine m's liveness or metadata in place.
func (d *decision) setMachine(m int32, ms MachineState) {
	mm := &d.machines[m]
	if mm.Alive {
		pos, _ := slices.BinarySearchFunc(d.order, m, d.compareLoad)
		d.order = slices.Delete(d.order, pos, pos+1)
		d.alive--
	}
	mm.MachineState = ms
	d.computeGlobals(m)
	mm.load = len(mm.units) + len(mm.globals)
	if mm.Alive {
		d.alive++
		pos, _ := slices.BinarySearchFunc(d.order, m, d.compareLoad)
		d.order = slices.Insert(d.order, pos, m)
	}
	d.touch(m)
}

// setUnitState gives unit i a new desired state (the same unit otherwise) in place. Its
// machine is touched (its units' conflicts, MachineOf peers and Replaces depend on whether
// it is active); a global unit that starts or stops running changes the global units of
// every machine, and each machine where they change is touched.
func (d *decision) setUnitState(i int32, u *Unit) {
	j := &d.jobs[i]
	wasGlobal := j.runsGlobal()
	j.u, j.active = u, u.DesiredState.Active()
	d.inc.keep[i] = true
	d.inc.pos[i] = -1
	if j.cur >= 0 {
		d.touch(j.cur)
	}
	if wasGlobal == j.runsGlobal() {
		return
	}
	d.globals = d.globals[:0]
	for g := range d.jobs {
		if d.jobs[g].runsGlobal() {
			d.globals = append(d.globals, int32(g))
		}
	}
	var before []int32
	for m := range int32(len(d.machines)) {
		before = append(before[:0], d.machines[m].globals...)
		d.refresh(m)
		if !slices.Equal(before, d.machines[m].globals) {
			d.touch(m)
		}
	}
}

// revert moves the given units back to their registry machine (Job.Machine) where a
// previous decision or SetTarget left them elsewhere.
func (d *decision) revert(units []int32) {
	for _, i := range units {
		j := &d.jobs[i]
		want := j.home
		if j.cur == want {
			continue
		}
		if m := j.cur; m >= 0 {
			mm := &d.machines[m]
			if pos, found := slices.BinarySearch(mm.units, i); found {
				mm.units = slices.Delete(mm.units, pos, pos+1)
			}
			d.refresh(m)
			d.touch(m)
		}
		j.cur = want
		d.inc.keep[i] = true
		d.inc.pos[i] = -1
		if want >= 0 {
			mm := &d.machines[want]
			pos, _ := slices.BinarySearch(mm.units, i)
			mm.units = slices.Insert(mm.units, pos, i)
			d.refresh(want)
			d.touch(want)
		}
	}
}

// keepPassIncremental is pass 1 over the marked units, in name order. A unit marked while
// the pass runs is checked in this pass if its name comes later, else in the next round,
// as pass 1 over every unit would find it.
func (d *decision) keepPassIncremental() bool {
	changed := false
	keep := d.inc.keep
	for i := range int32(len(d.jobs)) {
		if !keep[i] {
			continue
		}
		keep[i] = false
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

// placePassIncremental is pass 2 over the units that want a machine and have one to try.
func (d *decision) placePassIncremental() bool {
	changed := false
	in := d.inc
	for i := range int32(len(d.jobs)) {
		j := &d.jobs[i]
		if j.cur != unscheduled || !j.wants() || (in.pos[i] >= 0 && int(in.pos[i]) >= len(in.log)) {
			continue
		}
		m, load := d.pickIncremental(i)
		if m < 0 {
			continue
		}
		changed = true
		d.place(i, m, load)
	}
	return changed
}

// pickIncremental is pick for unit i, trying only the machines touched since i was last
// tried: every other alive machine still rejects it, so the least-loaded fitting machine
// among them is the least-loaded fitting machine of all.
func (d *decision) pickIncremental(i int32) (int32, int) {
	in := d.inc
	from := in.pos[i]
	in.pos[i] = int32(len(in.log))
	if from < 0 {
		return d.pick(i)
	}
	best := int32(-1)
	for _, m := range in.log[from:] {
		if !d.machines[m].Alive || m == best || (best >= 0 && d.compareLoad(m, best) >= 0) {
			continue
		}
		if d.fit(i, m, false).plugin == "" {
			best = m
		}
	}
	if best < 0 {
		return -1, 0
	}
	return best, d.machines[best].load
}

// rebuild re-indexes the engine after units or machines were added or removed, carrying
// over what is still to be checked and marking what the changes affected.
func (e *Engine) rebuild() {
	old := e.d
	in := e.Input()
	d := newDecision(in.Machines, in.Units)
	d.startIncremental(false)
	touch, dirty := e.touchIDs, e.dirty
	for i := range old.jobs {
		oj := &old.jobs[i]
		cur := old.machineID(oj)
		ni, ok := d.byName[oj.name]
		if !ok || old.inc.keep[i] || old.inc.pos[i] < 0 || cur != oj.initial || !sameRelations(old, oj, d, &d.jobs[ni]) {
			dirty[oj.name] = true
			touch[cur], touch[oj.initial] = true, true
		}
		if ok {
			if nj := &d.jobs[ni]; nj.u != oj.u || nj.initial != oj.initial {
				dirty[oj.name] = true
				touch[cur], touch[oj.initial], touch[nj.initial] = true, true, true
			}
		}
	}
	for i := range d.jobs {
		if _, ok := old.byName[d.jobs[i].name]; !ok {
			dirty[d.jobs[i].name] = true
			touch[d.jobs[i].initial] = true
		}
	}
	for _, m := range old.inc.log {
		touch[old.machines[m].ID] = true
	}
	for m := range d.machines {
		nm := &d.machines[m]
		om, ok := old.byID[nm.ID]
		if !ok || old.machines[om].Alive != nm.Alive || !sameNames(old, old.machines[om].globals, d, nm.globals) {
			touch[nm.ID] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(touch)) {
		if m, ok := d.byID[id]; ok {
			d.touch(m)
		}
	}
	for i := range d.jobs {
		if dirty[d.jobs[i].name] || d.jobs[i].cur == goneMachine {
			d.inc.keep[i] = true
			d.inc.pos[i] = -1
		}
	}
	e.d = d
	e.reindex = false
	e.touchIDs, e.dirty = map[string]bool{}, map[string]bool{}
	e.moved = e.moved[:0]
}

// sameRelations reports whether a unit's MachineOf peers and Replaces edges are the same in
// two decisions (by name).
func sameRelations(od *decision, oj *job, nd *decision, nj *job) bool {
	if len(oj.peers) != len(nj.peers) {
		return false
	}
	for k := range oj.peers {
		if (oj.peers[k] < 0) != (nj.peers[k] < 0) {
			return false
		}
	}
	return sameNames(od, oj.replaces, nd, nj.replaces) && sameNames(od, oj.replacedBy, nd, nj.replacedBy)
}

func sameNames(od *decision, a []int32, nd *decision, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if od.jobs[a[k]].name != nd.jobs[b[k]].name {
			return false
		}
	}
	return true
}
