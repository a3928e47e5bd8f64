package sim

// Read-only views of the hub's store for the differential test (prod/difftest), which
// compares them with what the production hub writes on a real API server. Kept apart
// from store.go: they decide nothing.

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/staged"
)

// Works returns a copy of every Work the hub holds, in the store's order (by binding).
func (s *Sim) Works() []mhub.Work {
	var out []mhub.Work
	for _, w := range s.store.sortedWorks() {
		c := *w
		c.Manifests = make([]*unstructured.Unstructured, len(w.Manifests))
		for i, m := range w.Manifests {
			c.Manifests[i] = m.DeepCopy()
		}
		out = append(out, c)
	}
	return out
}

// ApprovalRequests returns a copy of every ClusterApprovalRequest, by name.
func (s *Sim) ApprovalRequests() []staged.ClusterApprovalRequest {
	var out []staged.ClusterApprovalRequest
	for _, n := range sortedKeys(s.store.approvals) {
		out = append(out, *s.store.approvals[n].DeepCopy())
	}
	return out
}

// WorkloadBehaviorOf is the behaviour the workload steps so far give an object a member
// applies (the last matching step wins; available when none matches), as the simulated
// member plays it: the differential test's stand-in agents report the same.
func (s *Sim) WorkloadBehaviorOf(member string, o *unstructured.Unstructured) WorkloadBehavior {
	return s.workloadBehavior(member, o)
}
