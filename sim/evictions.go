package sim

import (
	"fmt"

	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// ApplyEviction creates a ClusterResourcePlacementEviction. Its spec is immutable; it is
// reconciled once (EVICT-SEMANTICS).
func (s *Sim) ApplyEviction(e eviction.Eviction) error {
	if errs := eviction.ValidateEviction(&e); len(errs) > 0 {
		return fmt.Errorf("eviction %s is invalid: %w", e.Name, errs.ToAggregate())
	}
	if old, ok := s.store.evictions[e.Name]; ok {
		if errs := eviction.ValidateEvictionUpdate(&e, old); len(errs) > 0 {
			return fmt.Errorf("eviction %s: %w", e.Name, errs.ToAggregate())
		}
		return nil
	}
	e.Status = eviction.EvictionStatus{}
	s.store.evictions[e.Name] = &e
	s.Record("eviction-created", e.Name, fmt.Sprintf("placement %s, cluster %s", e.Spec.PlacementName, e.Spec.ClusterName))
	s.hub.fire(triggers.EvictionCreated, e.Name, e.Spec.PlacementName, e.Spec.ClusterName)
	return nil
}

// ApplyDisruptionBudget creates or replaces a ClusterResourcePlacementDisruptionBudget. An
// invalid budget is stored: it only makes evictions not execute (PDB-VALIDITY).
func (s *Sim) ApplyDisruptionBudget(b eviction.DisruptionBudget) error {
	s.store.budgets[b.Name] = &b
	s.Record("disruption-budget-applied", b.Name, "")
	return nil
}

// DeleteEviction and DeleteDisruptionBudget remove those objects.
func (s *Sim) DeleteEviction(name string) error {
	if _, ok := s.store.evictions[name]; !ok {
		return fmt.Errorf("eviction %s does not exist", name)
	}
	delete(s.store.evictions, name)
	return nil
}

func (s *Sim) DeleteDisruptionBudget(name string) error {
	if _, ok := s.store.budgets[name]; !ok {
		return fmt.Errorf("disruption budget %s does not exist", name)
	}
	delete(s.store.budgets, name)
	return nil
}

// EvictionStatus is an eviction as users read it.
type EvictionStatus struct {
	Name       string      `json:"name"`
	Placement  string      `json:"placement"`
	Cluster    string      `json:"cluster"`
	Conditions []Condition `json:"conditions"`
}

// Eviction returns one eviction's status.
func (s *Sim) Eviction(name string) (EvictionStatus, bool) {
	e := s.store.evictions[name]
	if e == nil {
		return EvictionStatus{}, false
	}
	return EvictionStatus{Name: name, Placement: e.Spec.PlacementName, Cluster: e.Spec.ClusterName, Conditions: conditionsOf(e.Status.Conditions)}, true
}

// Evictions returns every eviction's status, by name.
func (s *Sim) Evictions() []EvictionStatus {
	names := sortedKeys(s.store.evictions)
	var out []EvictionStatus
	for _, n := range names {
		st, _ := s.Eviction(n)
		out = append(out, st)
	}
	return out
}
