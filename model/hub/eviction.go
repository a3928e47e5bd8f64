package hub

import (
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// reconcileEviction decides an eviction once and executes it by deleting the binding.
func (c *Controllers) reconcileEviction(name string) {
	st, env := c.Store, c.Env
	e := st.Eviction(name)
	if e == nil {
		return
	}
	var pl *eviction.Placement
	if p := st.Placement(e.Spec.PlacementName); p != nil {
		crp := p.CRP
		pl = eviction.PlacementOf(&crp)
		pl.Deleting = p.Deleting
	}
	d := eviction.Decide(eviction.Input{
		Eviction: *e, Reconciled: e.Terminal(), Placement: pl,
		Bindings: st.Bindings(e.Spec.PlacementName), Budget: st.DisruptionBudget(e.Spec.PlacementName),
	})
	if d.Noop() {
		return
	}
	for _, cd := range d.Conditions() {
		if condition.Set(&e.Status.Conditions, cd, e.Generation, env.Now()) {
			env.Record("eviction-condition", name, ConditionText(cd))
		}
	}
	st.PutEviction(e)
	if d.DeleteBinding != "" {
		if b := st.DeleteBinding(d.DeleteBinding); b != nil {
			env.Record("binding-deleted", b.Name, "evicted by "+name)
			env.Fire(triggers.BindingDeleted, b.Name, b.Placement, b.TargetCluster)
			env.Fire(triggers.WorkStatusChanged, b.Name, b.Placement, b.TargetCluster)
		}
	}
}
