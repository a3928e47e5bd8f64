package units

import "github.com/fleetsim/fleetsim/model/unitfile"

// ApplyCommand is one fleetctl command on the registry, as fleetctl issues it: Apply, where
// a load or start of an instance that was never submitted (foo@1.service) takes its file
// from the stored template (foo@.service), as fleetctl builds an instance from it. lookup
// returns the stored unit of a name (nil if none). The simulator's fleetctl steps and the
// scenario validator, which walks the same steps ahead of a run, both call it, so they
// refuse the same steps.
func ApplyCommand(lookup func(name string) *Unit, name string, f *unitfile.File, op Op) (*Unit, error) {
	cur := lookup(name)
	if cur == nil && f == nil && op != OpSubmit {
		if tmpl, ok := unitfile.TemplateOf(name); ok {
			if t := lookup(tmpl); t != nil {
				inst, err := Instantiate(t, unitfile.SplitName(name).Instance)
				if err != nil {
					return nil, &InstanceError{Name: name, Template: tmpl, Err: err}
				}
				f = inst.File
			}
		}
	}
	return Apply(cur, name, f, op)
}

// InstanceError is an instance fleetctl could not build from its stored template.
type InstanceError struct {
	Name, Template string
	Err            error
}

func (e *InstanceError) Error() string { return e.Err.Error() }

func (e *InstanceError) Unwrap() error { return e.Err }
