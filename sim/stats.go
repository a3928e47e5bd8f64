package sim

// Counters are running totals a capacity plan samples (package plan): the hub's decisions
// by controller and the heartbeats the hub received. They are read, never hashed, so
// reading them changes no trace.
type Counters struct {
	// Decisions by controller name (membership, policy-snapshot, scheduler, rollout,
	// work-generator, eviction, staged-update).
	Decisions map[string]uint64
	// Heartbeats delivered to the hub (each one a status write of the member's
	// InternalMemberCluster on a real hub).
	Heartbeats uint64
}

// DecisionObserver sees every hub decision as it runs: the controller's name and the key.
type DecisionObserver func(controller, key string)

// OnDecision registers an observer of hub decisions.
func (s *Sim) OnDecision(o DecisionObserver) { s.decisionObservers = append(s.decisionObservers, o) }

// ControllerNames lists the hub's controllers as Counters names them.
func ControllerNames() []string { return append([]string(nil), controllerNames[:]...) }

// Counters returns the running totals.
func (s *Sim) Counters() Counters {
	c := Counters{Decisions: make(map[string]uint64, numControllers), Heartbeats: s.heartbeats}
	for i, n := range s.decisions {
		c.Decisions[controllerNames[i]] = n
	}
	return c
}

// ObjectCounts returns how many objects of each kind the hub's API server holds now.
func (s *Sim) ObjectCounts() map[string]int {
	st := s.store
	ns := 0
	for _, r := range st.members {
		if r.NamespaceExists {
			ns++
		}
	}
	pol, res := 0, 0
	for _, p := range st.placements {
		pol += len(p.PolicySnapshots)
		res += len(p.ResourceSnapshots)
	}
	return map[string]int{
		"ClusterSchedulingPolicySnapshot":  pol,
		"ClusterResourceSnapshot":          res,
		"MemberCluster":                    len(st.members),
		"Namespace":                        ns,
		"ClusterResourcePlacement":         len(st.placements),
		"ClusterResourceBinding":           len(st.bindings),
		"Work":                             len(st.sortedWorks()),
		"ClusterStagedUpdateRun":           len(st.runs),
		"ClusterApprovalRequest":           len(st.approvals),
		"ClusterResourcePlacementEviction": len(st.evictions),
		"selected resources":               len(st.resources),
	}
}

func (s *Sim) decided(c controller, key string) {
	s.decisions[c]++
	for _, o := range s.decisionObservers {
		o(controllerNames[c], key)
	}
}
