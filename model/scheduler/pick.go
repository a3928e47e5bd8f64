// pick.go holds selection: PickAll and PickFixed pick every candidate, PickN picks the
// best numberOfClusters (topology.go and ranked.go hold its spread and ranked variants),
// and scale-in unschedules the weakest kept bindings.

package scheduler

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fleetsim/fleetsim/model/mutant"
	"github.com/fleetsim/fleetsim/model/placement"
)

// pick marks a candidate picked.
func (d *decision) pick(mi int32) {
	d.memos[mi].picked = true
	d.picked = append(d.picked, mi)
}

// pickAll picks every candidate (PickAll, PickFixed); obsolete bindings that no longer pass
// the filters are unscheduled.
func (d *decision) pickAll() {
	for _, i := range d.cands {
		d.pick(i)
	}
	d.unscheduleObsoleteNotPicked()
}

// pickN picks numberOfClusters minus the clusters already kept.
func (d *decision) pickN() {
	need := d.wanted - d.kept
	if mutant.On("scheduler.pickNOneExtra") {
		need++
	}
	if need < 0 {
		d.scaleIn(-need)
	}
	switch {
	case d.virtual:
		d.pickRanked(max(need, 0))
	case d.topo != nil:
		d.pickSpread(max(need, 0))
	case need > 0:
		d.picks = topK(d.picks[:0], d.rankedCands(), need)
		for _, r := range d.picks {
			d.pick(r.mi)
		}
	}
	d.unscheduleObsoleteNotPicked()
}

// scaleIn unschedules n kept bindings, weakest first: Scheduled before Bound, then the lower
// stored topology score, then the lower affinity score, then the smaller name (CRP-POL-SCALE).
func (d *decision) scaleIn(n int) {
	if mutant.On("scheduler.scaleInOneShort") {
		n--
	}
	var kept []int32
	for si := range d.slots {
		if sl := &d.slots[si]; sl.live >= 0 && sl.liveCurrent {
			kept = append(kept, int32(si))
		}
	}
	rank := func(b *placement.Binding) (int, int32, int32) {
		state := 1
		if b.State == placement.Scheduled {
			state = 0
		}
		var topo, aff int32
		if s := b.ClusterDecision.ClusterScore; s != nil {
			topo, aff = s.TopologySpreadScore, s.AffinityScore
		}
		return state, topo, aff
	}
	slices.SortFunc(kept, func(x, y int32) int {
		a, b := d.binding(d.slots[x].live), d.binding(d.slots[y].live)
		as, at, aa := rank(a)
		bs, bt, ba := rank(b)
		return cmp.Or(cmp.Compare(as, bs), cmp.Compare(at, bt), cmp.Compare(aa, ba), cmp.Compare(a.TargetCluster, b.TargetCluster))
	})
	for _, si := range kept[:n] {
		sl := &d.slots[si]
		d.unschedule(d.binding(sl.live), fmt.Sprintf("placement scaled in to %d cluster(s) and this cluster ranks lowest", d.wanted))
		sl.live = -1
		d.kept--
	}
}
