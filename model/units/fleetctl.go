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
		inst, err := InstanceFile(lookup, name)
		if err != nil {
			return nil, err
		}
		f = inst
	}
	return Apply(cur, name, f, op)
}

// InstanceFile returns the file fleetctl gives an instance that is not stored and has no
// file of its own (foo@1.service): its stored template's (foo@.service), checked as the
// instance's ([Instantiate]). It returns nil, nil when name is not an instance or its
// template is not stored; an *InstanceError when the template's file does not make a valid
// instance. `fleetctl` (cmd/fleetctl, over the fleet API) and the simulator's fleetctl steps
// (ApplyCommand) share it; fleetctl then also looks for the template's file next to the
// instance's argument, as upstream does.
func InstanceFile(lookup func(name string) *Unit, name string) (*unitfile.File, error) {
	tmpl, ok := unitfile.TemplateOf(name)
	if !ok {
		return nil, nil
	}
	t := lookup(tmpl)
	if t == nil {
		return nil, nil
	}
	inst, err := Instantiate(t, unitfile.SplitName(name).Instance)
	if err != nil {
		return nil, &InstanceError{Name: name, Template: tmpl, Err: err}
	}
	return inst.File, nil
}

// InstanceError is an instance fleetctl could not build from its stored template.
type InstanceError struct {
	Name, Template string
	Err            error
}

func (e *InstanceError) Error() string { return e.Err.Error() }

func (e *InstanceError) Unwrap() error { return e.Err }
