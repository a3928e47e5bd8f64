package units

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/model/mutant"
	"github.com/fleetsim/fleetsim/model/unitfile"
)

// verdict is a filter's answer for one unit and machine, kept as data so that filtering
// formats no string; explain renders it. The zero verdict admits the machine.
type verdict struct {
	reject bool
	plugin string // the rejecting filter's name; "" when every filter admits the machine
	other  int32  // the unit in the way (MachineOf peer, Conflicts, Replaces); -1 if none
	peer   string // the MachineOf peer's name
}

// filter is one plugin: it admits machine m for unit i, or rejects it. keep is true in pass
// 1, when i is already on m.
type filter struct {
	name  string
	admit func(d *decision, i, m int32, keep bool) verdict
}

var admitted = verdict{}

// filters run in order; the first rejection wins.
var filters = []filter{
	{PluginMachineID, (*decision).filterMachineID},
	{PluginMachineMetadata, (*decision).filterMachineMetadata},
	{PluginMachineOf, (*decision).filterMachineOf},
	{PluginConflicts, (*decision).filterConflicts},
	{PluginReplaces, (*decision).filterReplaces},
}

func (d *decision) fit(i, m int32, keep bool) verdict {
	for _, f := range filters {
		if v := f.admit(d, i, m, keep); v.reject {
			v.plugin = f.name
			return v
		}
	}
	return admitted
}

// filterMachineID: the machine's full ID, or its 8-character short ID, is MachineID.
func (d *decision) filterMachineID(i, m int32, _ bool) verdict {
	if want := d.jobs[i].x.MachineID; want != "" && !unitfile.MachineIDMatches(want, d.machines[m].ID) {
		return verdict{reject: true, other: -1}
	}
	return admitted
}

// filterMachineMetadata: for every key, the machine's value is one of the allowed ones.
func (d *decision) filterMachineMetadata(i, m int32, _ bool) verdict {
	if md := d.jobs[i].x.MachineMetadata; len(md) > 0 && !md.Matches(d.machines[m].Metadata) {
		return verdict{reject: true, other: -1}
	}
	return admitted
}

// filterMachineOf: every peer runs on the machine (scheduled there, or a global unit
// running there).
func (d *decision) filterMachineOf(i, m int32, _ bool) verdict {
	j := &d.jobs[i]
	if mutant.On("units.machineOfIgnored") {
		return admitted
	}
	for k, p := range j.peers {
		if !d.present(p, m) {
			return verdict{reject: true, other: p, peer: j.x.MachineOf[k]}
		}
	}
	return admitted
}

// filterConflicts: no unit on the machine conflicts with this one, in either direction. In
// pass 1 only units of smaller name count, so the greater name of a conflicting pair leaves.
// Global units running there count too.
func (d *decision) filterConflicts(i, m int32, keep bool) verdict {
	if j := &d.jobs[i]; len(j.globs) == 0 && !j.targeted {
		return admitted // conflicts with nothing
	}
	mm := &d.machines[m]
	for _, v := range mm.units {
		if keep && v >= i {
			break
		}
		if v != i && d.jobs[v].wants() && d.conflict(i, v) {
			return verdict{reject: true, other: v}
		}
	}
	if mutant.On("units.conflictsIgnoreGlobals") {
		return admitted
	}
	for _, g := range mm.globals {
		if d.conflict(i, g) {
			return verdict{reject: true, other: g}
		}
	}
	return admitted
}

// filterReplaces: no unit on the machine replaces this one. (A machine running a unit that
// this one replaces is acceptable: the replaced unit is moved away.)
func (d *decision) filterReplaces(i, m int32, _ bool) verdict {
	if mutant.On("units.replacesIgnored") {
		return admitted
	}
	for _, r := range d.jobs[i].replacedBy {
		if jr := &d.jobs[r]; jr.cur == m && jr.wants() {
			return verdict{reject: true, other: r}
		}
	}
	return admitted
}

// explain renders a rejection as the reason users see.
func (d *decision) explain(i, m int32, v verdict) string {
	j, mm := &d.jobs[i], &d.machines[m]
	switch v.plugin {
	case PluginMachineID:
		return fmt.Sprintf("machine %s does not match MachineID %s", mm.ID, j.x.MachineID)
	case PluginMachineMetadata:
		return fmt.Sprintf("machine %s does not match MachineMetadata %s", mm.ID, metadataMismatch(j.x.MachineMetadata, mm.Metadata))
	case PluginMachineOf:
		return fmt.Sprintf("machine %s does not run MachineOf peer %s", mm.ID, v.peer)
	case PluginConflicts:
		jv := &d.jobs[v.other]
		owner, target := j, jv
		g, found := unitfile.FirstMatch(j.x.Conflicts, jv.name)
		if !found {
			owner, target = jv, j
			g, _ = unitfile.FirstMatch(jv.x.Conflicts, j.name)
		}
		kind := ""
		if jv.global {
			kind = "global unit "
		}
		return fmt.Sprintf("machine %s runs %s%s, which conflicts with %s (Conflicts=%s in %s matches %s)",
			mm.ID, kind, jv.name, j.name, g, owner.name, target.name)
	case PluginReplaces:
		jr := &d.jobs[v.other]
		g, _ := unitfile.FirstMatch(jr.x.Replaces, j.name)
		return fmt.Sprintf("machine %s runs %s, which replaces %s (Replaces=%s)", mm.ID, jr.name, j.name, g)
	}
	return ""
}

