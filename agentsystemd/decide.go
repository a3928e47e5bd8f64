package agentsystemd

import (
	"fmt"
	"sort"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// Decide returns the tasks that bring this machine from current to desired.
//
// desired lists the units scheduled to this machine (global units included) with their target
// states; a unit that is not listed is not wanted here. current lists what the machine has:
// the agent's unit files and systemd's states for them. For each unit:
//
//   - not desired, or target inactive: stop it if it is started, then remove its file if the
//     file is present;
//   - target loaded or launched: if the file is missing, its hash differs, or systemd does not
//     know the unit (not-found), write it; a started unit whose hash differs is stopped first;
//   - target loaded: a started unit is stopped, unless the agent has already acted on loaded
//     for this content (CurrentUnit.Acted): then systemd started it (a dependency's [Install]
//     pulled it in, say) and the agent leaves it be, as upstream does;
//   - target launched: a unit that is not started (inactive or failed), or was stopped to be
//     rewritten, is started, once: a unit the agent has already acted on launched for (its
//     Acted is launched with the desired hash) is not started again when it fails or exits,
//     until its desired state or content changes or systemd loses it (upstream starts a unit
//     once per desired-state change and leaves restarts to systemd's Restart=). A masked unit
//     is never started, and neither is a unit whose file systemd rejected (load state error or
//     bad-setting), unless this plan rewrites the file or systemd has not read the current
//     file yet (NeedDaemonReload).
//
// One daemon-reload follows the file writes and removals, if there are any, or if any unit
// reports NeedDaemonReload (a previous round wrote a file and failed before its reload;
// without the reload, a start would run the old definition). The order of the
// result is described in the package documentation; it does not depend on the order of the
// inputs. Names should be unique within each input; if one repeats, Decide uses one entry
// chosen by content, not position: for desired units the higher target state, then the
// greater hash, then the entry carrying a File; for current units the greatest (Hash,
// LoadState, ActiveState, SubState, NeedDaemonReload). Current entries without a name are
// ignored.
//
// A desired entry with an invalid name, an invalid target state, or target loaded or launched
// but neither Hash nor File is ignored together with its current state: Decide plans nothing for
// that unit rather than guess (DesiredUnit.Validate reports why).
func Decide(desired []DesiredUnit, current []CurrentUnit) Plan {
	want := indexDesired(desired)
	have := indexCurrent(current)

	names := make([]string, 0, len(want)+len(have))
	for n := range want {
		names = append(names, n)
	}
	for n := range have {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)

	var stops, unloads, loads, starts []Task
	stale := 0 // units that need a daemon-reload whatever this plan writes
	for _, name := range names {
		d, isDesired := want[name]
		c := have[name]
		c.Name = name
		if isDesired && d.check() != nil {
			continue
		}
		if c.NeedDaemonReload {
			stale++
		}
		if !isDesired || d.State == TargetInactive {
			why := reasonNotScheduled(name)
			if isDesired {
				why = reasonTargetInactive(name)
			}
			if c.Started() {
				stops = append(stops, Task{Kind: TaskStop, Unit: name,
					Reason: fmt.Sprintf("%s but systemd reports it %s", why, describe(c))})
			}
			if !c.Hash.IsZero() {
				unloads = append(unloads, Task{Kind: TaskUnload, Unit: name,
					Reason: fmt.Sprintf("%s but its unit file is present (%s)", why, c.Hash.Short())})
			}
			continue
		}

		h := d.EffectiveHash()
		changed := c.Hash != h
		needLoad := changed || unknownToSystemd(c.LoadState)
		// acted: the agent already brought this content to this target state; what systemd
		// did with the unit since (a failure, a start by a dependency) is systemd's business.
		acted := c.Acted.on(d.State, h)
		stopped := false
		switch {
		case c.Started() && changed:
			stops = append(stops, Task{Kind: TaskStop, Unit: name, Reason: reasonHashChanged(name, d.State, c.Hash, h)})
			stopped = true
		case c.Started() && d.State == TargetLoaded && !acted:
			stops = append(stops, Task{Kind: TaskStop, Unit: name,
				Reason: fmt.Sprintf("unit %s is loaded on this machine but systemd reports it %s", name, describe(c))})
			stopped = true
		}
		if needLoad {
			var why string
			switch {
			case c.Hash.IsZero():
				why = fmt.Sprintf("unit %s is %s on this machine but its unit file is not present", name, d.State)
			case changed:
				why = reasonHashChanged(name, d.State, c.Hash, h)
			default:
				why = fmt.Sprintf("unit %s is %s on this machine but systemd does not know it (%s)", name, d.State, describeLoad(c.LoadState))
			}
			loads = append(loads, Task{Kind: TaskLoad, Unit: name, Reason: why, Hash: h, File: d.File})
		}
		if d.State != TargetLaunched || (c.Started() && !stopped) || (acted && !needLoad) {
			continue
		}
		if c.LoadState == LoadMasked || (loadRejected(c.LoadState) && !needLoad && !c.NeedDaemonReload) {
			continue
		}
		var why string
		switch {
		case stopped:
			why = fmt.Sprintf("unit %s is launched on this machine and was stopped to rewrite its unit file", name)
		case needLoad && c.Hash.IsZero():
			why = fmt.Sprintf("unit %s is launched on this machine and its unit file is being loaded", name)
		case c.ActiveState == ActiveFailed:
			why = fmt.Sprintf("unit %s is launched on this machine but has failed (%s)", name, describe(c))
		default:
			why = fmt.Sprintf("unit %s is launched on this machine but is not running (%s)", name, describe(c))
		}
		starts = append(starts, Task{Kind: TaskStart, Unit: name, Reason: why})
	}

	reload := len(unloads)+len(loads)+stale > 0
	n := len(stops) + len(unloads) + len(loads) + len(starts)
	if n == 0 && !reload {
		return nil
	}
	if reload {
		n++
	}
	plan := make(Plan, 0, n)
	plan = append(plan, stops...)
	plan = append(plan, unloads...)
	plan = append(plan, loads...)
	if reload {
		why := fmt.Sprintf("unit files changed: %d written, %d removed", len(loads), len(unloads))
		if stale > 0 {
			why += fmt.Sprintf(", %d not yet re-read by systemd", stale)
		}
		plan = append(plan, Task{Kind: TaskDaemonReload, Reason: why})
	}
	plan = append(plan, starts...)
	return plan
}

// indexDesired returns desired keyed by name, duplicates resolved by preferDesired.
func indexDesired(desired []DesiredUnit) map[string]DesiredUnit {
	want := make(map[string]DesiredUnit, len(desired))
	for _, d := range desired {
		if old, ok := want[d.Name]; ok && !preferDesired(d, old) {
			continue
		}
		want[d.Name] = d
	}
	return want
}

func reasonNotScheduled(name string) string {
	return fmt.Sprintf("unit %s is not scheduled to this machine", name)
}

func reasonTargetInactive(name string) string {
	return fmt.Sprintf("unit %s has target state inactive on this machine", name)
}

func reasonHashChanged(name string, t TargetState, from, to unitfile.Hash) string {
	return fmt.Sprintf("unit %s is %s on this machine but its hash changed (%s → %s)", name, t, shortHash(from), shortHash(to))
}

func shortHash(h unitfile.Hash) string {
	if h.IsZero() {
		return "none"
	}
	return h.Short()
}

// describe renders systemd's view of c as "ACTIVE/SUB", e.g. "active/running".
func describe(c CurrentUnit) string {
	if c.ActiveState == "" && c.SubState == "" {
		return "unknown to systemd"
	}
	if c.SubState == "" {
		return c.ActiveState
	}
	return c.ActiveState + "/" + c.SubState
}

func describeLoad(load string) string {
	if load == "" {
		return "no load state"
	}
	return "load state " + load
}
