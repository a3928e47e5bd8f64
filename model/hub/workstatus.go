package hub

import (
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// WorkReport is what a member agent reported for one Work generation (agentk8s.Summarise
// makes it): the Work's Applied condition, its Available condition (nil while not applied)
// and the manifests that failed.
type WorkReport struct {
	Applied   condition.Condition
	Available *condition.Condition
	Failed    []placement.FailedPlacement
}

// ReceiveWorkStatus is the hub's status fan-in: it copies a member's report on the Work of
// one binding generation into the binding's Applied and Available conditions and
// failedPlacements. A report on another generation than the binding's is stale and ignored.
func ReceiveWorkStatus(st Store, env Env, bindingName string, gen int64, r WorkReport) {
	b := st.Binding(bindingName)
	if b == nil || b.Generation != gen {
		return
	}
	nb := *b
	nb.Conditions = append([]condition.Timed(nil), b.Conditions...)
	changed := false
	for _, c := range []*condition.Condition{&r.Applied, r.Available} {
		if c == nil {
			continue
		}
		statusChanged, any := condition.Update(&nb.Conditions, *c, gen, env.Now())
		if statusChanged {
			env.Record("binding-condition", nb.Name, ConditionText(*c))
		}
		changed = changed || any
	}
	if _, had := condition.Find(nb.Conditions, condition.TypeAvailable); r.Available == nil && had {
		condition.Remove(&nb.Conditions, condition.TypeAvailable)
		changed = true
	}
	// Failed placements alone wake nobody: they follow the conditions they explain.
	nb.FailedPlacements = r.Failed
	st.PutBinding(nb)
	if changed {
		env.Fire(triggers.WorkStatusChanged, nb.Name, nb.Placement, nb.TargetCluster)
	}
}
