package status

import (
	"strconv"

	"github.com/fleetsim/fleetsim/model/condition"
)

// KubectlColumns renders the printer columns SCHEDULED, SCHEDULED-GEN, AVAILABLE and
// AVAILABLE-GEN of `kubectl get crp` (CRP-API): the status and observedGeneration of the
// ClusterResourcePlacementScheduled and ClusterResourcePlacementAvailable conditions, each
// empty when its condition is absent. AVAILABLE is therefore empty while the chain stops
// before Available (a blocked rollout, a failed apply, an External placement waiting for a
// run) and once a placement has no cluster left, as after the eviction of its only
// placement [Evicting Resources and Setting up Disruption Budgets].
//
// generation is the GEN column, printed as is by the caller. kubectl reads the other
// columns verbatim from the status, so they do not depend on it: a stale condition shows its
// older observedGeneration, which is how users notice the controller lagging.
func KubectlColumns(s Status, generation int64) (scheduled, scheduledGen, available, availableGen string) {
	scheduled, scheduledGen = column(s.Conditions, TypePlacementScheduled)
	available, availableGen = column(s.Conditions, TypePlacementAvailable)
	return scheduled, scheduledGen, available, availableGen
}

func column(cs []condition.Timed, typ string) (status, gen string) {
	c, ok := condition.Find(cs, typ)
	if !ok {
		return "", ""
	}
	return string(c.Status), strconv.FormatInt(c.ObservedGeneration, 10)
}
