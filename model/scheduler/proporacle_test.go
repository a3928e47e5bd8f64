package scheduler_test

// The property tests' oracles: what a decision must satisfy, written independently of the
// scheduler's compiled policy (see properties_test.go).

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"pgregory.net/rapid"

	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/scheduler"
)

// ---------------------------------------------------------------------------------------
// Oracles: written independently of the scheduler's compiled policy.

func propLive(b *placement.Binding) bool {
	return !b.Deleting && (b.State == placement.Scheduled || b.State == placement.Bound)
}

func propMemberByName(ms []*member.Member) map[string]*member.Member {
	out := make(map[string]*member.Member, len(ms))
	for _, m := range ms {
		out[m.Name] = m
	}
	return out
}

func propBindingByName(bs []*placement.Binding) map[string]*placement.Binding {
	out := make(map[string]*placement.Binding, len(bs))
	for _, b := range bs {
		out[b.Name] = b
	}
	return out
}

func propPropertyValue(m *member.Member, name string) (resource.Quantity, bool) {
	var list member.ResourceList
	switch name {
	case member.ResourcePropertyPrefix + "total-cpu":
		list = m.Resources.Capacity
	case member.ResourcePropertyPrefix + "allocatable-cpu":
		list = m.Resources.Allocatable
	case member.ResourcePropertyPrefix + "available-cpu":
		list = m.Resources.Available
	default:
		q, ok := m.Properties[name]
		return q, ok
	}
	q, ok := list["cpu"]
	return q, ok
}

func propTolerationsOf(p *placement.PlacementPolicy) []placement.Toleration {
	if p == nil {
		return nil
	}
	return p.Tolerations
}

func propMatchesTerm(term placement.ClusterSelectorTerm, m *member.Member) bool {
	if term.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil {
			panic(err) // the generator only makes valid selectors
		}
		if !sel.Matches(klabels.Set(m.Labels)) {
			return false
		}
	}
	if term.PropertySelector != nil {
		for _, r := range term.PropertySelector.MatchExpressions {
			v, ok := propPropertyValue(m, r.Name)
			if !ok {
				return false
			}
			c := v.Cmp(resource.MustParse(r.Values[0]))
			pass := map[placement.PropertySelectorOperator]bool{
				placement.PropertyGt: c > 0, placement.PropertyGe: c >= 0, placement.PropertyEq: c == 0,
				placement.PropertyNe: c != 0, placement.PropertyLt: c < 0, placement.PropertyLe: c <= 0,
			}[r.Operator]
			if !pass {
				return false
			}
		}
	}
	return true
}

// propPassesRequired: at least one required term matches, or there are none (AFF-REQUIRED).
func propPassesRequired(p *placement.PlacementPolicy, m *member.Member) bool {
	if p == nil || p.Affinity == nil || p.Affinity.ClusterAffinity == nil || p.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	terms := p.Affinity.ClusterAffinity.RequiredDuringSchedulingIgnoredDuringExecution.ClusterSelectorTerms
	if len(terms) == 0 {
		return true
	}
	for _, term := range terms {
		if propMatchesTerm(term, m) {
			return true
		}
	}
	return false
}

// propApplyPlan writes a plan into a binding list as a driver would: Create adds, Update
// and Unschedule replace the binding of the same name (or add it, if there is none, which
// the name checks of TestPropOneLiveBindingPerCluster then report).
func propApplyPlan(bs []*placement.Binding, p scheduler.Plan) []*placement.Binding {
	out := slices.Clone(bs)
	for _, c := range p.Create {
		nb := c.Binding
		out = append(out, &nb)
	}
	for _, c := range slices.Concat(p.Update, p.Unschedule) {
		nb := c.Binding
		if i := slices.IndexFunc(out, func(b *placement.Binding) bool { return b.Name == nb.Name }); i >= 0 {
			out[i] = &nb
		} else {
			out = append(out, &nb)
		}
	}
	return out
}

// propLiveClusters maps each cluster to its live (Scheduled or Bound, not deleting) bindings.
func propLiveClusters(bs []*placement.Binding) map[string][]string {
	out := map[string][]string{}
	for _, b := range bs {
		if propLive(b) {
			out[b.TargetCluster] = append(out[b.TargetCluster], b.Name)
		}
	}
	return out
}

func propSchedule(t *rapid.T, c propCase) scheduler.Plan {
	plan, err := scheduler.Schedule(c.input())
	if err != nil {
		t.Fatalf("Schedule(%#v) error = %v, want nil", c, err)
	}
	return plan
}
