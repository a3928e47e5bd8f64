package scenarios

import (
	"errors"
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// checkFleetctl refuses, at validation, every fleetctl step that the run would refuse on its
// own, whatever happened before it: an invalid unit name, a unit file that does not parse,
// invalid [X-Fleet] options or combinations, and loading or starting a template. It returns
// the parsed unit file (nil when the step has none). What depends on the steps before it
// (stopping a unit never submitted, submitting another file under a name in use) is
// checked once the timeline is in order, by (*fleetctlTable).step.
func (p *parser) checkFleetctl(g *fields, f *FleetctlStep) (*unitfile.File, error) {
	unitNode := g.get("unit")
	if err := unitfile.ValidateName(f.Unit); err != nil {
		var ne *unitfile.NameError
		reason := err.Error()
		if errors.As(err, &ne) {
			reason = ne.Reason
		}
		return nil, p.errorf(unitNode.Line, g.child("unit"), "invalid unit name %s: %s", quoteShort(f.Unit), reason)
	}
	if unitfile.IsTemplate(f.Unit) && (f.Command == FleetctlLoad || f.Command == FleetctlStart) {
		inst, _ := unitfile.Instantiate(f.Unit, "<instance>")
		return nil, p.errorf(unitNode.Line, g.child("unit"), "cannot %s template %s: a template can only be submitted; %s an instance such as %s", f.Command, f.Unit, f.Command, inst)
	}
	if f.File == "" {
		return nil, nil
	}
	fileNode := g.get("file")
	parsed, err := unitfile.Parse(f.File)
	if err != nil {
		var pe *unitfile.ParseError
		if errors.As(err, &pe) {
			return nil, p.errorf(p.lineInScalar(fileNode, pe.Line), g.child("file"), "unit file line %d: %s", pe.Line, pe.Reason)
		}
		return nil, p.errorf(fileNode.Line, g.child("file"), "%v", err)
	}
	if _, err := units.New(f.Unit, parsed); err != nil {
		var oe *unitfile.OptionError
		if errors.As(err, &oe) {
			return nil, p.errorf(fileNode.Line, g.child("file"), "%s", oe.Error())
		}
		return nil, p.errorf(fileNode.Line, g.child("file"), "%v", err)
	}
	return parsed, nil
}

// lineInScalar maps a 1-based line of a string scalar's value to a line of the file: exact
// for a literal block (`file: |`), the scalar's own line otherwise.
func (p *parser) lineInScalar(n *yaml.Node, rel int) int {
	if n.Style&yaml.LiteralStyle != 0 {
		return n.Line + rel
	}
	return n.Line
}

// quoteShort quotes s for a message, cutting a long value down so a hostile name cannot
// flood the terminal.
func quoteShort(s string) string {
	const most = 80
	if len(s) <= most {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:most], len(s))
}

// fleetctlStep is what the timeline check needs of a fleetctl step: the parsed unit file and
// the lines of its keys.
type fleetctlStep struct {
	file                        *unitfile.File
	field                       string
	line, commandLine, fileLine int
}

// fleetctlTable is the fleet registry's desired-state table as the run's fleetctl steps
// leave it, built statically in timeline order with the run's own rules (units.Apply, and
// units.Instantiate for an instance of a stored template, as sim.Fleetctl does): so Parse
// refuses every fleetctl step the run would stop at (exit 2) because of the steps before
// it. Nothing but fleetctl steps changes the table: faults, hub restarts and machine loss
// change where units run, not what the user asked for.
type fleetctlTable struct {
	units map[string]*units.Unit
	// last names the last step on each unit, and created the one that created it, for
	// messages.
	last, created map[string]string
}

func newFleetctlTable() *fleetctlTable {
	return &fleetctlTable{units: map[string]*units.Unit{}, last: map[string]string{}, created: map[string]string{}}
}

// step applies one fleetctl step at its time, or returns the error the run would stop with,
// at the key that causes it: the file for a different file under a name in use, the unit
// for a unit that does not exist, the command for a transition the unit's state forbids.
func (t *fleetctlTable) step(p *parser, st *Step, fs *fleetctlStep) error {
	f := st.Fleetctl
	cur := t.units[f.Unit]
	next, err := units.ApplyCommand(func(n string) *units.Unit { return t.units[n] }, f.Unit, fs.file, units.Op(f.Command))
	if err != nil {
		last := t.last[f.Unit]
		var te *units.TransitionError
		var ie *units.ImmutableError
		var inst *units.InstanceError
		switch {
		case errors.As(err, &inst):
			return p.errorf(fs.line, fs.field+".unit", "at %s: %v", st.At, err)
		case errors.As(err, &ie):
			return p.errorf(fs.fileLine, fs.field+".file", "at %s: %v; %s submitted it", st.At, err, t.created[f.Unit])
		case errors.As(err, &te) && te.From == units.StateNone && last != "":
			return p.errorf(fs.line, fs.field+".unit", "at %s: %v; %s destroyed it", st.At, err, last)
		case errors.As(err, &te) && te.From == units.StateNone:
			return p.errorf(fs.line, fs.field+".unit", "at %s: %v; no earlier step submits it", st.At, err)
		case cur != nil && last != "":
			return p.errorf(fs.commandLine, fs.field+".command", "at %s: %v; %s left it %s", st.At, err, last, cur.DesiredState)
		default:
			return p.errorf(fs.commandLine, fs.field+".command", "at %s: %v", st.At, err)
		}
	}
	here := fmt.Sprintf("%s (line %d, at %s)", st.Field, st.Line, st.At)
	switch {
	case next == nil:
		delete(t.units, f.Unit)
	case cur == nil:
		t.units[f.Unit], t.created[f.Unit] = next, here
	default:
		t.units[f.Unit] = next
	}
	t.last[f.Unit] = here
	return nil
}
