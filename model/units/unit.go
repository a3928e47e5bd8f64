package units

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// State is a unit's desired state: what the user asked fleet to do with it (fleet's "Unit
// states"). The zero value, [StateNone], means the unit does not exist: it was never
// submitted, or it was destroyed.
type State string

const (
	// StateNone is "none" in the documentation's table: not submitted, or destroyed (removed).
	StateNone State = ""
	// StateInactive: known to fleet, not assigned to a machine.
	StateInactive State = "inactive"
	// StateLoaded: assigned to a machine and loaded into systemd there, not started.
	StateLoaded State = "loaded"
	// StateLaunched: loaded, and fleet has called the equivalent of systemctl start.
	StateLaunched State = "launched"
)

// String returns the state's name, "none" for [StateNone].
func (s State) String() string {
	if s == StateNone {
		return "none"
	}
	return string(s)
}

// Active reports whether a unit in state s wants a machine: loaded or launched.
func (s State) Active() bool { return s == StateLoaded || s == StateLaunched }

// ParseState parses a desired state as the API receives it: "inactive", "loaded" or
// "launched". Anything else is an error; upstream stored any string and the unit then
// vanished from the engine's view (CoreOS fleet's HTTP API v1, "Bug").
func ParseState(s string) (State, error) {
	switch st := State(s); st {
	case StateInactive, StateLoaded, StateLaunched:
		return st, nil
	}
	return StateNone, fmt.Errorf("invalid desired state %q: want inactive, loaded or launched", s)
}

// Op is a fleetctl command that changes a unit's desired state.
type Op string

const (
	OpSubmit  Op = "submit"
	OpLoad    Op = "load"
	OpStart   Op = "start"
	OpStop    Op = "stop"
	OpUnload  Op = "unload"
	OpDestroy Op = "destroy"
)

// opRule is one row of the documentation's command table: the desired state an operation sets and
// the states it is valid from. none means the unit may be missing.
type opRule struct {
	target State
	none   bool
	from   []State
}

var opRules = map[Op]opRule{
	OpSubmit:  {target: StateInactive, none: true},
	OpLoad:    {target: StateLoaded, none: true, from: []State{StateInactive}},
	OpStart:   {target: StateLaunched, none: true, from: []State{StateInactive, StateLoaded}},
	OpStop:    {target: StateLoaded, from: []State{StateLaunched}},
	OpUnload:  {target: StateInactive, from: []State{StateLaunched, StateLoaded}},
	OpDestroy: {target: StateNone, from: []State{StateLaunched, StateLoaded, StateInactive}},
}

// validFrom renders the valid previous states of r as the documentation's table does.
func (r opRule) validFrom() string {
	var parts []string
	if r.none {
		parts = append(parts, "none")
	}
	for _, s := range r.from {
		parts = append(parts, string(s))
	}
	return strings.Join(parts, " or ")
}

// Unit is a fleet unit as the registry holds it. Everything but DesiredState is immutable
// once submitted: to change a unit's file, destroy it and submit it again.
type Unit struct {
	// Name is the unit name, e.g. "web@1.service"; see [unit.ValidateName].
	Name string
	// File is the unit file. Units made by [New] or [Instantiate] never have a nil File.
	File *unitfile.File
	// Hash is File's hash ([unit.File.Hash]).
	Hash unitfile.Hash
	// Options is the [X-Fleet] section resolved for Name. Units made by [New] and
	// [Instantiate] always have valid options; a Unit built by hand may leave it nil, in
	// which case [Schedule] parses File itself and reports a unit with invalid options as
	// unschedulable.
	Options *unitfile.XFleet
	// DesiredState is what the user asked for; never [StateNone] for a stored unit.
	DesiredState State
}

// IsTemplate reports whether u is a template ("foo@.service"), which can only be inactive.
func (u *Unit) IsTemplate() bool { return unitfile.IsTemplate(u.Name) }

// IsGlobal reports whether u has valid options with Global=true.
func (u *Unit) IsGlobal() bool { return u.Options != nil && u.Options.Global }

// WithState returns a copy of u with the given desired state.
func (u *Unit) WithState(s State) *Unit {
	c := *u
	c.DesiredState = s
	return &c
}

// New makes the unit name from f with desired state inactive, as fleetctl submit does. It
// checks the name ([unit.ValidateName]) and the [X-Fleet] options ([unit.ParseXFleet],
// which also enforces the combinations fleet rejects). A nil f is an empty unit file.
func New(name string, f *unitfile.File) (*Unit, error) {
	if err := unitfile.ValidateName(name); err != nil {
		return nil, err
	}
	if f == nil {
		f = &unitfile.File{}
	}
	x, err := unitfile.ParseXFleet(f, name)
	if err != nil {
		return nil, fmt.Errorf("unit %s: %w", name, err)
	}
	return &Unit{Name: name, File: f, Hash: f.Hash(), Options: x, DesiredState: StateInactive}, nil
}

// ImmutableError is a submission of a different file under the name of an existing unit.
type ImmutableError struct {
	Name       string
	Have, Want unitfile.Hash
}

func (e *ImmutableError) Error() string {
	return fmt.Sprintf("unit %s already exists with hash %s; cannot submit a different file (hash %s): units are immutable, destroy it first",
		e.Name, e.Have, e.Want)
}

