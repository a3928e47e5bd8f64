package units

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/sim"
)

// Simulate plays the plan in the simulator as scenarios/runner does (same seed, same order
// of actions, same simulator calls) and returns one State per phase, taken just before the
// next phase's instant (the last one at the scenario's end). An action the simulator refuses
// is an error: production would not be doing the same thing.
func Simulate(p *Plan) ([]State, error) {
	sc := p.Scenario
	s, err := sim.New(sim.Config{Seed: sc.Seed})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.Path, err)
	}
	var runErr error
	states := make([]State, len(p.Phases))
	for i, ph := range p.Phases {
		s.At(ph.At, "units-difftest-phase", func() {
			for _, a := range ph.Actions {
				if err := simulateAction(s, a); err != nil && runErr == nil {
					runErr = fmt.Errorf("%s: %s: the simulator refused it: %w", sc.Path, a, err)
					s.Stop()
					return
				}
			}
		})
		at := PhaseEnd(p, i)
		if i+1 < len(p.Phases) {
			at -= time.Nanosecond // before the next phase's actions
		}
		s.Barrier(at, func() { states[i] = SimState(s) })
	}
	if _, err := s.Run(sc.Duration); err != nil {
		return nil, fmt.Errorf("%s: %w", sc.Path, err)
	}
	if runErr != nil {
		return nil, runErr
	}
	return states, nil
}

// PhaseEnd is when phase i's state is taken: at the next phase's instant before its actions
// (the simulator's a nanosecond before it), or at the scenario's end for the last phase.
func PhaseEnd(p *Plan, i int) time.Duration {
	if i+1 < len(p.Phases) {
		return p.Phases[i+1].At
	}
	return p.Scenario.Duration
}

func simulateAction(s *sim.Sim, a Action) error {
	switch {
	case a.Join != nil:
		m := a.Join
		return s.AddMember(sim.MemberSpec{Name: m.Name, Kind: member.KindMachine, Labels: m.Metadata, HeartbeatPeriod: m.HeartbeatPeriod})
	case a.Fleetctl != nil:
		return s.Fleetctl(string(a.Fleetctl.Command), a.Fleetctl.Unit, a.Fleetctl.File)
	case a.Fail != nil:
		return s.Fail(a.Fail.Member, sim.FailMode(a.Fail.Mode))
	case a.Heal != nil:
		return s.Heal(a.Heal.Member)
	case a.Label != nil:
		return s.Label(a.Label.Member, a.Label.Set, a.Label.Remove)
	}
	return fmt.Errorf("empty action")
}

// SimState reads the simulator's units.
func SimState(s *sim.Sim) State {
	st := State{Units: map[string]Unit{}}
	for _, u := range s.Units() {
		st.Units[u.Name] = Unit{Desired: u.DesiredState, Machine: u.Machine, Running: append([]string(nil), u.Running...)}
	}
	st.normalize()
	return st
}
