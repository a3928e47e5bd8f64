package invariants

// Rollout invariant (3): every cluster the scheduler picks in a step is a member that is not
// leaving and whose taints the policy tolerates (TAINT-MATCH, TAINT-SCOPE).

import (
	"fmt"
	"slices"
	"time"

	"github.com/fleetsim/fleetsim/model/placement"
)

// invTolerated: every cluster the scheduler picks in an event, by creating a binding
// (d.created) or by restoring an Unscheduled one, carries only taints the latest policy
// snapshot tolerates (TAINT-MATCH), PickFixed excepted (TAINT-SCOPE); and it is a member
// that is not leaving. Bindings kept on a cluster tainted later are not new picks
// (TAINT-NO-EVICT).
func (ro *Rollout) tolerated(r Reader, d *diff, _ time.Time) error {
	check := func(bName, placementName, cluster string) error {
		p := r.Placement(placementName)
		if p == nil {
			return nil
		}
		snap := p.LatestPolicySnapshot()
		m := r.MemberCluster(cluster)
		switch {
		case m == nil:
			return fmt.Errorf("invariant tolerated: binding %s of %s was picked on %s, which is not a member", bName, placementName, cluster)
		case m.Member.Leaving:
			return fmt.Errorf("invariant tolerated: binding %s of %s was picked on %s, which is leaving", bName, placementName, cluster)
		case snap == nil || snap.Policy.Type() == placement.PickFixed:
			return nil
		}
		var tolerations []placement.Toleration
		if snap.Policy != nil {
			tolerations = snap.Policy.Tolerations
		}
		for _, taint := range m.Member.Taints {
			if !slices.ContainsFunc(tolerations, func(t placement.Toleration) bool {
				return invTolerates(t, taint.Key, taint.Value, string(taint.Effect))
			}) {
				return fmt.Errorf("invariant tolerated: binding %s of %s was picked on %s, whose taint %s the policy snapshot %s does not tolerate (tolerations %v)",
					bName, placementName, cluster, taint, snap.Name, tolerations)
			}
		}
		return nil
	}
	for _, b := range d.created {
		if err := check(b.Name, b.Placement, b.TargetCluster); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(d.placements) {
		for _, bn := range d.placements[name].picked {
			if b := r.Binding(bn); b != nil {
				if err := check(b.Name, b.Placement, b.TargetCluster); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// invTolerates is TAINT-MATCH: an empty effect matches all effects; Exists matches the key
// (an empty key every key); Equal (the default) needs key and value.
func invTolerates(t placement.Toleration, key, value, effect string) bool {
	if t.Effect != "" && string(t.Effect) != effect {
		return false
	}
	if t.Operator == placement.TolerationOpExists {
		return t.Key == "" || t.Key == key
	}
	return t.Key == key && t.Value == value
}
