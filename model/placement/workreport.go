package placement

import "github.com/fleetsim/fleetsim/model/condition"

// WorkReport is what a member agent reported for one Work generation: the Work's Applied
// condition (zero, with an empty Type, under ReportDiff, where the agent writes DiffReported
// instead), its Available condition (nil while not applied), its DiffReported condition
// (ReportDiff only), the manifests that failed, and the manifests whose member object drifted
// from, or differs from, the hub manifest. The member agent's core (agentk8s.Summarise) makes
// it and the hub's fan-in (model/hub.ReceiveWorkStatus) copies it to the binding; it lives
// here so the agent needs nothing of the hub.
type WorkReport struct {
	Applied      condition.Condition
	Available    *condition.Condition
	DiffReported *condition.Condition
	Failed       []FailedPlacement
	Drifted      []DriftedPlacement
	Diffed       []DiffedPlacement
}

// Reported reports whether the agent said anything about the Work: an Applied or a
// DiffReported condition.
func (r WorkReport) Reported() bool {
	return r.Applied.Type != "" || r.DiffReported != nil
}