// metadataMismatch renders the first key (in sorted order) that machine fails, as
// "key=v1|v2 (it has key=v)" or "key=v (it has no key)".
func metadataMismatch(want unitfile.Metadata, machine map[string]string) string {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		have, found := machine[k]
		if found && slices.Contains(want[k], have) {
			continue
		}
		req := k + "=" + strings.Join(want[k], "|")
		if !found {
			return req + " (it has no " + k + ")"
		}
		return req + " (it has " + k + "=" + have + ")"
	}
	return ""
}

// maxReasons caps the per-machine reasons quoted for one unplaced unit.
const maxReasons = 3

// unplacedReason says why unit i (active, without a machine) could not be placed.
func (d *decision) unplacedReason(i int32) string {
	j := &d.jobs[i]
	if j.invalid != "" {
		return j.invalid
	}
	if d.alive == 0 {
		return "no machine is alive"
	}
	for k, p := range j.peers {
		name := j.x.MachineOf[k]
		switch {
		case p < 0:
			return fmt.Sprintf("MachineOf peer %s does not exist", name)
		case d.jobs[p].invalid != "":
			return fmt.Sprintf("MachineOf peer %s cannot run: %s", name, d.jobs[p].invalid)
		case !d.jobs[p].active:
			return fmt.Sprintf("MachineOf peer %s is inactive", name)
		case !d.jobs[p].global && d.jobs[p].cur < 0:
			return fmt.Sprintf("MachineOf peer %s is not scheduled", name)
		}
	}
	if d.settled {
		return d.settledUnplacedReason(i)
	}
	var reasons []string
	onlyID, rejected := true, 0
	for m := range int32(len(d.machines)) {
		if !d.machines[m].Alive {
			continue
		}
		v := d.fit(i, m, false)
		if v.plugin == "" {
			return "not placed: scheduling did not settle in this decision"
		}
		rejected++
		onlyID = onlyID && v.plugin == PluginMachineID
		if len(reasons) < maxReasons {
			reasons = append(reasons, d.explain(i, m, v))
		}
	}
	if onlyID {
		return fmt.Sprintf("no alive machine matches MachineID %s", j.x.MachineID)
	}
	s := fmt.Sprintf("no eligible machine among %d alive: %s", d.alive, strings.Join(reasons, "; "))
	if more := rejected - len(reasons); more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}

// settledUnplacedReason is unplacedReason once the decision settled: then every alive
// machine rejects unit i (pass 2 found none for it in the last round, which changed
// nothing), so only the first few rejections need to be rendered, and every rejection is
// by MachineID exactly when no alive machine matches the unit's MachineID. It returns what
// the full scan would.
func (d *decision) settledUnplacedReason(i int32) string {
	j := &d.jobs[i]
	if want := j.x.MachineID; want != "" {
		matched := false
		for m := range d.machines {
			if d.machines[m].Alive && unitfile.MachineIDMatches(want, d.machines[m].ID) {
				matched = true
				break
			}
		}
		if !matched {
			return fmt.Sprintf("no alive machine matches MachineID %s", want)
		}
	}
	var reasons []string
	for m := range int32(len(d.machines)) {
		if len(reasons) == maxReasons {
			break
		}
		if d.machines[m].Alive {
			reasons = append(reasons, d.explain(i, m, d.fit(i, m, false)))
		}
	}
	s := fmt.Sprintf("no eligible machine among %d alive: %s", d.alive, strings.Join(reasons, "; "))
	if more := d.alive - len(reasons); more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}

// GlobalTargets returns the IDs (sorted) of the machines whose agents run the global unit u,
// given the machines and the scheduled units: every alive machine that matches u's
// MachineMetadata and runs no unit that conflicts with u (in either direction). Scheduled
// units count where they are scheduled, if loaded or launched; other global units count
// where they run, and of two conflicting global units the one with the smaller name runs.
// It returns nil if u is not a valid, loaded or launched global unit. A unit in units with
// u's name is replaced by u.
func GlobalTargets(u *Unit, machines []MachineState, units []Job) []string {
	if u == nil {
		return nil
	}
	jobs := make([]Job, 0, len(units)+1)
	for _, j := range units {
		if j.Unit != nil && j.Unit.Name != u.Name {
			jobs = append(jobs, j)
		}
	}
	jobs = append(jobs, Job{Unit: u})
	d := newDecision(machines, jobs)
	g := d.byName[u.Name]
	if !d.jobs[g].runsGlobal() {
		return nil
	}
	var out []string
	for m := range int32(len(d.machines)) {
		if slices.Contains(d.machines[m].globals, g) {
			out = append(out, d.machines[m].ID)
		}
	}
	return out
}

// GlobalsOn returns the names (sorted) of the global units the agent of machine id runs,
// by the same rule as [GlobalTargets].
func GlobalsOn(id string, machines []MachineState, units []Job) []string {
	d := newDecision(machines, units)
	m, found := d.byID[id]
	if !found {
		return nil
	}
	var out []string
	for _, g := range d.machines[m].globals {
		out = append(out, d.jobs[g].name)
	}
	return out
}
