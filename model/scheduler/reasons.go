// reasons.go holds the explanations: the decisions reported for clusters not selected
// (scored candidates by rank, then filtered members by name) and the reason and plugin
// rendered for each.

package scheduler

import (
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
				d.scratch = vm
				out = append(out, placement.ClusterDecision{ClusterName: d.ix.ents[id].name, Reason: d.reasonFor(&d.scratch), Plugin: d.pluginFor(&d.scratch)})
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
	case codeNotNamed:
		return "cluster is not in the placement's clusterNames"
	}
	if p := mm.code.plugin(); p != nil {
		return p.reason(d, mm)
	}
	return ""
}

// pluginFor is the name of the plugin that filtered the member out, if one did.
func (d *decision) pluginFor(mm *memo) string {
	if p := mm.code.plugin(); p != nil {
		return p.name
	}
	return ""
}
