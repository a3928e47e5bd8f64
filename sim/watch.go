package sim

// WatchRollout checks the rollout invariants (model/invariants.Rollout: maxUnavailable,
// maxSurge, tolerated binds, eviction budgets) after every event from now on, and returns a
// function reporting the first violation (nil while there is none). The run stops at it.
func (s *Sim) WatchRollout() func() error {
	tr := s.invWatch()
	return func() error { return tr.err }
}
