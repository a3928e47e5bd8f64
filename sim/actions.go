package sim

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fleetsim/fleetsim/agentsystemd"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// MemberSpec describes a member to add: its MemberCluster spec and what its agent reports.
type MemberSpec struct {
	Name            string
	Kind            member.Kind
	Labels          map[string]string
	Taints          []member.Taint
	Properties      map[string]resource.Quantity
	Resources       member.ResourceUsage
	HeartbeatPeriod time.Duration
	// Unhealthy makes the agent report the member unhealthy.
	Unhealthy bool
	// DeleteValidation is spec.deleteOptions.validationMode ("" means Strict).
	DeleteValidation member.DeleteValidationMode
}

// AddMember creates the MemberCluster now; its agent joins once the hub has prepared it.
func (s *Sim) AddMember(spec MemberSpec) error {
	if _, ok := s.store.members[spec.Name]; ok {
		return fmt.Errorf("member %s already exists", spec.Name)
	}
	if spec.Kind == "" {
		spec.Kind = member.KindCluster
	}
	if spec.HeartbeatPeriod == 0 {
		spec.HeartbeatPeriod = member.DefaultHeartbeatPeriod
	}
	if spec.HeartbeatPeriod < member.MinHeartbeatPeriod || spec.HeartbeatPeriod > member.MaxHeartbeatPeriod {
		return fmt.Errorf("member %s: heartbeat period %s is outside [%s, %s]", spec.Name, spec.HeartbeatPeriod, member.MinHeartbeatPeriod, member.MaxHeartbeatPeriod)
	}
	if err := checkDeleteValidation(spec.DeleteValidation); err != nil {
		return fmt.Errorf("member %s: %w", spec.Name, err)
	}
	labels := s.sharedLabels(spec.Labels)
	// One allocation for the agent, its record and its member: a heartbeat touches all
	// three, and adjacent memory costs fewer cache misses than three scattered objects.
	blk := &memberBlock{}
	blk.member = member.Member{
		Name: spec.Name, Kind: spec.Kind, Labels: labels, Taints: slices.Clone(spec.Taints),
		HeartbeatPeriod: spec.HeartbeatPeriod, DeleteValidation: spec.DeleteValidation,
	}
	r := &blk.rec
	r.MemberCluster = mhub.MemberCluster{Member: &blk.member, Created: s.Now()}
	a := &blk.agent
	*a = agent{
		idx: int32(len(s.agents)), name: spec.Name, rec: r, period: spec.HeartbeatPeriod, healthy: !spec.Unhealthy,
		properties: spec.Properties, resources: spec.Resources,
	}
	if spec.Kind == member.KindMachine {
		a.systemd = agentsystemd.NewSimSystemd()
	}
	r.agent = a
	s.agents = append(s.agents, a)
	s.store.addMember(r)
	s.Record("member-created", spec.Name, string(spec.Kind))
	s.hub.fire(triggers.MemberCreated, spec.Name, "", spec.Name)
	return nil
}

// memberBlock holds a new member's agent, hub record and member in one allocation, in the
// order a heartbeat reads them.
type memberBlock struct {
	agent  agent
	rec    memberRecord
	member member.Member
}

// sharedLabels returns a copy of labels that members added one after the other with equal
// labels share (a member group of 100,000 holds one map, not 100,000): member label maps
// are never changed in place (Label replaces a member's map).
func (s *Sim) sharedLabels(labels map[string]string) map[string]string {
	if s.lastLabels != nil && maps.Equal(s.lastLabels, labels) {
		return s.lastLabels
	}
	c := make(map[string]string, len(labels))
	maps.Copy(c, labels)
	s.lastLabels = c
	return c
}

func (s *Sim) record(name string) (*memberRecord, error) {
	r := s.store.members[name]
	if r == nil {
		return nil, fmt.Errorf("member %s does not exist", name)
	}
	return r, nil
}

