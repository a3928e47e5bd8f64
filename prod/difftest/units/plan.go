package units

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios"
)

// Machine is a machine of the scenario.
type Machine struct {
	Line int
	Name string
	// Metadata is the machine's fleet metadata (single-valued, as fleet's is): the member's
	// labels with the first value of each metadata key over them, as scenarios/runner gives
	// the simulator.
	Metadata map[string]string
	// HeartbeatPeriod is the simulated agent's. The production agent beats every third of
	// the machine TTL whatever it says; only states at phase ends are compared, and no phase
	// of the library ends within a heartbeat of a machine's loss.
	HeartbeatPeriod time.Duration
	JoinAt          time.Duration
}

// Action is one thing a scenario does; exactly one field besides Line is set.
type Action struct {
	Line int // in the scenario file

	Join     *Machine                // a machine's agent starts for the first time
	Fleetctl *scenarios.FleetctlStep // submit, load, start, stop, unload or destroy a unit
	Fail     *scenarios.Fail         // a machine crashes or is partitioned
	Heal     *scenarios.MemberRef    // a crashed machine boots, or a partitioned one reconnects
	Label    *scenarios.LabelStep    // a machine's metadata changes
}

func (a Action) String() string {
	switch {
	case a.Join != nil:
		return "machine " + a.Join.Name + " joins"
	case a.Fleetctl != nil:
		return fmt.Sprintf("line %d: fleetctl %s %s", a.Line, a.Fleetctl.Command, a.Fleetctl.Unit)
	case a.Fail != nil:
		return fmt.Sprintf("line %d: %s %s", a.Line, a.Fail.Mode, a.Fail.Member)
	case a.Heal != nil:
		return fmt.Sprintf("line %d: heal %s", a.Line, a.Heal.Member)
	case a.Label != nil:
		return fmt.Sprintf("line %d: metadata of %s set %v remove %v", a.Line, a.Label.Member, a.Label.Set, a.Label.Remove)
	}
	return "nothing"
}

// Phase is every action of one instant, in the order the simulator runs them: machines
// joining, then timeline steps in file order.
type Phase struct {
	At      time.Duration
	Actions []Action
}

// Plan is a scenario as the ordered phases both sides perform.
type Plan struct {
	Scenario *scenarios.Scenario
	Machines []Machine
	Phases   []Phase
}

// Machine returns the plan's machine called name.
func (p *Plan) Machine(name string) (Machine, bool) {
	i := slices.IndexFunc(p.Machines, func(m Machine) bool { return m.Name == name })
	if i < 0 {
		return Machine{}, false
	}
	return p.Machines[i], true
}

// Describe lists a phase's actions for messages.
func (ph Phase) Describe() string {
	var s []string
	for _, a := range ph.Actions {
		s = append(s, a.String())
	}
	return strings.Join(s, "; ")
}

// NewPlan reads a scenario of fleet units into phases. It refuses what the production side is
// not told to do here, naming the file, the line and why: random faults, a network model, a
// hub capacity model, members that are clusters, and timeline actions other than fleetctl,
// fail, heal and label.
func NewPlan(sc *scenarios.Scenario) (*Plan, error) {
	switch {
	case sc.Faults != nil:
		return nil, fmt.Errorf("%s:%d: random faults are not supported: the comparison needs each fault at a stated time", sc.Path, sc.Faults.Line)
	case sc.Network != nil:
		return nil, fmt.Errorf("%s:%d: a network model is not supported: production's network is the test's loopback", sc.Path, sc.Network.Line)
	case sc.Hub != nil:
		return nil, fmt.Errorf("%s:%d: a hub capacity model is not supported: production's capacity is the test machine's", sc.Path, sc.Hub.Line)
	}
	p := &Plan{Scenario: sc}
	byTime := map[time.Duration][]Action{}
	for _, g := range sc.Members {
		if g.Kind != member.KindMachine {
			return nil, fmt.Errorf("%s:%d: members of kind %s are not supported: this test runs machines only (prod/difftest compares clusters)", sc.Path, g.Line, g.Kind)
		}
		md := maps.Clone(g.Labels)
		if md == nil {
			md = map[string]string{}
		}
		for k, vs := range g.Metadata {
			if len(vs) > 0 {
				md[k] = vs[0]
			}
		}
		for _, name := range g.Names {
			m := Machine{Line: g.Line, Name: name, Metadata: maps.Clone(md), HeartbeatPeriod: g.HeartbeatPeriod, JoinAt: g.JoinAt}
			p.Machines = append(p.Machines, m)
			byTime[g.JoinAt] = append(byTime[g.JoinAt], Action{Line: g.Line, Join: &m})
		}
	}
	for i := range sc.Timeline {
		st := &sc.Timeline[i]
		a := Action{Line: st.Line}
		switch st.Action {
		case scenarios.ActionFleetctl:
			a.Fleetctl = st.Fleetctl
		case scenarios.ActionFail:
			a.Fail = st.Fail
		case scenarios.ActionHeal:
			a.Heal = st.Heal
		case scenarios.ActionLabel:
			a.Label = st.Label
		default:
			return nil, fmt.Errorf("%s:%d: timeline action %s is not supported on machines", sc.Path, st.Line, st.Action)
		}
		byTime[st.At] = append(byTime[st.At], a)
	}
	for _, t := range slices.Sorted(maps.Keys(byTime)) {
		if t > sc.Duration {
			continue // never happens in the simulator either
		}
		p.Phases = append(p.Phases, Phase{At: t, Actions: byTime[t]})
	}
	if len(p.Phases) == 0 {
		return nil, fmt.Errorf("%s: nothing happens before the end (%s): no phase to compare", sc.Path, sc.Duration)
	}
	return p, nil
}
