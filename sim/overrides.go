package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/fleetsim/fleetsim/model/override"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// overrideStore keeps the overrides and every snapshot taken of them, by name.
type overrideStore struct {
	cros     map[string]*override.ClusterResourceOverride
	ros      map[placement.NamespacedName]*override.ResourceOverride
	croSnaps map[string][]*override.CROSnapshot // by override name, oldest first
	roSnaps  map[placement.NamespacedName][]*override.ROSnapshot
}

func newOverrideStore() overrideStore {
	return overrideStore{
		cros: map[string]*override.ClusterResourceOverride{}, ros: map[placement.NamespacedName]*override.ResourceOverride{},
		croSnaps: map[string][]*override.CROSnapshot{}, roSnaps: map[placement.NamespacedName][]*override.ROSnapshot{},
	}
}

// ApplyClusterResourceOverride creates or updates a ClusterResourceOverride; a spec change
// takes a new snapshot, which rolls out under the placements' strategies.
func (s *Sim) ApplyClusterResourceOverride(o override.ClusterResourceOverride) error {
	if errs := override.ValidateClusterResourceOverride(&o); len(errs) > 0 {
		return fmt.Errorf("ClusterResourceOverride %s is invalid: %w", o.Name, errs.ToAggregate())
	}
	os := &s.store.overrides
	next := map[string]*override.ClusterResourceOverride{}
	for k, v := range os.cros {
		next[k] = v
	}
	next[o.Name] = &o
	if err := s.validateOverrideSet(next, os.ros); err != nil {
		return err
	}
	os.cros[o.Name] = &o
	var latest *override.CROSnapshot
	if snaps := os.croSnaps[o.Name]; len(snaps) > 0 {
		latest = snaps[len(snaps)-1]
	}
	if snap := override.DecideSnapshot[override.ClusterResourceOverrideSpec](&o, latest); snap != nil {
		os.croSnaps[o.Name] = append(os.croSnaps[o.Name], snap)
		s.Record("override-snapshot-created", o.Name, snap.Name)
		s.hub.fire(triggers.OverrideChanged, snap.Name, "", "")
	}
	return nil
}

// ApplyResourceOverride creates or updates a ResourceOverride.
func (s *Sim) ApplyResourceOverride(o override.ResourceOverride) error {
	if errs := override.ValidateResourceOverride(&o); len(errs) > 0 {
		return fmt.Errorf("ResourceOverride %s/%s is invalid: %w", o.Namespace, o.Name, errs.ToAggregate())
	}
	os := &s.store.overrides
	key := placement.NamespacedName{Namespace: o.Namespace, Name: o.Name}
	next := map[placement.NamespacedName]*override.ResourceOverride{}
	for k, v := range os.ros {
		next[k] = v
	}
	next[key] = &o
	if err := s.validateOverrideSet(os.cros, next); err != nil {
		return err
	}
	os.ros[key] = &o
	var latest *override.ROSnapshot
	if snaps := os.roSnaps[key]; len(snaps) > 0 {
		latest = snaps[len(snaps)-1]
	}
	if snap := override.DecideSnapshot[override.ResourceOverrideSpec](&o, latest); snap != nil {
		os.roSnaps[key] = append(os.roSnaps[key], snap)
		s.Record("override-snapshot-created", o.Namespace+"/"+o.Name, snap.Name)
		s.hub.fire(triggers.OverrideChanged, snap.Name, "", "")
	}
	return nil
}

func (s *Sim) validateOverrideSet(cros map[string]*override.ClusterResourceOverride, ros map[placement.NamespacedName]*override.ResourceOverride) error {
	var cl []*override.ClusterResourceOverride
	for _, k := range sortedKeys(cros) {
		cl = append(cl, cros[k])
	}
	var rl []*override.ResourceOverride
	rkeys := make([]placement.NamespacedName, 0, len(ros))
	for k := range ros {
		rkeys = append(rkeys, k)
	}
	slices.SortFunc(rkeys, func(a, b placement.NamespacedName) int {
		if a.Namespace != b.Namespace {
			return cmp.Compare(a.Namespace, b.Namespace)
		}
		return cmp.Compare(a.Name, b.Name)
	})
	for _, k := range rkeys {
		rl = append(rl, ros[k])
	}
	if errs := override.ValidateSet(cl, rl); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}

// latestOverrides returns the latest snapshot of every override, in name order.
func (os *overrideStore) latest() ([]override.CROSnapshot, []override.ROSnapshot) {
	var cros []override.CROSnapshot
	for _, k := range sortedKeys(os.croSnaps) {
		snaps := os.croSnaps[k]
		cros = append(cros, *snaps[len(snaps)-1])
	}
	var ros []override.ROSnapshot
	for _, snaps := range os.roSnaps {
		ros = append(ros, *snaps[len(snaps)-1])
	}
	slices.SortFunc(ros, compareRO)
	return cros, ros
}

func compareRO(a, b override.ROSnapshot) int {
	if a.Namespace != b.Namespace {
		return cmp.Compare(a.Namespace, b.Namespace)
	}
	return cmp.Compare(a.Name, b.Name)
}

// named returns the snapshots a binding recorded, in name order.
func (os *overrideStore) named(cro []string, ro []placement.NamespacedName) ([]override.CROSnapshot, []override.ROSnapshot) {
	var cs []override.CROSnapshot
	for _, k := range sortedKeys(os.croSnaps) {
		snaps := os.croSnaps[k]
		for _, sn := range snaps {
			if slices.Contains(cro, sn.Name) {
				cs = append(cs, *sn)
			}
		}
	}
	var rs []override.ROSnapshot
	for _, snaps := range os.roSnaps {
		for _, sn := range snaps {
			if slices.Contains(ro, sn.NamespacedName()) {
				rs = append(rs, *sn)
			}
		}
	}
	slices.SortFunc(rs, compareRO)
	return cs, rs
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