func checkDeleteValidation(m member.DeleteValidationMode) error {
	switch m {
	case "", member.DeleteValidationStrict, member.DeleteValidationSkip:
		return nil
	}
	return fmt.Errorf("spec.deleteOptions.validationMode: Unsupported value: %q: supported values: %q, %q", m, member.DeleteValidationSkip, member.DeleteValidationStrict)
}

// SetDeleteValidation changes a member's spec.deleteOptions.validationMode; a member that is
// already leaving is decided again under the new mode.
func (s *Sim) SetDeleteValidation(name string, m member.DeleteValidationMode) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	if err := checkDeleteValidation(m); err != nil {
		return fmt.Errorf("member %s: %w", name, err)
	}
	if r.Member.DeleteValidation == m {
		return nil
	}
	r.Member.DeleteValidation = m
	s.Record("member-updated", name, "deleteOptions.validationMode "+string(m))
	if r.Member.Leaving {
		// Only the membership decision reads the mode.
		s.hub.memberChanged(name, triggers.MemberStatusChanged)
	}
	return nil
}

// DeleteMember asks the member to leave (deletes its MemberCluster).
func (s *Sim) DeleteMember(name string) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	if !r.Member.Leaving {
		r.Member.Leaving = true
		s.store.memberSpecChanged()
		s.hub.memberChanged(name, triggers.MemberLeaving)
	}
	return nil
}

// FailMode is how a member fails.
type FailMode string

const (
	Crash     FailMode = "crash"
	Partition FailMode = "partition"
)

// Fail crashes a member (no heartbeats, no work) or partitions it (alive, running its
// workloads, cut off from the hub in both directions).
func (s *Sim) Fail(name string, mode FailMode) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	a := r.agent
	switch mode {
	case Crash:
		a.crashed = true
		a.joined = false
		a.epoch++
		if a.systemd != nil {
			// A crashed machine runs nothing; it boots with an empty systemd.
			a.systemd = agentsystemd.NewSimSystemd()
			s.checkDuplicates()
		}
	case Partition:
		a.partitioned = true
	default:
		return fmt.Errorf("unknown failure mode %q", mode)
	}
	s.Record("member-failed", name, string(mode))
	return nil
}

// Heal ends a member's failure: a crashed agent restarts and joins again; a partitioned one
// reconnects and catches up with what it missed.
func (s *Sim) Heal(name string) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	a := r.agent
	if !a.crashed && !a.partitioned {
		return nil
	}
	a.crashed, a.partitioned = false, false
	s.Record("member-healed", name, "")
	s.push(0, event{kind: evAgentSync, ref: a.idx})
	s.reapplyWorks(name)
	if a.systemd != nil {
		s.queueMachineAgent(name, s.cfg.AgentSyncDelay)
	}
	return nil
}

// SetClockSkew offsets a member agent's clock; its heartbeats carry its own time.
func (s *Sim) SetClockSkew(name string, skew time.Duration) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	r.agent.skew = skew
	s.Record("clock-skew", name, skew.String())
	return nil
}

// SetMemberHealth sets the health the member's agent finds its cluster in; its next
// heartbeat reports it (the hub then shows the member Healthy=False, or True again).
func (s *Sim) SetMemberHealth(name string, healthy bool) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	if r.agent == nil {
		return fmt.Errorf("member %s has no agent", name)
	}
	r.agent.healthy = healthy
	s.Record("member-health", name, map[bool]string{true: "healthy", false: "unhealthy"}[healthy])
	return nil
}

// Taint adds or replaces a taint. Adding a taint never moves placements, so it only
// updates the member.
func (s *Sim) Taint(name string, t member.Taint) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	if t.Effect == "" {
		t.Effect = member.NoSchedule
	}
	r.Member.Taints = slices.DeleteFunc(r.Member.Taints, func(x member.Taint) bool { return x.Key == t.Key && x.Effect == t.Effect })
	r.Member.Taints = append(r.Member.Taints, t)
	s.store.memberSpecChanged()
	s.Record("member-tainted", name, t.String())
	s.hub.fire(triggers.MemberTaintAdded, name, "", name)
	return nil
}

