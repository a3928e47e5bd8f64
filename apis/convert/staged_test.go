package convert_test

import (
	"testing"

	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/eviction"
	"github.com/fleetsim/fleetsim/model/staged"
)

func TestStrategyRoundTrip(t *testing.T) {
	s := &v1beta1.ClusterStagedUpdateStrategy{}
	load(t, "strategy.yaml", s)
	m := convert.StrategyToModel(s)
	var own staged.ClusterStagedUpdateStrategy
	loadModel(t, "strategy.yaml", &own)
	diff(t, "ToModel vs the model's own decoding", &own, m)
	if errs := staged.ValidateStrategy(m); len(errs) > 0 {
		t.Errorf("the model refuses the documentation's strategy: %v", errs)
	}
	back := convert.StrategyFromModel(m)
	diff(t, "FromModel(ToModel(s))", s, back, exact)
	diff(t, "ToModel(FromModel(m))", m, convert.StrategyToModel(back))
	admit(t, back, nil)
}

func TestUpdateRunRoundTrip(t *testing.T) {
	for _, f := range []string{"updaterun.yaml", "updaterun-status.yaml", "updaterun-guestbook.yaml"} {
		t.Run(f, func(t *testing.T) {
			r := &v1beta1.ClusterStagedUpdateRun{}
			load(t, f, r)
			m := convert.UpdateRunToModel(r)
			var own staged.ClusterStagedUpdateRun
			loadModel(t, f, &own)
			diff(t, "ToModel vs the model's own decoding", &own, m)
			back := convert.UpdateRunFromModel(m)
			diff(t, "FromModel(ToModel(r))", r, back, exact)
			diff(t, "ToModel(FromModel(m))", m, convert.UpdateRunToModel(back))
			admit(t, back, nil)
		})
	}
}

func TestApprovalRequestRoundTrip(t *testing.T) {
	a := &v1beta1.ClusterApprovalRequest{}
	load(t, "approvalrequest.yaml", a)
	m := convert.ApprovalRequestToModel(a)
	var own staged.ClusterApprovalRequest
	loadModel(t, "approvalrequest.yaml", &own)
	diff(t, "ToModel vs the model's own decoding", &own, m)
	// The documentation's request carries the older <run>-<stage> name; the current
	// release's controller names after-stage requests <run>-after-<stage>.
	if m.Name != "example-run-canary" || m.Spec.ParentStageRollout != "example-run" || m.Labels[staged.LabelTargetUpdatingStage] != "canary" {
		t.Errorf("ApprovalRequestToModel = %+v", m)
	}
	back := convert.ApprovalRequestFromModel(m)
	diff(t, "FromModel(ToModel(a))", a, back, exact)
	admit(t, back, nil)
}

func TestEvictionRoundTrip(t *testing.T) {
	e := &v1beta1.ClusterResourcePlacementEviction{}
	load(t, "eviction.yaml", e)
	m := convert.EvictionToModel(e)
	var own eviction.Eviction
	loadModel(t, "eviction.yaml", &own)
	diff(t, "ToModel vs the model's own decoding", &own, m)
	if !m.Terminal() {
		t.Errorf("the documentation's eviction (Executed=False) is not terminal")
	}
	back := convert.EvictionFromModel(m)
	diff(t, "FromModel(ToModel(e))", e, back, exact)
	admit(t, back, nil)

	for _, f := range []string{"pdb.yaml", "pdb-pick-all.yaml"} {
		b := &v1beta1.ClusterResourcePlacementDisruptionBudget{}
		load(t, f, b)
		m := convert.DisruptionBudgetToModel(b)
		var own eviction.DisruptionBudget
		loadModel(t, f, &own)
		diff(t, f+": ToModel vs the model's own decoding", &own, m)
		back := convert.DisruptionBudgetFromModel(m)
		diff(t, f+": FromModel(ToModel(b))", b, back, exact)
		admit(t, back, nil)
	}
}
