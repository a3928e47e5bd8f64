package difftest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios"
)

// Member is a member that joins the fleet: a MemberCluster with labels and taints.
type Member struct {
	Name   string
	Labels map[string]string
	Taints []member.Taint
	// HeartbeatPeriod is the simulated agent's; the production side's stand-in agents
	// heartbeat every second whatever it says, since only the settled state is compared.
	HeartbeatPeriod time.Duration
}

// Action is one thing a scenario does to the fleet; exactly one field is set.
type Action struct {
	Line int // in the scenario file

	Join     *Member                 // a member of `members` joins
	Apply    []scenarios.Manifest    // create or update hub objects, in order
	Delete   *scenarios.ObjectRef    // delete a hub object (a MemberCluster: the member leaves)
	Label    *scenarios.LabelStep    // set and remove member labels
	Taint    *scenarios.TaintStep    // add a taint
	Untaint  *scenarios.UntaintStep  // remove the taints with a key
	Workload *scenarios.WorkloadStep // how members play a workload from now on
	Fail     *scenarios.Fail         // a member's agent stops (crash or partition)
	Heal     *scenarios.MemberRef    // a failed member's agent runs again
	Approve  *scenarios.ObjectRef    // approve a ClusterApprovalRequest
	// MemberEdit changes an object on a member cluster: only real agents on member API
	// servers can play it (Plan.MemberEdits).
	MemberEdit *scenarios.MemberEditStep
	// Partition cuts members off the hub (each as a Fail in partition mode); PartitionEnd,
	// `for` later, heals the members that partition picked.
	Partition    *scenarios.PartitionStep
	PartitionEnd bool

	// Group, on a step of a group of members (a name pattern or a label selector, whose
	// member field is then ""), picks them when the step runs, from the members and labels
	// present then. Simulate picks them in the simulator, as scenarios/runner does, and
	// records whom in Picked (shared with a partition's PartitionEnd); the production side
	// plays the action on the same members in the same order.
	Group  *scenarios.MemberSelector
	Picked *[]string
}

// On is the action on one member: a copy of a member step naming member.
func (a Action) On(member string) Action {
	out := Action{Line: a.Line}
	switch {
	case a.Label != nil:
		c := *a.Label
		c.Member, out.Label = member, &c
	case a.Taint != nil:
		c := *a.Taint
		c.Member, out.Taint = member, &c
	case a.Untaint != nil:
		c := *a.Untaint
		c.Member, out.Untaint = member, &c
	case a.Workload != nil:
		c := *a.Workload
		c.Member, out.Workload = member, &c
	case a.Fail != nil:
		c := *a.Fail
		c.Member, out.Fail = member, &c
	case a.Heal != nil:
		out.Heal = &scenarios.MemberRef{Member: member}
	case a.MemberEdit != nil:
		c := *a.MemberEdit
		c.Member, out.MemberEdit = member, &c
	case a.Partition != nil:
		out.Fail = &scenarios.Fail{Member: member, Mode: scenarios.Partition}
	case a.PartitionEnd:
		out.Heal = &scenarios.MemberRef{Member: member}
	}
	return out
}

// Members is whom a group step or partition acts on, in order: what Simulate picked (NewPlan
// gives every partition and group step a Picked), nil for any other action.
func (a Action) Members() []string {
	if a.Picked == nil {
		return nil
	}
	return *a.Picked
}

func (a Action) String() string {
	switch {
	case a.Join != nil:
		return "member " + a.Join.Name + " joins"
	case a.Apply != nil:
		var names []string
		for _, m := range a.Apply {
			names = append(names, m.Object.GetKind()+" "+m.Object.GetName())
		}
		return fmt.Sprintf("line %d: apply %v", a.Line, names)
	case a.Delete != nil:
		return fmt.Sprintf("line %d: delete %s %s", a.Line, a.Delete.Kind, a.Delete.Name)
	case a.Label != nil:
		return fmt.Sprintf("line %d: label %s set %v remove %v", a.Line, a.who(a.Label.Member), a.Label.Set, a.Label.Remove)
	case a.Taint != nil:
		return fmt.Sprintf("line %d: taint %s with %s", a.Line, a.who(a.Taint.Member), a.Taint.Taint)
	case a.Untaint != nil:
		return fmt.Sprintf("line %d: untaint %s key %s", a.Line, a.who(a.Untaint.Member), a.Untaint.Key)
	case a.Workload != nil:
		return fmt.Sprintf("line %d: workload %s/%s on %s is %s", a.Line, a.Workload.Kind, a.Workload.Name, a.who(a.Workload.Member), a.Workload.Behavior)
	case a.Fail != nil:
		return fmt.Sprintf("line %d: %s fails (%s)", a.Line, a.who(a.Fail.Member), a.Fail.Mode)
	case a.Heal != nil:
		return fmt.Sprintf("line %d: %s heals", a.Line, a.who(a.Heal.Member))
	case a.Approve != nil:
		return fmt.Sprintf("line %d: approve %s", a.Line, a.Approve.Name)
	case a.MemberEdit != nil:
		return fmt.Sprintf("line %d: edit %s %s on %s", a.Line, a.MemberEdit.Object.GetKind(), a.MemberEdit.Object.GetName(), a.who(a.MemberEdit.Member))
	case a.Partition != nil:
		return fmt.Sprintf("line %d: partition %s for %s", a.Line, a.who(a.Partition.Member), a.Partition.For)
	case a.PartitionEnd:
		return fmt.Sprintf("line %d: the partition of %v ends", a.Line, a.Members())
	}
	return "nothing"
}

