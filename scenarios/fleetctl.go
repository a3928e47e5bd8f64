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
// invalid [X-Fleet] options or combinations, and loading or starting a template. What
// depends on the state of the run (stopping a unit that is not running, submitting another
// file under a name in use) is still found when the step runs.
func (p *parser) checkFleetctl(g *fields, f *FleetctlStep) error {
	unitNode := g.get("unit")
	if err := unitfile.ValidateName(f.Unit); err != nil {
		var ne *unitfile.NameError
		reason := err.Error()
		if errors.As(err, &ne) {
			reason = ne.Reason
		}
		return p.errorf(unitNode.Line, g.child("unit"), "invalid unit name %s: %s", quoteShort(f.Unit), reason)
	}
	if unitfile.IsTemplate(f.Unit) && (f.Command == FleetctlLoad || f.Command == FleetctlStart) {
		inst, _ := unitfile.Instantiate(f.Unit, "<instance>")
		return p.errorf(unitNode.Line, g.child("unit"), "cannot %s template %s: a template can only be submitted; %s an instance such as %s", f.Command, f.Unit, f.Command, inst)
	}
	if f.File == "" {
		return nil
	}
	fileNode := g.get("file")
	parsed, err := unitfile.Parse(f.File)
	if err != nil {
		var pe *unitfile.ParseError
		if errors.As(err, &pe) {
			return p.errorf(p.lineInScalar(fileNode, pe.Line), g.child("file"), "unit file line %d: %s", pe.Line, pe.Reason)
		}
		return p.errorf(fileNode.Line, g.child("file"), "%v", err)
	}
	if _, err := units.New(f.Unit, parsed); err != nil {
		var oe *unitfile.OptionError
		if errors.As(err, &oe) {
			return p.errorf(fileNode.Line, g.child("file"), "%s", oe.Error())
		}
		return p.errorf(fileNode.Line, g.child("file"), "%v", err)
	}
	return nil
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
