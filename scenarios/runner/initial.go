package runner

import (
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
)

// seed installs the scenario's initial bindings (`initial:`) before anything runs.
func (r *run) seed() error {
	in := r.sc.Initial
	if in == nil {
		return nil
	}
	for _, b := range in.Bindings {
		bs := make([]sim.InitialBinding, 0, len(b.Clusters))
		for _, c := range b.Clusters {
			bs = append(bs, sim.InitialBinding{Cluster: c})
		}
		if err := r.s.SeedBindings(b.Placement, bs); err != nil {
			return &Error{Path: r.sc.Path, Line: b.Line, Reason: err.Error()}
		}
	}
	return nil
}

// SeedInitial installs a scenario's initial bindings in a simulator that has not run yet, for
// tools that drive the simulator themselves.
func SeedInitial(sc *scenarios.Scenario, s *sim.Sim) error {
	return (&run{sc: sc, s: s}).seed()
}