// who is the member a step names, or its group.
func (a Action) who(member string) string {
	if a.Group != nil {
		return a.Group.String()
	}
	return member
}

// Phase is every action of one instant of simulated time, in the order the simulator runs
// them: members joining then timeline steps in file order.
type Phase struct {
	At      time.Duration
	Actions []Action
}

// Plan is a scenario as the ordered phases both sides perform.
type Plan struct {
	Scenario *scenarios.Scenario
	Phases   []Phase
	// MemberEdits: the scenario edits objects on member clusters (drift, takeover), which
	// stand-in agents, having no member cluster, cannot play.
	MemberEdits bool
}

// NewPlan reads a scenario into phases. It refuses scenarios whose outcome the production
// side cannot reproduce with a real hub and its agents: random faults, a network model,
// machines (prod/difftest/units plays those), member properties or resources (the agents
// report none), and the actions skew, restartHub and fleetctl.
func NewPlan(sc *scenarios.Scenario) (*Plan, error) {
	if sc.Faults != nil {
		return nil, fmt.Errorf("%s: random faults are not supported", sc.Path)
	}
	if sc.Network != nil {
		return nil, fmt.Errorf("%s: a network model is not supported", sc.Path)
	}
	byTime := map[time.Duration][]Action{}
	for _, g := range sc.Members {
		switch {
		case g.Kind == member.KindMachine:
			return nil, fmt.Errorf("%s:%d: machines are not supported", sc.Path, g.Line)
		case len(g.Properties) > 0:
			return nil, fmt.Errorf("%s:%d: member properties are not supported (stand-in agents report none)", sc.Path, g.Line)
		case len(g.Resources.Capacity) > 0 || len(g.Resources.Allocatable) > 0 || len(g.Resources.Available) > 0:
			return nil, fmt.Errorf("%s:%d: member resources are not supported (stand-in agents report none)", sc.Path, g.Line)
		}
		for _, name := range g.Names {
			m := &Member{Name: name, Labels: maps.Clone(g.Labels), Taints: slices.Clone(g.Taints), HeartbeatPeriod: g.HeartbeatPeriod}
			byTime[g.JoinAt] = append(byTime[g.JoinAt], Action{Line: g.Line, Join: m})
		}
	}
	for i := range sc.Timeline {
		st := &sc.Timeline[i]
		a := Action{Line: st.Line}
		switch st.Action {
		case scenarios.ActionApply:
			a.Apply = st.Apply
		case scenarios.ActionDelete:
			a.Delete = st.Delete
		case scenarios.ActionLabel:
			a.Label = st.Label
		case scenarios.ActionTaint:
			a.Taint = st.Taint
		case scenarios.ActionUntaint:
			a.Untaint = st.Untaint
		case scenarios.ActionWorkload:
			a.Workload = st.Workload
		case scenarios.ActionFail:
			a.Fail = st.Fail
		case scenarios.ActionHeal:
			a.Heal = st.Heal
		case scenarios.ActionApprove:
			a.Approve = st.Approve
		case scenarios.ActionMemberEdit:
			a.MemberEdit = st.MemberEdit
		case scenarios.ActionPartition:
			a.Partition = st.Partition
		default:
			return nil, fmt.Errorf("%s:%d: timeline action %s is not supported", sc.Path, st.Line, st.Action)
		}
		if st.Select != nil {
			a.Group, a.Picked = st.Select, new([]string)
		}
		if a.Partition != nil && a.Picked == nil {
			a.Picked = &[]string{a.Partition.Member}
		}
		byTime[st.At] = append(byTime[st.At], a)
		if a.Partition != nil && a.Partition.For > 0 {
			end := st.At + a.Partition.For
			byTime[end] = append(byTime[end], Action{Line: st.Line, PartitionEnd: true, Picked: a.Picked})
		}
	}
	p := &Plan{Scenario: sc}
	for _, as := range byTime {
		for _, a := range as {
			p.MemberEdits = p.MemberEdits || a.MemberEdit != nil
		}
	}
	times := slices.Collect(maps.Keys(byTime))
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	for _, t := range times {
		if t > sc.Duration {
			continue // never happens in the simulator either
		}
		p.Phases = append(p.Phases, Phase{At: t, Actions: byTime[t]})
	}
	return p, nil
}
