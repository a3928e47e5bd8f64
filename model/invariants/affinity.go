package invariants

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// PreferredAffinity: after a step in which the scheduler picked clusters for a PickN
// placement whose policy scores clusters by preferred label-selector affinity terms only,
// no eligible cluster it left out matches preferred terms of a greater total weight than
// a cluster it just picked [Using Affinity to Pick Clusters › preferredDuringSchedulingIgnoredDuringExecution
// affinity terms; Using the ClusterResourcePlacement API › PickN placement type]: a PickN
// placement takes the clusters with the highest affinity scores, and a preferred term adds
// its weight (negative weights too) to every cluster its label selector matches.
//
// It is written from that rule, not from the scheduler: it sums the weights itself, over
// the clusters' current labels, and leaves out every case where something else ranks or
// filters the clusters, so that it never blames a correct pick:
//
//   - policies with a required term (which filters), a property selector or sorter in a
//     preferred term (which score from properties), or a topology spread constraint
//     (which scores and filters by the picks already made);
//   - picks made earlier and kept: only the bindings created in this step are compared;
//   - as the clusters left out, only members that surely could have been picked: not
//     leaving, Joined and Healthy by the hub's conditions and the agent's report, a last
//     heartbeat no older than the oldest among the clusters picked in this step (those passed
//     the heartbeat check at the decision's time, which the check does not know: an agent
//     whose clock runs behind stamps its heartbeats in the past, and the hub may still
//     show it Healthy for a moment), no NoSchedule taint the policy does not tolerate, and
//     no binding of the placement at all (a cluster with an old binding, or one being
//     deleted, is the scheduler's business: reusing one is preferred on ties, one being
//     deleted is filtered).
//
// Members are listed through the reader's MemberClusterNames (every model/hub.Store has
// it); a reader without it has nothing to compare and passes.
func PreferredAffinity(st Reader, created []placement.Binding) error {
	lister, ok := st.(interface{ MemberClusterNames() []string })
	if !ok {
		return nil
	}
	return eachPickNThatPicked(st, created, func(crp, _ string, snap *placement.PolicySnapshot) error {
		terms, ok := preferredLabelTerms(snap.Policy)
		if !ok {
			return nil
		}
		weight := func(cluster string) (int64, bool) {
			mc := st.MemberCluster(cluster)
			if mc == nil || mc.Member == nil {
				return 0, false
			}
			var sum int64
			for _, t := range terms {
				if t.sel.Matches(labels.Set(mc.Member.Labels)) {
					sum += int64(t.weight)
				}
			}
			return sum, true
		}
		// The clusters picked in this step: the lowest weight among them, and the oldest
		// heartbeat.
		var low string
		var lowW int64
		var oldestBeat time.Time
		for _, b := range created {
			if b.Placement != crp {
				continue
			}
			w, ok := weight(b.TargetCluster)
			if !ok {
				continue
			}
			if beat := st.MemberCluster(b.TargetCluster).Member.Agent.LastHeartbeat; low == "" || beat.Before(oldestBeat) {
				oldestBeat = beat
			}
			if low == "" || w < lowW {
				low, lowW = b.TargetCluster, w
			}
		}
		if low == "" {
			return nil
		}
		held := map[string]bool{}
		for _, b := range st.Bindings(crp) {
			held[b.TargetCluster] = true
		}
		for _, name := range lister.MemberClusterNames() {
			if held[name] || !surelyEligible(st, name, snap.Policy.Tolerations, oldestBeat) {
				continue
			}
			if w, _ := weight(name); w > lowW {
				return fmt.Errorf("PickN placement %s picked %s, whose preferred affinity terms weigh %d, and left out the eligible cluster %s, whose terms weigh %d",
					crp, low, lowW, name, w)
			}
		}
		return nil
	})
}

// labelTerm is a preferred term's label selector and weight.
type labelTerm struct {
	sel    labels.Selector
	weight int32
}

// preferredLabelTerms returns the policy's preferred terms when they are all that scores
// and filters its clusters besides taints (above); false otherwise.
func preferredLabelTerms(p *placement.PlacementPolicy) ([]labelTerm, bool) {
	if p == nil || p.Affinity == nil || p.Affinity.ClusterAffinity == nil || len(p.TopologySpreadConstraints) > 0 {
		return nil, false
	}
	ca := p.Affinity.ClusterAffinity
	if r := ca.RequiredDuringSchedulingIgnoredDuringExecution; r != nil && len(r.ClusterSelectorTerms) > 0 {
		return nil, false
	}
	var out []labelTerm
	for _, pt := range ca.PreferredDuringSchedulingIgnoredDuringExecution {
		if pt.Preference.PropertySelector != nil || pt.Preference.PropertySorter != nil {
			return nil, false
		}
		sel := labels.Everything() // a term without a selector matches every cluster
		if pt.Preference.LabelSelector != nil {
			s, err := metav1.LabelSelectorAsSelector(pt.Preference.LabelSelector)
			if err != nil {
				return nil, false // an invalid policy is refused before the scheduler sees it
			}
			sel = s
		}
		out = append(out, labelTerm{sel: sel, weight: pt.Weight})
	}
	return out, len(out) > 0
}

// surelyEligible: the member could receive a new placement now [Membership › Member
// cluster conditions; Using Taints and Tolerations › Adding toleration to
// ClusterResourcePlacement]: it is not leaving, its agent reported it
// joined and healthy and the hub shows it Joined and Healthy, its last heartbeat is not
// before beat, and the policy tolerates its NoSchedule taints.
func surelyEligible(st Reader, name string, tolerations []placement.Toleration, beat time.Time) bool {
	mc := st.MemberCluster(name)
	if mc == nil || mc.Member == nil {
		return false
	}
	m := mc.Member
	a := m.Agent
	if m.Leaving || !a.Present || !a.Joined || !a.HealthKnown || !a.Healthy || a.LastHeartbeat.Before(beat) {
		return false
	}
	for _, typ := range []string{"Joined", healthyType} {
		if c, ok := condition.Find(mc.Conditions, typ); !ok || c.Status != "True" {
			return false
		}
	}
	return placement.FirstUntolerated(m.Taints, tolerations) < 0
}