// Untaint removes the taints with key; removal triggers scheduling (TAINT-NO-EVICT).
func (s *Sim) Untaint(name, key string) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	before := len(r.Member.Taints)
	r.Member.Taints = slices.DeleteFunc(r.Member.Taints, func(x member.Taint) bool { return x.Key == key })
	s.store.memberSpecChanged()
	if len(r.Member.Taints) != before {
		s.hub.memberChanged(name, triggers.MemberTaintRemoved)
	}
	return nil
}

// Label sets and removes member labels; a change triggers scheduling, and a machine's agent
// reconciles.
func (s *Sim) Label(name string, set map[string]string, remove []string) error {
	r, err := s.record(name)
	if err != nil {
		return err
	}
	changed := false
	// Members may share one label map (sharedLabels): change a copy.
	labels := maps.Clone(r.Member.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, k := range sortedKeys(set) {
		if old, ok := labels[k]; !ok || old != set[k] {
			labels[k] = set[k]
			changed = true
		}
	}
	for _, k := range remove {
		if _, ok := labels[k]; ok {
			delete(labels, k)
			changed = true
		}
	}
	if changed {
		r.Member.Labels = labels
		s.store.memberSpecChanged()
	}
	if changed {
		s.hub.memberChanged(name, triggers.MemberLabelsChanged)
		// A machine's labels are its fleet metadata, which its agent reads from the registry
		// on every reconcile (fleet's agent reconciles every 5 s): global units start or
		// stop there.
		if r.agent != nil && r.agent.systemd != nil {
			s.queueMachineAgent(name, s.cfg.AgentSyncDelay)
		}
	}
	return nil
}

// RestartHub restarts the hub's controllers.
func (s *Sim) RestartHub() { s.hub.restart() }

// ApplyPlacement creates or updates a ClusterResourcePlacement. The generation moves only
// when the spec changes.
func (s *Sim) ApplyPlacement(crp placement.ClusterResourcePlacement) error {
	if errs := placement.ValidatePlacement(&crp); len(errs) > 0 {
		return fmt.Errorf("placement %s is invalid: %w", crp.Name, errs.ToAggregate())
	}
	p := s.store.placements[crp.Name]
	if p == nil {
		p = &mhub.Placement{}
		s.store.addPlacement(crp.Name, p)
		s.Record("placement-created", crp.Name, "")
	} else {
		if p.Deleting {
			return fmt.Errorf("placement %s is being deleted", crp.Name)
		}
		if err := placement.CheckPolicyUpdate(p.CRP.Spec.Policy, crp.Spec.Policy); err != nil {
			return fmt.Errorf("placement %s: %w", crp.Name, err)
		}
		if err := placement.CheckScopeUpdate(p.CRP.Spec.StatusReportingScope, crp.Spec.StatusReportingScope); err != nil {
			return fmt.Errorf("placement %s: %w", crp.Name, err)
		}
		oldSpec, _ := json.Marshal(p.CRP.Spec)
		newSpec, _ := json.Marshal(crp.Spec)
		if string(oldSpec) == string(newSpec) {
			return nil
		}
		s.Record("placement-updated", crp.Name, "")
	}
	p.CRP = crp
	p.Generation++
	s.hub.fire(triggers.PlacementChanged, crp.Name, crp.Name, "")
	return nil
}

// DeletePlacement deletes a placement; its bindings go with it.
func (s *Sim) DeletePlacement(name string) error {
	p := s.store.placements[name]
	if p == nil {
		return fmt.Errorf("placement %s does not exist", name)
	}
	p.Deleting = true
	s.hub.fire(triggers.PlacementDeleted, name, name, "")
	return nil
}
