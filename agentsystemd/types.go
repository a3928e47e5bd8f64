package agentsystemd

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// TargetState is the state the registry wants a unit in on this machine (fleet's "Unit states").
type TargetState string

// The three target states.
const (
	// TargetInactive: known to fleet but not on this machine. The agent stops the unit and
	// removes its file.
	TargetInactive TargetState = "inactive"
	// TargetLoaded: the unit file is on this machine and known to systemd, but not started.
	TargetLoaded TargetState = "loaded"
	// TargetLaunched: loaded, and started.
	TargetLaunched TargetState = "launched"
)

// Valid reports whether t is one of the three target states.
func (t TargetState) Valid() bool {
	return t == TargetInactive || t == TargetLoaded || t == TargetLaunched
}

// rank orders target states inactive < loaded < launched. It is -1 for an invalid state.
func (t TargetState) rank() int {
	switch t {
	case TargetInactive:
		return 0
	case TargetLoaded:
		return 1
	case TargetLaunched:
		return 2
	}
	return -1
}

// CurrentState is fleet's current state of a unit on this machine (the STATE column of
// `fleetctl list-unit-files` and currentState in the fleet API): the target state the agent
// has acted on for the unit's present content, as upstream fleet means it. It is not
// systemd's view: a unit systemd refuses to start, or that failed after its start, is still
// launched once the agent has acted on launched, and a failed unit the agent stopped is
// loaded. systemd's view is reported next to it (UnitState's LoadState, ActiveState and
// SubState, the fleet API's /state and `fleetctl list-units`).
type CurrentState string

// The three current states.
const (
	CurrentInactive CurrentState = "inactive"
	CurrentLoaded   CurrentState = "loaded"
	CurrentLaunched CurrentState = "launched"
)

// Acted is what the agent last acted on for a unit (upstream fleet's agent cache): the
// target state it brought the unit to and the content it did so for. The zero value means
// nothing: the agent has not acted on the unit since it started. Memory keeps it between
// rounds and sets it on CurrentUnits; Decide and CurrentUnit.State read it.
type Acted struct {
	State TargetState
	Hash  unitfile.Hash
}

// on reports whether the agent has acted on target state t for content h.
func (a Acted) on(t TargetState, h unitfile.Hash) bool {
	return a.State == t && a.Hash == h && !h.IsZero()
}

// systemd LOAD states that the agent tells apart. Other values are possible and are treated as
// "systemd knows the unit".
const (
	LoadLoaded     = "loaded"
	LoadNotFound   = "not-found"
	LoadMasked     = "masked"
	LoadError      = "error"
	LoadBadSetting = "bad-setting"
)

// systemd ACTIVE states. Any value other than inactive, failed or "" counts as started.
const (
	ActiveActive       = "active"
	ActiveReloading    = "reloading"
	ActiveInactive     = "inactive"
	ActiveFailed       = "failed"
	ActiveActivating   = "activating"
	ActiveDeactivating = "deactivating"
)

// Some systemd SUB states for services. The agent never interprets them; it reports them.
const (
	SubRunning = "running"
	SubDead    = "dead"
	SubExited  = "exited"
	SubFailed  = "failed"
)

// DesiredUnit is one unit the registry wants on this machine, with its target state.
// Units the registry does not schedule here are simply absent from the desired set.
type DesiredUnit struct {
	Name string
	// File is the unit file's content, which a load task carries to the driver. It may be nil
	// when the driver looks the content up by hash (the simulator does).
	File *unitfile.File
	// Hash identifies the content. If it is zero, the hash of File is used (see EffectiveHash).
	Hash  unitfile.Hash
	State TargetState
}

// EffectiveHash returns the hash Decide compares with the file on disk: Hash if it is set,
// otherwise File.Hash(), otherwise zero.
func (d DesiredUnit) EffectiveHash() unitfile.Hash {
	if !d.Hash.IsZero() || d.File == nil {
		return d.Hash
	}
	return d.File.Hash()
}

// Validate reports whether d is usable: its name is a valid unit name, its state is one of
// the three target states, a loaded or launched unit has content (a Hash or a File), and a
// unit with both agrees on them. Decide leaves alone any unit whose desired entry fails one
// of the first three checks (see Decide); it trusts Hash over File without rehashing, so
// drivers should call Validate when they take a unit in.
func (d DesiredUnit) Validate() error {
	if err := d.check(); err != nil {
		return err
	}
	if d.File != nil && !d.Hash.IsZero() {
		if fh := d.File.Hash(); fh != d.Hash {
			return fmt.Errorf("unit %s: hash %s does not match its file (%s)", d.Name, d.Hash.Short(), fh.Short())
		}
	}
	return nil
}

