package sim

import (
	"fmt"
	"maps"
	"time"

	"github.com/fleetsim/fleetsim/agentsystemd"
	"github.com/fleetsim/fleetsim/model/invariants"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// fleetRegistry is CoreOS fleet's registry: the units, where each is scheduled, the engine
// lease, and the unit states each machine's agent published.
type fleetRegistry struct {
	units     map[string]*units.Unit
	target    map[string]string // unit → machine ("" or absent: unscheduled)
	lease     units.Lease
	reported  map[string][]agentsystemd.UnitState // machine → its published states
	engineDue time.Duration                       // pending engine reconcile, 0 if none
	// rounds keeps the engine's decision between reconciles, so a lost machine or a changed
	// unit reschedules only what it affects (each round is units.PlanRound's).
	rounds     units.Rounds
	duplicates map[string]string // unit → machines running it, for change detection
	// agentPending counts each machine agent's queued reconciles; agentSeen is the metadata
	// each agent last reconciled with. Both only feed the unit invariants (Settled).
	agentPending map[string]int
	agentSeen    map[string]map[string]string
	// memory is each machine agent's record of what it acted on (agentsystemd.Memory),
	// together with the systemd it was made against: a crashed machine boots with a new
	// systemd and a new agent, which remembers nothing.
	memory map[string]agentMemory
}

type agentMemory struct {
	sd  *agentsystemd.SimSystemd
	mem *agentsystemd.Memory
}

func newFleetRegistry() fleetRegistry {
	return fleetRegistry{units: map[string]*units.Unit{}, target: map[string]string{}, reported: map[string][]agentsystemd.UnitState{}, duplicates: map[string]string{},
		agentPending: map[string]int{}, agentSeen: map[string]map[string]string{}, memory: map[string]agentMemory{}}
}

// engineHolder is the name of the simulated engine; every hub restart starts a new term.
const engineHolder = "engine"

// Fleetctl runs a fleetctl-like command on a unit: submit, load, start, stop, unload or
// destroy. fileText is the unit file (required for submit; given to load or start, it
// submits the unit first, as fleetctl does).
func (s *Sim) Fleetctl(command, name, fileText string) error {
	var f *unitfile.File
	if fileText != "" {
		parsed, err := unitfile.Parse(fileText)
		if err != nil {
			return fmt.Errorf("unit %s: %w", name, err)
		}
		f = parsed
	}
	fr := &s.fleet
	next, err := units.ApplyCommand(func(n string) *units.Unit { return fr.units[n] }, name, f, units.Op(command))
	if err != nil {
		return err
	}
	if next == nil {
		delete(fr.units, name)
		s.Record("unit-destroyed", name, "")
	} else {
		fr.units[name] = next
		s.Record("unit-"+command, name, "desired state "+string(next.DesiredState))
	}
	s.queueEngine(s.cfg.HubDelay)
	// Agents watch the registry: a desired-state change reaches them without a new schedule.
	for _, m := range s.machineMembers() {
		s.queueMachineAgent(m.Name, s.cfg.AgentSyncDelay)
	}
	return nil
}

// queueEngine schedules an engine reconcile after d (once; a pending earlier one covers it).
func (s *Sim) queueEngine(d time.Duration) {
	fr := &s.fleet
	if len(fr.units) == 0 && len(fr.target) == 0 {
		return
	}
	due := s.now + d
	if fr.engineDue != 0 && fr.engineDue <= due {
		return
	}
	fr.engineDue = due
	epoch := s.hub.epoch
	s.atSubject(due, "engine-reconcile", "", func() {
		if fr.engineDue != due || epoch != s.hub.epoch || !s.hub.up {
			return // superseded, or lost with a hub restart
		}
		fr.engineDue = 0
		s.reconcileEngine()
	})
}

func (s *Sim) machineMembers() []*member.Member {
	var ms []*member.Member
	for _, n := range s.store.MemberClusterNames() {
		if m := s.store.members[n].Member; m.Kind == member.KindMachine {
			ms = append(ms, m)
		}
	}
	return ms
}

func (s *Sim) jobs() []units.Job {
	fr := &s.fleet
	var jobs []units.Job
	for _, n := range sortedKeys(fr.units) {
		jobs = append(jobs, units.Job{Unit: fr.units[n], Machine: fr.target[n]})
	}
	return jobs
}

// reconcileEngine is fleet's engine: it holds the engine lease and makes the shared engine
// round (units.Rounds, as `fleet hub` does), keeping only the I/O: the registry it reads,
// the writes and the wake-ups. Its writes cross the network to the registry and are fenced
// there by the lease token, so a decision made under a lease that has since changed hands is
// refused.
func (s *Sim) reconcileEngine() {
	fr := &s.fleet
	now := s.Now()
	// Each hub term runs a new engine instance: after a restart it must win the lease anew.
	holder := fmt.Sprintf("%s-%d", engineHolder, s.hub.epoch)
	lease, ok := units.Claim(&fr.lease, holder, now, s.cfg.EngineLeaseTTL)
	if !ok {
		s.queueEngine(fr.lease.Expires.Sub(now) + time.Millisecond) // wait for the old term's lease
		return
	}
	if lease.Holder != fr.lease.Holder {
		s.Record("engine-lease-acquired", holder, fmt.Sprintf("token %d", lease.Token))
	}
	fr.lease = lease
	var machines []units.MachinePresence
	for _, m := range s.machineMembers() {
		machines = append(machines, units.PresenceOfMember(m))
	}
	round := fr.rounds.Decide(units.RoundInput{Now: now, MachineTTL: s.cfg.MachineTTL, Machines: machines, Units: s.jobs(), Lease: lease})
	plan := round.Plan
	for _, u := range plan.Unschedulable {
		s.Record("unit-unschedulable", u.Unit, u.Reason)
	}
	if !plan.Empty() {
		s.atSubject(s.now+s.cfg.Network.Delay.Mean, "engine-write", "", func() { s.writeSchedule(plan) })
	}
	// Unit states expire with their machine (fleet keeps them under the machine's TTL).
	for _, id := range round.Lost {
		delete(fr.reported, id)
	}
	// Look again when the next live machine would expire: its units then move. The
	// millisecond after is this simulator's timer slack, kept so traces stay as they were.
	if !round.LookAgain.IsZero() {
		s.queueEngine(round.LookAgain.Sub(now) + time.Millisecond)
	}
}

// writeSchedule applies an engine plan at the registry, if its fence still holds.
func (s *Sim) writeSchedule(plan units.Plan) {
	fr := &s.fleet
	if err := units.Admit(plan.Fence, fr.lease); err != nil {
		s.Record("engine-write-rejected", "", err.Error())
		return
	}
	touched := map[string]bool{}
	for _, a := range plan.Unschedule {
		if fr.target[a.Unit] == a.Machine {
			delete(fr.target, a.Unit)
		}
		touched[a.Machine] = true
		s.Record("unit-unscheduled", a.Unit, fmt.Sprintf("from %s: %s", a.Machine, a.Reason))
	}
	for _, a := range plan.Schedule {
		fr.target[a.Unit] = a.Machine
		touched[a.Machine] = true
		s.Record("unit-scheduled", a.Unit, fmt.Sprintf("to %s: %s", a.Machine, a.Reason))
	}
	// Agents watch the registry: every live machine reconciles (global units may move too).
	for _, m := range s.machineMembers() {
		s.queueMachineAgent(m.Name, s.cfg.AgentSyncDelay)
	}
}

// queueMachineAgent has a machine's agent reconcile after d.
func (s *Sim) queueMachineAgent(machine string, d time.Duration) {
	s.fleet.agentPending[machine]++
	s.atSubject(s.now+d, "machine-agent", machine, func() {
		s.fleet.agentPending[machine]--
		s.reconcileMachineAgent(machine)
	})
}

// reconcileMachineAgent is the fleet agent on one machine: the desired units (those
// scheduled here, and global units that run here; agentsystemd.DesiredOn, shared with `fleet
// agent`) against what its systemd reports, through the shared agent decision; then it
// publishes the unit states.
func (s *Sim) reconcileMachineAgent(machine string) {
	r := s.store.members[machine]
	if r == nil || r.agent == nil || r.agent.systemd == nil {
		return
	}
	a := r.agent
	if a.crashed || a.partitioned || !a.joined {
		return // cannot see the registry; it reconciles again when it heals
	}
	fr := &s.fleet
	fr.agentSeen[machine] = maps.Clone(r.Member.Labels)
	machines := units.MachinesFromMembers(s.machineMembers(), s.Now(), s.cfg.MachineTTL)
	desired := agentsystemd.DesiredOn(machine, machines, s.jobs())
	sd := a.systemd
	am := fr.memory[machine]
	if am.sd != sd {
		am = agentMemory{sd: sd, mem: &agentsystemd.Memory{}}
		fr.memory[machine] = am
	}
	_, done, err := am.mem.Reconcile(desired, sd)
	for _, t := range done {
		s.Record("systemd-"+t.Kind.String(), machine, t.Unit)
	}
	if err != nil {
		s.Record("systemd-task-failed", machine, err.Error())
	}
	states := am.mem.ReportStates(sd.CurrentUnits(), machine)
	s.checkDuplicates()
	s.sendMessage(a, "unit-states", func() { fr.reported[machine] = states })
}

// checkDuplicates records units running on more than one machine, and when such a duplicate
// ends. It looks at what every machine's systemd really runs, not at the registry: a
// partitioned machine keeps running its units while they are rescheduled, and the registry
// cannot see it.
func (s *Sim) checkDuplicates() {
	fr := &s.fleet
	var truth []units.ReportedState
	for _, m := range s.machineMembers() {
		a := s.store.members[m.Name].agent
		if a == nil || a.systemd == nil {
			continue
		}
		for _, st := range agentsystemd.ReportStates(a.systemd.CurrentUnits(), m.Name) {
			truth = append(truth, units.ReportedState{Unit: st.Name, Machine: m.Name, Hash: st.Hash, LoadState: st.LoadState, ActiveState: st.ActiveState, SubState: st.SubState})
		}
	}
	dups := units.Duplicates(s.jobs(), truth)
	seen := map[string]bool{}
	for _, d := range dups {
		ms := fmt.Sprint(d.Machines)
		seen[d.Unit] = true
		if fr.duplicates[d.Unit] != ms {
			fr.duplicates[d.Unit] = ms
			s.Record("unit-duplicate", d.Unit, "running on "+ms+", scheduled to "+d.Scheduled)
		}
	}
	for _, u := range sortedKeys(fr.duplicates) {
		if !seen[u] {
			delete(fr.duplicates, u)
			s.Record("unit-duplicate-ended", u, "")
		}
	}
}

// UnitStatus is a fleet unit as `fleetctl list-units` shows it, plus where it really runs.
type UnitStatus struct {
	Name         string `json:"name"`
	DesiredState string `json:"desiredState"`
	// Machine is where the engine scheduled it ("" when unscheduled or global).
	Machine string `json:"machine,omitempty"`
	// State is what the agent of Machine last published (fleetctl's view): the state it acted
	// on, inactive, loaded or launched (systemd's view is in Running). For a global unit,
	// launched if any machine published it launched.
	State string `json:"state"`
	// Running lists the machines whose systemd really runs the unit: several for a global
	// unit, or for a duplicate left on a partitioned machine, which the registry cannot see.
	Running []string `json:"running"`
	Global  bool     `json:"global,omitempty"`
}

// Unit returns one unit's status.
func (s *Sim) Unit(name string) (UnitStatus, bool) {
	fr := &s.fleet
	u := fr.units[name]
	if u == nil {
		return UnitStatus{}, false
	}
	st := UnitStatus{Name: name, DesiredState: string(u.DesiredState), Machine: fr.target[name], State: "inactive", Running: []string{}, Global: u.IsGlobal()}
	for _, m := range sortedKeys(fr.reported) {
		for _, r := range fr.reported[m] {
			if r.Name == name && (m == st.Machine || (st.Global && st.State != string(agentsystemd.CurrentLaunched))) {
				st.State = string(r.State())
			}
		}
	}
	for _, m := range s.machineMembers() {
		a := s.store.members[m.Name].agent
		if a == nil || a.systemd == nil {
			continue
		}
		if c, ok := a.systemd.Unit(name); ok && c.State() == agentsystemd.CurrentLaunched {
			st.Running = append(st.Running, m.Name)
		}
	}
	return st, true
}

// Units returns every unit's status, by name.
func (s *Sim) Units() []UnitStatus {
	var out []UnitStatus
	for _, n := range sortedKeys(s.fleet.units) {
		st, _ := s.Unit(n)
		out = append(out, st)
	}
	return out
}

// unitView is the simulator's registry and machines as the unit invariants read them
// (invariants.UnitReader); Running is what each machine's systemd really runs.
type unitView struct{ s *Sim }

func (v unitView) Jobs() []units.Job { return v.s.jobs() }

func (v unitView) UnitMachines() []invariants.UnitMachine {
	s, fr := v.s, &v.s.fleet
	var out []invariants.UnitMachine
	for _, m := range s.machineMembers() {
		a := s.store.members[m.Name].agent
		if a == nil || a.systemd == nil {
			continue
		}
		um := invariants.UnitMachine{ID: m.Name, Metadata: m.Labels}
		for _, c := range a.systemd.CurrentUnits() {
			if c.State() == agentsystemd.CurrentLaunched {
				um.Running = append(um.Running, c.Name)
			}
		}
		seen, ok := fr.agentSeen[m.Name]
		// Connected also needs the machine's presence alive for the engine (a heartbeat
		// within the TTL): once it lapses, the engine may move the machine's units, as for
		// a lost machine, even if the agent is back before the next heartbeat.
		um.Connected = !a.crashed && !a.partitioned && a.joined && m.Agent.Present && s.Now().Sub(m.Agent.LastHeartbeat) < s.cfg.MachineTTL
		um.Settled = !a.crashed && !a.partitioned && a.joined && fr.agentPending[m.Name] == 0 && ok && maps.Equal(seen, m.Labels)
		out = append(out, um)
	}
	return out
}
