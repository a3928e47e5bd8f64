// reasons.go holds the explanations: the decisions reported for clusters not selected
// (scored candidates by rank, then filtered members by name) and the reason and plugin
// rendered for each.

package scheduler

import (
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/model/placement"
)

// unselectedDecisions appends to selected up to limit clusters that were not picked:
// PickFixed names not found; scored candidates by rank; then filtered members by name.
func (d *decision) unselectedDecisions(selected []placement.ClusterDecision, limit int) []placement.ClusterDecision {
	out := selected
	n0 := len(selected)
	if d.policy.typ == placement.PickFixed {
		var missing []string
		for n := range d.policy.fixed {
			if _, ok := d.ix.names()[n]; !ok {
				missing = append(missing, n)
			}
		}
		slices.Sort(missing)
		for _, n := range missing[:min(len(missing), max(limit, 0))] {
			out = append(out, placement.ClusterDecision{ClusterName: n, Reason: ReasonNotFound})
		}
	}
	if limit-(len(out)-n0) <= 0 {
		return out
	}
	if d.virtual {
		out = d.unselectedRanked(out, limit-(len(out)-n0))
	} else {
		d.picks = topK(d.picks[:0], d.rankedCands(), limit-(len(out)-n0))
		for _, r := range d.picks {
			mm := &d.memos[r.mi]
			out = append(out, placement.ClusterDecision{
				ClusterName:  d.ix.ents[mm.id].name,
				ClusterScore: d.score(mm),
				Reason:       ReasonNotHighEnough,
			})
		}
	}
	// Filtered members by name: walk the fleet in name order until the limit is reached.
	for r := 0; r < len(d.ix.ents) && (len(out)-n0) < limit; r++ {
		id := int32(r)
		if !d.ix.sortedByName {
			id = d.ix.order()[r]
		}
		if d.policy.typ == placement.PickFixed && !d.policy.fixed[d.ix.ents[id].name] {
			continue
		}
		if ok, vm := d.virtualFiltered(id); ok {
			if vm.code != codeCandidate {
				out = append(out, placement.ClusterDecision{ClusterName: d.ix.ents[id].name, Reason: d.reasonFor(&vm), Plugin: d.pluginFor(&vm)})
			}
			continue
		}
		mm := d.filtered(id)
		switch {
		case mm.picked, mm.code == codeKept, mm.code == codeNotNamed, mm.code == codeCandidate:
			continue
		}
		out = append(out, placement.ClusterDecision{ClusterName: d.ix.ents[id].name, Reason: d.reasonFor(mm), Plugin: d.pluginFor(mm)})
	}
	return out
}

// reasonFor renders why a member was not picked.
func (d *decision) reasonFor(mm *memo) string {
	switch mm.code {
	case codeCandidate:
		return ReasonNotHighEnough
	case codeIneligible:
		if d.policy.typ == placement.PickFixed {
			return reasonNotEligibleYet + mm.elig.String()
		}
		return unschedulablePrefix + mm.elig.String()
	case codeDeleting:
		return unschedulablePrefix + "a binding of this placement on the cluster is still being deleted"
	case codeUntolerated:
		return unschedulablePrefix + "cluster has an untolerated taint " + d.member(mm).Taints[mm.detail].String()
	case codeNoAffinity:
		return unschedulablePrefix + reasonAffinityNoMatch
	case codeTopology:
		c := d.policy.topology[mm.detail]
		return fmt.Sprintf("%sviolated topology spread constraint %q (max skew %d)", unschedulablePrefix, c.key, c.maxSkew)
	case codeNotNamed:
		return "cluster is not in the placement's clusterNames"
	}
	return ""
}

func (d *decision) pluginFor(mm *memo) string {
	switch mm.code {
	case codeIneligible:
		return PluginClusterEligibility
	case codeDeleting:
		return PluginSamePlacementAntiAffinity
	case codeUntolerated:
		return PluginTaintToleration
	case codeNoAffinity:
		return PluginClusterAffinity
	case codeTopology:
		return PluginTopologySpread
	}
	return ""
}
