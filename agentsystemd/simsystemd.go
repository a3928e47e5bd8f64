package agentsystemd

import (
	"fmt"
	"sort"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// Exit is how a unit configured in SimSystemd.ExitsAfterStart ends after it starts.
type Exit int

const (
	// ExitClean: the main process exits with status 0; the unit ends inactive/dead.
	ExitClean Exit = iota + 1
	// ExitFailure: the main process exits with an error; the unit ends failed/failed.
	ExitFailure
)

// SimSystemd is a deterministic in-memory systemd for one machine, holding the agent's unit
// files and systemd's view of them. It implements Systemd, so Apply and Reconcile drive it as
// they drive the real one. It is not safe for concurrent use; the simulator runs on one
// goroutine.
//
// The model:
//
//   - load writes the unit file (its hash) and links it; systemd sees the new content only
//     after a daemon-reload, and until then reports NeedDaemonReload. A unit systemd does not know yet is listed as not-found,
//     inactive/dead.
//   - unload removes the file and resets a failed unit to inactive/dead; a started unit keeps
//     running (systemd does not stop a unit whose file goes away). systemd forgets the unit
//     at the next daemon-reload.
//   - daemon-reload re-reads every file: a unit with a file becomes loaded (or keeps the load
//     state error/bad-setting its content was given in Set), one without becomes not-found and
//     is dropped when it is also inactive; masked units stay masked.
//   - start needs load state loaded and a unit that is not masked. It ends active/running,
//     unless the unit is in StartFails (failed/failed and an error) or ExitsAfterStart (then
//     inactive/dead or failed/failed, without an error: the start job itself succeeded). Starting
//     a started unit does nothing.
//   - stop ends a started unit inactive/dead. A failed or inactive unit is left as it is.
//     Stopping a unit systemd does not know is an error.
//   - [Install]: load enables a file with an [Install] section (the agent does, as fleet's
//     did), unload disables it. Once systemd has read the file (daemon-reload), a successful
//     start of a unit also starts every loaded unit whose WantedBy= or RequiredBy= names it,
//     in name order and transitively, as systemd's wants do, whatever fleet wants of them.
//     Alias= and Also= are not modelled.
type SimSystemd struct {
	// StartFails names the units whose start fails.
	StartFails map[string]bool
	// ExitsAfterStart names the units whose process exits right after a successful start.
	ExitsAfterStart map[string]Exit
	// Inject, if set, is called before every task; a non-nil result fails the task
	// without effect.
	Inject func(Task) error

	units   map[string]*simUnit
	reloads int
}

type simUnit struct {
	file   unitfile.Hash // content on disk; zero if no file
	loaded unitfile.Hash // content systemd read at the last daemon-reload
	load   string
	active string
	sub    string
	masked bool
	// rejected is content systemd refuses to load, and rejectedAs the load state it then shows.
	rejected   unitfile.Hash
	rejectedAs string
	// install is the [Install] section of the file on disk (enabled at load); wantedBy is
	// the one systemd read at the last daemon-reload: the units whose start pulls this one in.
	install  unitfile.Install
	wantedBy unitfile.Install
}

// NewSimSystemd returns a SimSystemd holding the given units (see Set).
func NewSimSystemd(units ...CurrentUnit) *SimSystemd {
	s := &SimSystemd{
		StartFails:      map[string]bool{},
		ExitsAfterStart: map[string]Exit{},
		units:           map[string]*simUnit{},
	}
	for _, c := range units {
		s.Set(c)
	}
	return s
}

// Set puts a unit in the given state, as if it had reached it by itself, replacing what the
// machine had for that name. A unit set with load state masked stays masked. The content
// systemd last read is c.Hash if the load state is loaded, error or bad-setting, none
// otherwise, or, if c.NeedDaemonReload is set, some other content. A unit set with load state
// error or bad-setting keeps that load state, across daemon-reloads, for as long as its file
// holds the content systemd read. CurrentUnits reports NeedDaemonReload from this model, so it
// can differ from c's (a file that systemd reports not-found has not been read). Set ignores a
// unit without a name.
func (s *SimSystemd) Set(c CurrentUnit) {
	if c.Name == "" {
		return
	}
	u := &simUnit{file: c.Hash, load: c.LoadState, active: c.ActiveState, sub: c.SubState}
	read := c.Hash
	if c.NeedDaemonReload {
		read = otherHash(c.Hash)
	}
	switch {
	case c.LoadState == LoadMasked:
		u.masked = true
	case loadRejected(c.LoadState):
		u.rejected, u.rejectedAs = read, c.LoadState
		u.loaded = read
	case c.LoadState == LoadLoaded || c.NeedDaemonReload:
		u.loaded = read
	}
	if s.units == nil {
		s.units = map[string]*simUnit{}
	}
	s.units[c.Name] = u
}

// otherHash returns a hash that differs from h, standing for content that is no longer on disk.
func otherHash(h unitfile.Hash) unitfile.Hash {
	h[0] ^= 0xff
	return h
}

// Units returns every unit the machine has a file for or systemd still lists, sorted by name.
// It never fails.
func (s *SimSystemd) Units() ([]CurrentUnit, error) { return s.CurrentUnits(), nil }

// CurrentUnits is Units without the error.
func (s *SimSystemd) CurrentUnits() []CurrentUnit {
	out := make([]CurrentUnit, 0, len(s.units))
	for _, name := range s.names() {
		u := s.units[name]
		out = append(out, u.current(name))
	}
	return out
}

func (u *simUnit) current(name string) CurrentUnit {
	return CurrentUnit{
		Name:             name,
		Hash:             u.file,
		LoadState:        u.load,
		ActiveState:      u.active,
		SubState:         u.sub,
		NeedDaemonReload: u.needReload(),
	}
}

func (u *simUnit) needReload() bool { return !u.masked && u.file != u.loaded }

// Unit returns the current state of one unit, and whether the machine has it.
func (s *SimSystemd) Unit(name string) (CurrentUnit, bool) {
	u, ok := s.units[name]
	if !ok {
		return CurrentUnit{}, false
	}
	return u.current(name), true
}

// NeedDaemonReload reports whether the unit's file on disk differs from what systemd last read
// (systemd's NeedDaemonReload property). It is false for masked and unknown units.
func (s *SimSystemd) NeedDaemonReload(name string) bool {
	u, ok := s.units[name]
	return ok && u.needReload()
}

// DaemonReloads returns how many daemon-reloads have run.
func (s *SimSystemd) DaemonReloads() int { return s.reloads }

func (s *SimSystemd) names() []string {
	names := make([]string, 0, len(s.units))
	for n := range s.units {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run performs one task; it is the run function for Apply.
func (s *SimSystemd) Run(t Task) error {
	if s.Inject != nil {
		if err := s.Inject(t); err != nil {
			return err
		}
	}
	if s.units == nil {
		s.units = map[string]*simUnit{}
	}
	if t.Kind != TaskDaemonReload && t.Unit == "" {
		return errNoName
	}
	switch t.Kind {
	case TaskLoad:
		return s.loadUnit(t)
	case TaskUnload:
		s.unloadUnit(t.Unit)
		return nil
	case TaskDaemonReload:
		s.daemonReload()
		return nil
	case TaskStart:
		return s.start(t.Unit)
	case TaskStop:
		return s.stop(t.Unit)
	}
	return fmt.Errorf("unknown task kind %v", t.Kind)
}

func (s *SimSystemd) loadUnit(t Task) error {
	if t.Hash.IsZero() {
		return fmt.Errorf("no content for unit %s", t.Unit)
	}
	u, ok := s.units[t.Unit]
	if !ok {
		u = &simUnit{load: LoadNotFound, active: ActiveInactive, sub: SubDead}
		s.units[t.Unit] = u
	}
	u.file = t.Hash
	u.install = unitfile.Install{}
	if unitfile.HasInstall(t.File) {
		u.install = unitfile.ParseInstall(t.File)
	}
	return nil
}

func (s *SimSystemd) unloadUnit(name string) {
	u, ok := s.units[name]
	if !ok {
		return
	}
	u.file = unitfile.Hash{}
	u.install = unitfile.Install{}
	if u.active == ActiveFailed {
		u.active, u.sub = ActiveInactive, SubDead
	}
}

func (s *SimSystemd) daemonReload() {
	s.reloads++
	for _, name := range s.names() {
		u := s.units[name]
		switch {
		case u.masked:
			u.load, u.loaded = LoadMasked, unitfile.Hash{}
		case u.file.IsZero():
			u.load, u.loaded = LoadNotFound, unitfile.Hash{}
		case u.file == u.rejected:
			u.load, u.loaded = u.rejectedAs, u.file
		default:
			u.load, u.loaded = LoadLoaded, u.file
		}
		u.wantedBy = u.install
		if !u.masked && u.file.IsZero() && (u.active == "" || u.active == ActiveInactive) {
			delete(s.units, name)
		}
	}
}

func (s *SimSystemd) start(name string) error {
	if err := s.startOne(name); err != nil {
		return err
	}
	// systemd's wants: what an enabled [Install] hangs on this unit starts with it.
	queue := []string{name}
	for len(queue) > 0 {
		by := queue[0]
		queue = queue[1:]
		for _, n := range s.names() {
			u := s.units[n]
			if n == by || started(u.active) || u.masked || u.load != LoadLoaded || !u.wantedBy.PulledInBy(by) {
				continue
			}
			if s.startOne(n) == nil && started(s.units[n].active) {
				queue = append(queue, n)
			}
		}
	}
	return nil
}

func (s *SimSystemd) startOne(name string) error {
	u, ok := s.units[name]
	switch {
	case !ok:
		return fmt.Errorf("unit %s not found", name)
	case u.masked:
		return fmt.Errorf("unit %s is masked", name)
	case started(u.active):
		return nil
	case u.load != LoadLoaded:
		return fmt.Errorf("unit %s cannot be started: %s", name, describeLoad(u.load))
	case s.StartFails[name]:
		u.active, u.sub = ActiveFailed, SubFailed
		return fmt.Errorf("unit %s failed to start", name)
	}
	switch s.ExitsAfterStart[name] {
	case ExitClean:
		u.active, u.sub = ActiveInactive, SubDead
	case ExitFailure:
		u.active, u.sub = ActiveFailed, SubFailed
	default:
		u.active, u.sub = ActiveActive, SubRunning
	}
	return nil
}

func (s *SimSystemd) stop(name string) error {
	u, ok := s.units[name]
	if !ok || (!started(u.active) && unknownToSystemd(u.load)) {
		return fmt.Errorf("unit %s not loaded", name)
	}
	if started(u.active) {
		u.active, u.sub = ActiveInactive, SubDead
	}
	return nil
}