// Submit returns the unit that results from submitting f under name when cur (nil if none)
// is the unit already stored under that name:
//
//   - no unit yet: a new inactive unit ([New]);
//   - the same file (same hash): cur itself, unchanged, whatever its desired state;
//   - a different file: an [*ImmutableError] naming the unit and both hashes.
func Submit(cur *Unit, name string, f *unitfile.File) (*Unit, error) {
	if cur == nil {
		return New(name, f)
	}
	if cur.Name != name {
		return nil, fmt.Errorf("submit %s: stored unit is named %s", name, cur.Name)
	}
	if f == nil {
		f = &unitfile.File{}
	}
	if h := f.Hash(); h != cur.Hash {
		return nil, &ImmutableError{Name: name, Have: cur.Hash, Want: h}
	}
	return cur, nil
}

// TransitionError is an operation that is not valid from the unit's current desired state.
type TransitionError struct {
	Unit string // "" when the unit does not exist
	Op   Op
	From State
	// Reason says why, e.g. which states the operation is valid from.
	Reason string
}

func (e *TransitionError) Error() string {
	name := e.Unit
	if name == "" {
		name = "unit"
	}
	return fmt.Sprintf("cannot %s %s (desired state %s): %s", e.Op, name, e.From, e.Reason)
}

// Transition returns the desired state that op gives a unit whose stored form is cur (nil if
// it does not exist), following the documentation's command table (states.md):
//
//	submit   → inactive   valid from none
//	load     → loaded     valid from none or inactive (none: submit+load)
//	start    → launched   valid from none, inactive or loaded (none: submit+load+start)
//	stop     → loaded     valid from launched
//	unload   → inactive   valid from launched or loaded
//	destroy  → none       valid from launched, loaded or inactive
//
// An operation whose target is the unit's current desired state is accepted and changes
// nothing (fleetctl skips units already in the target state), and so does submit of an
// existing unit in any state ([Submit] checks that the file is the same); so load of a
// loaded unit, stop of a loaded one and unload of an inactive one are no-ops.
// Anything else outside the table, such as stop of an inactive unit or load of a launched
// one, is a [*TransitionError] listing the valid previous states. A template can only be
// inactive: load and start of one are errors. Creating a missing unit (load or start from
// none) needs its file; see [Apply].
func Transition(cur *Unit, op Op) (State, error) {
	r, ok := opRules[op]
	if !ok {
		return StateNone, fmt.Errorf("unknown unit operation %q", op)
	}
	from, name := StateNone, ""
	if cur != nil {
		from, name = cur.DesiredState, cur.Name
	}
	fail := func(reason string) (State, error) {
		return from, &TransitionError{Unit: name, Op: op, From: from, Reason: reason}
	}
	if cur != nil && cur.IsTemplate() && r.target.Active() {
		if i, ok := unitfile.Instantiate(cur.Name, "<instance>"); ok {
			return fail(fmt.Sprintf("cannot activate template; submit an instance such as %s", i))
		}
		return fail("cannot activate template")
	}
	switch {
	case cur == nil && r.none:
		return r.target, nil
	case cur == nil:
		return fail("unit does not exist")
	case from == r.target, op == OpSubmit:
		return from, nil // already there; submit of an existing unit changes no state
	}
	for _, s := range r.from {
		if s == from {
			return r.target, nil
		}
	}
	return fail(fmt.Sprintf("%s is valid from %s only", op, r.validFrom()))
}

// Apply performs op on the unit called name, stored as cur (nil if missing), as the API and
// fleetctl do: submit, load and start create a missing unit from f first; f, if given for
// an existing unit, must be the same file ([Submit]). It returns the stored unit afterwards,
// or nil once the unit is destroyed.
func Apply(cur *Unit, name string, f *unitfile.File, op Op) (*Unit, error) {
	if cur != nil && cur.Name != name {
		return nil, fmt.Errorf("%s %s: stored unit is named %s", op, name, cur.Name)
	}
	if cur == nil || f != nil {
		r, ok := opRules[op]
		switch {
		case !ok:
			return nil, fmt.Errorf("unknown unit operation %q", op)
		case cur == nil && !r.none:
			return nil, &TransitionError{Unit: name, Op: op, From: StateNone, Reason: "unit does not exist"}
		case cur == nil && f == nil:
			return nil, &TransitionError{Unit: name, Op: op, From: StateNone, Reason: "unit does not exist and no unit file was given"}
		}
		u, err := Submit(cur, name, f)
		if err != nil {
			return nil, err
		}
		cur = u
	}
	next, err := Transition(cur, op)
	if err != nil {
		return nil, err
	}
	if next == StateNone {
		return nil, nil
	}
	if next == cur.DesiredState {
		return cur, nil
	}
	return cur.WithState(next), nil
}

// Instantiate makes the inactive instance unit of template for instance ("web@.service",
// "1" → "web@1.service"), as fleetctl does when no instance file exists: the instance gets
// the template's file (shared, not copied: units are immutable) and its [X-Fleet] options
// are resolved again for the instance name, so %i and friends expand to the instance. The
// registry keeps no link from the instance to its template.
func Instantiate(template *Unit, instance string) (*Unit, error) {
	if template == nil {
		return nil, fmt.Errorf("instantiate %q: no template", instance)
	}
	name, ok := unitfile.Instantiate(template.Name, instance)
	if !ok {
		if !template.IsTemplate() {
			return nil, fmt.Errorf("instantiate %q: %s is not a template unit (want name@.type)", instance, template.Name)
		}
		return nil, fmt.Errorf("instantiate %s: empty instance name", template.Name)
	}
	return New(name, template.File)
}
