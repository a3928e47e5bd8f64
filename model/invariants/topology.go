package invariants

import (
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
)

// TopologySpread: after a step that created bindings of a PickN placement, no
// DoNotSchedule topology spread constraint of its latest policy has a skew above maxSkew
// [Scheduling › Topology spread constraints]: the scheduler makes a pick under such a
// constraint only when the skew after it is at most maxSkew.
//
// The skew is measured apart from the scheduler, over the domains (values of the
// constraint's topology key) of the clusters holding the placement's live bindings. The
// scheduler measures it over the domains of every candidate cluster, which include these
// (a cluster holding a binding is still a candidate) and maybe empty ones: its smallest
// count is at most this one, so its skew is at least this one, and a skew above maxSkew
// here is one there. Steps that created no binding are not checked: a cluster leaving or
// losing its label can raise the skew with nobody picking.
func TopologySpread(st Reader, created []placement.Binding) error {
	return eachPickNThatPicked(st, created, func(crp, picked string, snap *placement.PolicySnapshot) error {
		for _, c := range snap.Policy.TopologySpreadConstraints {
			if c.Action() != placement.DoNotSchedule {
				continue
			}
			counts := map[string]int32{}
			for _, b := range st.Bindings(crp) {
				if !b.Live() {
					continue
				}
				mc := st.MemberCluster(b.TargetCluster)
				if mc == nil || mc.Member == nil {
					continue
				}
				if d, ok := mc.Member.Labels[c.TopologyKey]; ok {
					counts[d]++
				}
			}
			if len(counts) == 0 {
				continue
			}
			domains := make([]string, 0, len(counts))
			for d := range counts {
				domains = append(domains, d)
			}
			slices.Sort(domains)
			lo, hi := domains[0], domains[0]
			for _, d := range domains {
				if counts[d] < counts[lo] {
					lo = d
				}
				if counts[d] > counts[hi] {
					hi = d
				}
			}
			if skew := counts[hi] - counts[lo]; skew > c.Skew() {
				return fmt.Errorf("PickN placement %s picked %s, after which its DoNotSchedule constraint on %s has skew %d (%s=%s holds %d clusters, %s=%s holds %d), above maxSkew %d",
					crp, picked, c.TopologyKey, skew, c.TopologyKey, hi, counts[hi], c.TopologyKey, lo, counts[lo], c.Skew())
			}
		}
		return nil
	})
}