// check is the part of Validate that Decide applies.
func (d DesiredUnit) check() error {
	if err := unitfile.ValidateName(d.Name); err != nil {
		return err
	}
	if !d.State.Valid() {
		return fmt.Errorf("unit %s: invalid target state %q", d.Name, d.State)
	}
	if d.State != TargetInactive && d.EffectiveHash().IsZero() {
		return fmt.Errorf("unit %s: target state %s needs a unit file or hash", d.Name, d.State)
	}
	return nil
}

// errNoName is returned for a task or unit without a name where one is needed.
var errNoName = errors.New("no unit name")

// CurrentUnit is what this machine has for one unit: the hash of the unit file the agent wrote
// (zero if there is none) and the states systemd reports for the unit, verbatim.
// An empty LoadState or ActiveState means systemd reported nothing for the unit.
type CurrentUnit struct {
	Name        string
	Hash        unitfile.Hash
	LoadState   string
	ActiveState string
	SubState    string
	// NeedDaemonReload is systemd's property of that name: the unit file changed on disk
	// since systemd last read it, so LoadState may describe the old content. It is set when a
	// round wrote or removed a file and then failed before its daemon-reload.
	NeedDaemonReload bool
	// Acted is what the agent last acted on for the unit (see Memory); zero if nothing. It is
	// the agent's, not systemd's: drivers leave it zero and Memory.Recall fills it in.
	Acted Acted
}

// Started reports whether systemd considers the unit started: its ActiveState is anything
// other than inactive, failed or empty (active, activating, deactivating, reloading, ...).
func (c CurrentUnit) Started() bool { return started(c.ActiveState) }

// State returns fleet's current state for c (see CurrentState):
//
//   - no unit file on disk → inactive;
//   - the agent has acted on launched or loaded for the file on disk (c.Acted) → that state,
//     whatever systemd reports;
//   - otherwise, when the agent has not acted on this content (it has just started, or the
//     unit is on its way out), systemd's view stands in: started → launched; unknown to
//     systemd (LoadState not-found or empty) → inactive; anything else, failed included →
//     loaded.
func (c CurrentUnit) State() CurrentState {
	return fleetState(c.Hash, c.LoadState, c.ActiveState, c.Acted)
}

func started(active string) bool {
	return active != "" && active != ActiveInactive && active != ActiveFailed
}

func unknownToSystemd(load string) bool { return load == "" || load == LoadNotFound }

func loadRejected(load string) bool { return load == LoadError || load == LoadBadSetting }

func fleetState(h unitfile.Hash, load, active string, acted Acted) CurrentState {
	switch {
	case h.IsZero():
		return CurrentInactive
	case acted.on(TargetLaunched, h):
		return CurrentLaunched
	case acted.on(TargetLoaded, h):
		return CurrentLoaded
	case started(active):
		return CurrentLaunched
	case unknownToSystemd(load):
		return CurrentInactive
	default:
		return CurrentLoaded
	}
}

// preferDesired reports whether a should replace b when both name the same unit. Names should
// be unique; this only makes Decide independent of input order when they are not: the higher
// target state wins, then the greater hash, then the entry that carries a File.
func preferDesired(a, b DesiredUnit) bool {
	if ra, rb := a.State.rank(), b.State.rank(); ra != rb {
		return ra > rb
	}
	ha, hb := a.EffectiveHash(), b.EffectiveHash()
	if c := bytes.Compare(ha[:], hb[:]); c != 0 {
		return c > 0
	}
	if (a.File != nil) != (b.File != nil) {
		return a.File != nil
	}
	return !a.Hash.IsZero() && b.Hash.IsZero()
}

// preferCurrent reports whether a should replace b when both name the same unit (systemd
// lists a name once; this only makes the result independent of input order): the greatest
// (Hash, LoadState, ActiveState, SubState, NeedDaemonReload, Acted) wins.
func preferCurrent(a, b CurrentUnit) bool {
	if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
		return c > 0
	}
	if a.LoadState != b.LoadState {
		return a.LoadState > b.LoadState
	}
	if a.ActiveState != b.ActiveState {
		return a.ActiveState > b.ActiveState
	}
	if a.SubState != b.SubState {
		return a.SubState > b.SubState
	}
	if a.NeedDaemonReload != b.NeedDaemonReload {
		return a.NeedDaemonReload
	}
	if a.Acted.State != b.Acted.State {
		return a.Acted.State > b.Acted.State
	}
	return bytes.Compare(a.Acted.Hash[:], b.Acted.Hash[:]) > 0
}

// indexCurrent returns current keyed by name, duplicates resolved by preferCurrent, skipping
// entries without a name.
func indexCurrent(current []CurrentUnit) map[string]CurrentUnit {
	have := make(map[string]CurrentUnit, len(current))
	for _, c := range current {
		if c.Name == "" {
			continue
		}
		if old, ok := have[c.Name]; ok && !preferCurrent(c, old) {
			continue
		}
		have[c.Name] = c
	}
	return have
}
