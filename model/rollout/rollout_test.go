package rollout_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/rollout"
)

const (
	pickN     = placement.PickN
	pickAll   = placement.PickAll
	pickFixed = placement.PickFixed
)

// outcome is what a case expects: target clusters per plan list.
type outcome struct {
	Bind, Delete, Wait, Refresh, Held []string
	RequeueAfter                      time.Duration
}

func summarize(p rollout.Plan) outcome {
	clustersOf := func(cs []rollout.Change) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Binding.TargetCluster)
		}
		return out
	}
	o := outcome{
		Bind: clustersOf(p.Bind), Delete: clustersOf(p.Delete), Wait: clustersOf(p.Wait),
		Refresh: clustersOf(p.Refresh), RequeueAfter: p.RequeueAfter,
	}
	for _, h := range p.Held {
		o.Held = append(o.Held, h.Cluster)
	}
	return o
}

// reasons maps each cluster to the reason of its change, or of its hold.
func reasons(p rollout.Plan) map[string]string {
	out := map[string]string{}
	for _, h := range p.Held {
		out[h.Cluster] = h.Reason
	}
	for _, l := range [][]rollout.Change{p.Bind, p.Delete, p.Wait, p.Refresh} {
		for _, c := range l {
			out[c.Binding.TargetCluster] = c.Reason
		}
	}
	return out
}

type rolloutCase struct {
	name       string
	typ        placement.PlacementType
	n          int32
	names      []string
	mu, ms     string
	period     *int
	noSnapshot bool
	overrides  map[string]rollout.OverrideSnapshots
	apply      *placement.ApplyStrategy
	external   bool
	bindings   []*placement.Binding
	want       outcome
	budget     *rollout.Budget
	reasons    map[string]string
}

func (c rolloutCase) input() rollout.Input {
	in := rollout.Input{
		Placement: "crp", PlacementType: c.typ, NumberOfClusters: c.n, ClusterNames: c.names,
		Bindings: c.bindings, LatestResourceSnapshot: newSnap, Overrides: c.overrides, Now: now,
	}
	if c.noSnapshot {
		in.LatestResourceSnapshot = ""
	}
	if c.external {
		in.Strategy.Type = placement.ExternalStrategy
	}
	if c.mu != "" || c.ms != "" || c.period != nil {
		in.Strategy.RollingUpdate = &placement.RollingUpdateConfig{
			MaxUnavailable: ios(c.mu), MaxSurge: ios(c.ms), UnavailablePeriodSeconds: c.period,
		}
	}
	in.Strategy.ApplyStrategy = c.apply
	return in
}

func ptr[T any](v T) *T { return &v }

// TestDecide is the rollout table: binding states × budgets × availability → which bindings
// roll, which wait and why. Brackets name the section of the KubeFleet documentation a case comes from.
func TestDecide(t *testing.T) {
	const (
		ex1Wait = "waiting: 2 of 3 clusters must stay available (maxUnavailable 1 of target 3) and only 2 are ready"
		zero    = "deleted: unscheduled; the target is 0 clusters, so nothing needs to stay available"
	)
	cases := []rolloutCase{
		// ROLL-EXAMPLE-1 [Safe Rollout › Example 1].
		{
			name: "ROLL-EXAMPLE-1 first rollout binds all three picked clusters",
			typ:  pickN, n: 3, mu: "1", ms: "1",
			bindings: []*placement.Binding{bnd("cluster-1", scheduled), bnd("cluster-2", scheduled), bnd("cluster-3", scheduled)},
			want:     outcome{Bind: []string{"cluster-1", "cluster-2", "cluster-3"}},
			budget:   &rollout.Budget{Target: 3, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 2, MaxToRemove: -2, MaxToAdd: 4},
			reasons: map[string]string{
				"cluster-1": "bound (resource snapshot crp-2-snapshot), newly scheduled: at most 4 clusters may hold resources (target 3 + maxSurge 1) and 0 already do, so 4 may be added",
			},
		},
		{
			name: "ROLL-EXAMPLE-1 a bad image is rolled to exactly one cluster",
			typ:  pickN, n: 3, mu: "1", ms: "1",
			bindings: []*placement.Binding{bnd("cluster-1", bound, ready), bnd("cluster-2", bound, ready), bnd("cluster-3", bound, ready)},
			want: outcome{
				Bind: []string{"cluster-1"}, Wait: []string{"cluster-2", "cluster-3"}, Held: []string{"cluster-2", "cluster-3"},
			},
			budget: &rollout.Budget{Target: 3, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 2, ReadyCount: 3, CanBeReady: 3, MaxToRemove: 1, MaxToAdd: 1},
			reasons: map[string]string{
				"cluster-1": "updated in place (resource snapshot crp-1-snapshot → crp-2-snapshot): 2 of 3 clusters must stay available (maxUnavailable 1 of target 3) and 3 are ready, so 1 may be disrupted at once",
				"cluster-2": "waiting: 2 of 3 clusters must stay available (maxUnavailable 1 of target 3) and 3 are ready, so 1 may be disrupted at once, and that went to bindings ahead (unscheduled first, then by cluster name)",
			},
		},
		{
			name: "ROLL-EXAMPLE-1 the bad image never becomes available, the rest wait and cluster-4 is not used",
			typ:  pickN, n: 3, mu: "1", ms: "1",
			bindings: []*placement.Binding{
				bnd("cluster-1", bound, gen(2), on(newSnap), notAvailable, started),
				bnd("cluster-2", bound, ready, blocked), bnd("cluster-3", bound, ready, blocked),
			},
			want:    outcome{Held: []string{"cluster-2", "cluster-3"}},
			budget:  &rollout.Budget{Target: 3, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 2, ReadyCount: 2, CanBeReady: 3, MaxToRemove: 0, MaxToAdd: 1},
			reasons: map[string]string{"cluster-2": ex1Wait, "cluster-3": ex1Wait},
		},
		{
			name: "ROLL-EXAMPLE-1 with PickN 4 maxSurge brings in cluster-4 while the update stays stuck",
			typ:  pickN, n: 4, mu: "1", ms: "1",
			bindings: []*placement.Binding{
				bnd("cluster-1", bound, gen(2), on(newSnap), notAvailable, started),
				bnd("cluster-2", bound, ready, blocked), bnd("cluster-3", bound, ready, blocked),
				bnd("cluster-4", scheduled),
			},
			want:   outcome{Bind: []string{"cluster-4"}, Held: []string{"cluster-2", "cluster-3"}},
			budget: &rollout.Budget{Target: 4, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 3, ReadyCount: 2, CanBeReady: 3, MaxToRemove: -1, MaxToAdd: 2},
		},
		// ROLL-EXAMPLE-2 [Safe Rollout › Example 2].
		{
			name: "ROLL-EXAMPLE-2 moving west to east binds both east clusters and removes one west cluster",
			typ:  pickN, n: 2, ms: "2",
			bindings: []*placement.Binding{
				bnd("cluster-1", unscheduled, on(newSnap), ready), bnd("cluster-2", unscheduled, on(newSnap), ready),
				bnd("cluster-3", scheduled), bnd("cluster-4", scheduled),
			},
			want:   outcome{Bind: []string{"cluster-3", "cluster-4"}, Delete: []string{"cluster-1"}, Held: []string{"cluster-2"}},
			budget: &rollout.Budget{Target: 2, MaxUnavailable: 1, MaxSurge: 2, MinAvailable: 1, ReadyCount: 2, CanBeReady: 2, MaxToRemove: 1, MaxToAdd: 2},
			reasons: map[string]string{
				"cluster-1": "deleted: unscheduled; 1 of 2 clusters must stay available (maxUnavailable 1 of target 2) and 2 are ready, so 1 may be disrupted at once",
			},
		},
		{
			name: "ROLL-EXAMPLE-2 the last west cluster stays until an east cluster is available",
			typ:  pickN, n: 2, ms: "2",
			bindings: []*placement.Binding{
				bnd("cluster-2", unscheduled, on(newSnap), ready),
				bnd("cluster-3", bound, gen(2), on(newSnap), started), bnd("cluster-4", bound, gen(2), on(newSnap), started),
			},
			want: outcome{Held: []string{"cluster-2"}},
			reasons: map[string]string{
				"cluster-2": "waiting: 1 of 2 clusters must stay available (maxUnavailable 1 of target 2) and only 1 is ready",
			},
		},
		{
			name: "ROLL-EXAMPLE-2 once an east cluster is available the last west cluster is removed",
			typ:  pickN, n: 2, ms: "2",
			bindings: []*placement.Binding{
				bnd("cluster-2", unscheduled, on(newSnap), ready),
				bnd("cluster-3", bound, gen(2), on(newSnap), ready, started), bnd("cluster-4", bound, gen(2), on(newSnap), started),
			},
			want: outcome{Delete: []string{"cluster-2"}},
		},
		// ROLL-STUCK-STRICT [CRP Rollout Failure TSG].
		{
			name: "ROLL-STUCK-STRICT PickN 3 with 2 clusters: 0 may update",
			typ:  pickN, n: 3,
			bindings: []*placement.Binding{bnd("member1", bound, ready, started), bnd("member2", bound, ready, started)},
			want:     outcome{Wait: []string{"member1", "member2"}, Held: []string{"member1", "member2"}},
			budget:   &rollout.Budget{Target: 3, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 2, ReadyCount: 2, CanBeReady: 2, MaxToRemove: 0, MaxToAdd: 2},
			reasons:  map[string]string{"member1": ex1Wait, "member2": ex1Wait},
		},
		{
			name: "ROLL-STUCK-STRICT unblocked by maxUnavailable 2: one cluster updates at once",
			typ:  pickN, n: 3, mu: "2",
			bindings: []*placement.Binding{bnd("member1", bound, ready, blocked), bnd("member2", bound, ready, blocked)},
			want:     outcome{Bind: []string{"member1"}, Held: []string{"member2"}},
			budget:   &rollout.Budget{Target: 3, MaxUnavailable: 2, MaxSurge: 1, MinAvailable: 1, ReadyCount: 2, CanBeReady: 2, MaxToRemove: 1, MaxToAdd: 2},
		},
		{
			name: "ROLL-STUCK-STRICT unblocked by maxUnavailable 2: the other follows once the first is available",
			typ:  pickN, n: 3, mu: "2",
			bindings: []*placement.Binding{
				bnd("member1", bound, gen(2), on(newSnap), ready, started), bnd("member2", bound, ready, blocked),
			},
			want: outcome{Bind: []string{"member2"}},
		},
		{
			name: "ROLL-STUCK-STRICT a third cluster joining is bound; the update waits for it to be available",
			typ:  pickN, n: 3,
			bindings: []*placement.Binding{
				bnd("member1", bound, ready, blocked), bnd("member2", bound, ready, blocked), bnd("member3", scheduled),
			},
			want: outcome{Bind: []string{"member3"}, Held: []string{"member1", "member2"}},
		},
		{
			name: "ROLL-STUCK-STRICT a failed binding counts against maxUnavailable",
			typ:  pickN, n: 3,
			bindings: []*placement.Binding{
				bnd("member1", bound, gen(2), on(newSnap), applyFailed, started),
				bnd("member2", bound, ready, blocked), bnd("member3", bound, ready, blocked),
			},
			want:    outcome{Held: []string{"member2", "member3"}},
			reasons: map[string]string{"member2": ex1Wait},
		},
		// RND-1: percentages of N round up; absolute numbers are absolute.
		{
			name: "RND-1 ceil(25% of 10) = 3 clusters update at once",
			typ:  pickN, n: 10,
			bindings: fleet(10, bound),
			want:     outcome{Bind: clusters(0, 3), Wait: clusters(3, 10), Held: clusters(3, 10)},
			budget:   &rollout.Budget{Target: 10, MaxUnavailable: 3, MaxSurge: 3, MinAvailable: 7, ReadyCount: 10, CanBeReady: 10, MaxToRemove: 3, MaxToAdd: 3},
		},
		{
			name: "RND-1 ceil(25% of 3) = 1", typ: pickN, n: 3, bindings: fleet(3, bound),
			want:   outcome{Bind: clusters(0, 1), Wait: clusters(1, 3), Held: clusters(1, 3)},
			budget: &rollout.Budget{Target: 3, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 2, ReadyCount: 3, CanBeReady: 3, MaxToRemove: 1, MaxToAdd: 1},
		},
		{
			name: "RND-1 ceil(25% of 2) = 1", typ: pickN, n: 2, bindings: fleet(2, bound),
			want:   outcome{Bind: clusters(0, 1), Wait: clusters(1, 2), Held: clusters(1, 2)},
			budget: &rollout.Budget{Target: 2, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 1, ReadyCount: 2, CanBeReady: 2, MaxToRemove: 1, MaxToAdd: 1},
		},
		{
			name: "RND-1 ceil(25% of 4) = 1", typ: pickN, n: 4, bindings: fleet(4, bound),
			want:   outcome{Bind: clusters(0, 1), Wait: clusters(1, 4), Held: clusters(1, 4)},
			budget: &rollout.Budget{Target: 4, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 3, ReadyCount: 4, CanBeReady: 4, MaxToRemove: 1, MaxToAdd: 1},
		},
		{
			name: "RND-1 ceil(25% of 1) = 1: a single cluster updates", typ: pickN, n: 1, bindings: fleet(1, bound),
			want:   outcome{Bind: clusters(0, 1)},
			budget: &rollout.Budget{Target: 1, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 0, ReadyCount: 1, CanBeReady: 1, MaxToRemove: 1, MaxToAdd: 1},
		},
		{
			name: "RND-1 100% of N lets every cluster update", typ: pickN, n: 4, mu: "100%", ms: "100%", bindings: fleet(4, bound),
			want:   outcome{Bind: clusters(0, 4)},
			budget: &rollout.Budget{Target: 4, MaxUnavailable: 4, MaxSurge: 4, MinAvailable: 0, ReadyCount: 4, CanBeReady: 4, MaxToRemove: 4, MaxToAdd: 4},
		},
		{
			name: "RND-1 an integer 1 is absolute, not 1% of 10", typ: pickN, n: 10, mu: "1", ms: "1", bindings: fleet(10, bound),
			want:   outcome{Bind: clusters(0, 1), Wait: clusters(1, 10), Held: clusters(1, 10)},
			budget: &rollout.Budget{Target: 10, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 9, ReadyCount: 10, CanBeReady: 10, MaxToRemove: 1, MaxToAdd: 1},
		},
		{
			name: "maxUnavailable above the target lets every cluster update", typ: pickN, n: 3, mu: "5", bindings: fleet(3, bound),
			want:   outcome{Bind: clusters(0, 3)},
			budget: &rollout.Budget{Target: 3, MaxUnavailable: 5, MaxSurge: 1, MinAvailable: -2, ReadyCount: 3, CanBeReady: 3, MaxToRemove: 5, MaxToAdd: 1},
		},
		// ROLL-UNAVAILABLE-PERIOD: untrackable works are ready unavailablePeriodSeconds after applied.
		{
			name: "an untrackable work gates the next update until unavailablePeriodSeconds pass",
			typ:  pickN, n: 3,
			bindings: []*placement.Binding{
				bnd("c1", bound, gen(2), on(newSnap), untrackable(20*time.Second), started),
				bnd("c2", bound, ready, blocked), bnd("c3", bound, ready, blocked),
			},
			want:    outcome{Held: []string{"c2", "c3"}, RequeueAfter: 40 * time.Second},
			reasons: map[string]string{"c2": ex1Wait},
		},
		{
			name: "RequeueAfter is the earliest time an untrackable binding becomes ready",
			typ:  pickN, n: 4, mu: "1",
			bindings: []*placement.Binding{
				bnd("c1", bound, gen(2), on(newSnap), untrackable(20*time.Second), started),
				bnd("c2", bound, gen(2), on(newSnap), untrackable(50*time.Second), started),
				bnd("c3", bound, ready, blocked), bnd("c4", bound, ready, blocked),
			},
			want: outcome{Held: []string{"c3", "c4"}, RequeueAfter: 10 * time.Second},
		},
		{
			name: "an untrackable work is ready exactly unavailablePeriodSeconds after it turned available",
			typ:  pickN, n: 3,
			bindings: []*placement.Binding{
				bnd("c1", bound, gen(2), on(newSnap), untrackable(60*time.Second), started),
				bnd("c2", bound, ready, blocked), bnd("c3", bound, ready, blocked),
			},
			want: outcome{Bind: []string{"c2"}, Held: []string{"c3"}},
		},
		{
			name: "a custom unavailablePeriodSeconds of 10 frees the rollout sooner",
			typ:  pickN, n: 3, period: ptr(10),
			bindings: []*placement.Binding{
				bnd("c1", bound, gen(2), on(newSnap), untrackable(20*time.Second), started),
				bnd("c2", bound, ready, blocked), bnd("c3", bound, ready, blocked),
			},
			want: outcome{Bind: []string{"c2"}, Held: []string{"c3"}},
		},
		{
			name: "an untrackable binding does not requeue when nothing waits for it",
			typ:  pickN, n: 3,
			bindings: []*placement.Binding{
				bnd("c1", bound, gen(2), on(newSnap), untrackable(20*time.Second), started),
				bnd("c2", bound, on(newSnap), ready, started), bnd("c3", bound, on(newSnap), ready, started),
			},
			want: outcome{},
		},
		// Failed bindings.
		{
			name: "a binding that failed to apply is updated outside the budget",
			typ:  pickN, n: 3,
			bindings: []*placement.Binding{
				bnd("c1", bound, applyFailed, started), bnd("c2", bound, ready, blocked), bnd("c3", bound, ready, blocked),
			},
			want:   outcome{Bind: []string{"c1"}, Held: []string{"c2", "c3"}},
			budget: &rollout.Budget{Target: 3, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 2, ReadyCount: 2, CanBeReady: 3, MaxToRemove: 0, MaxToAdd: 1},
			reasons: map[string]string{
				"c1": "updated in place (resource snapshot crp-1-snapshot → crp-2-snapshot) outside the budget: delivering the resources failed, so the cluster is unavailable already",
			},
		},
		{
			name: "every failed binding is updated even when nothing else may be disrupted",
			typ:  pickN, n: 3, mu: "0", ms: "1",
			bindings: []*placement.Binding{
				bnd("c1", bound, applyFailed), bnd("c2", bound, applyFailed), bnd("c3", bound, ready, blocked),
			},
			want: outcome{Bind: []string{"c1", "c2"}, Held: []string{"c3"}},
		},
		{
			name: "Applied=False of an older generation is not a failure",
			typ:  pickN, n: 3,
			bindings: []*placement.Binding{
				bnd("c1", bound, gen(2), cond(condition.TypeApplied, no, condition.ReasonNotAllWorkApplied, -1, longAgo), blocked),
				bnd("c2", bound, ready, blocked), bnd("c3", bound, ready, blocked),
			},
			want: outcome{Held: []string{"c1", "c2", "c3"}},
		},
		// Surge.
		{
			name: "first rollout to fresh clusters is limited only by N + maxSurge, not maxUnavailable",
			typ:  pickN, n: 4,
			bindings: []*placement.Binding{bnd("c1", scheduled), bnd("c2", scheduled), bnd("c3", scheduled), bnd("c4", scheduled)},
			want:     outcome{Bind: []string{"c1", "c2", "c3", "c4"}},
			budget:   &rollout.Budget{Target: 4, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 3, MaxToRemove: -3, MaxToAdd: 5},
		},
		{
			name: "maxSurge caps new clusters while old ones still hold resources",
			typ:  pickN, n: 3, ms: "1",
			bindings: []*placement.Binding{
				bnd("c1", unscheduled, on(newSnap), ready), bnd("c2", unscheduled, on(newSnap), ready),
				bnd("c3", scheduled), bnd("c4", scheduled), bnd("c5", scheduled),
			},
			want: outcome{Bind: []string{"c3", "c4"}, Wait: []string{"c5"}, Held: []string{"c1", "c2", "c5"}},
			reasons: map[string]string{
				"c5": "waiting: at most 4 clusters may hold resources (target 3 + maxSurge 1) and 2 already do, so 2 may be added, and those went to clusters ahead by name",
			},
		},
		{
			name: "a new cluster waits when N + maxSurge clusters already hold resources",
			typ:  pickN, n: 2, ms: "1",
			bindings: []*placement.Binding{
				bnd("c1", unscheduled, on(newSnap), ready), bnd("c2", bound, on(newSnap), ready, started),
				bnd("c3", bound, on(newSnap), ready, started), bnd("c4", scheduled),
			},
			want: outcome{Delete: []string{"c1"}, Wait: []string{"c4"}, Held: []string{"c4"}},
			reasons: map[string]string{
				"c4": "waiting: at most 3 clusters may hold resources (target 2 + maxSurge 1) and 3 already do",
			},
		},
		{
			// Upstream leaves a failed binding out of the surge count; it still holds resources,
			// so fleetsim counts it and the placement never exceeds target + maxSurge.
			name: "an unscheduled binding that failed still counts against maxSurge",
			typ:  pickN, n: 2, ms: "1",
			bindings: []*placement.Binding{
				bnd("c1", unscheduled, applyFailed), bnd("c2", unscheduled, on(newSnap), ready),
				bnd("c3", scheduled), bnd("c4", scheduled),
			},
			want:   outcome{Bind: []string{"c3"}, Wait: []string{"c4"}, Held: []string{"c1", "c2", "c4"}},
			budget: &rollout.Budget{Target: 2, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 1, ReadyCount: 1, CanBeReady: 2, MaxToRemove: 0, MaxToAdd: 1},
		},
		{
			name: "maxUnavailable 0 with maxSurge 1: in-place updates are stuck, surge still adds a cluster",
			typ:  pickN, n: 4, mu: "0", ms: "1",
			bindings: concat(fleet(3, bound, blocked), []*placement.Binding{bnd("c03", scheduled)}),
			want:     outcome{Bind: []string{"c03"}, Held: clusters(0, 3)},
			budget:   &rollout.Budget{Target: 4, MaxUnavailable: 0, MaxSurge: 1, MinAvailable: 4, ReadyCount: 3, CanBeReady: 3, MaxToRemove: -1, MaxToAdd: 2},
		},
		{
			name: "maxUnavailable 0 with maxSurge 1 moves a placement without downtime: new one first",
			typ:  pickN, n: 1, mu: "0", ms: "1",
			bindings: []*placement.Binding{bnd("c1", unscheduled, on(newSnap), ready), bnd("c2", scheduled)},
			want:     outcome{Bind: []string{"c2"}, Held: []string{"c1"}},
			reasons: map[string]string{
				"c1": "waiting: 1 of 1 clusters must stay available (maxUnavailable 0 of target 1) and only 1 is ready",
			},
		},
		{
			name: "maxUnavailable 0 with maxSurge 1 moves a placement without downtime: old one once the new is ready",
			typ:  pickN, n: 1, mu: "0", ms: "1",
			bindings: []*placement.Binding{bnd("c1", unscheduled, on(newSnap), ready), bnd("c2", bound, gen(2), on(newSnap), ready, started)},
			want:     outcome{Delete: []string{"c1"}},
		},
		// Fix 1: shrink to zero.
		{
			name: "shrink to zero: PickN 0 deletes every unscheduled binding, ready or not",
			typ:  pickN, n: 0,
			bindings: []*placement.Binding{
				bnd("c1", unscheduled, ready), bnd("c2", unscheduled, notAvailable),
				bnd("c3", unscheduled, untrackable(5*time.Second)), bnd("c4", unscheduled, applyFailed),
			},
			want:    outcome{Delete: []string{"c1", "c2", "c3", "c4"}},
			budget:  &rollout.Budget{Target: 0, ReadyCount: 1, CanBeReady: 4, MaxToRemove: 4, MaxToAdd: -4},
			reasons: map[string]string{"c2": zero},
		},
		{
			name:     "shrink to zero: PickAll once every cluster is unscheduled",
			typ:      pickAll,
			bindings: []*placement.Binding{bnd("c1", unscheduled, notAvailable), bnd("c2", unscheduled), bnd("c3", unscheduled, ready, deleting)},
			want:     outcome{Delete: []string{"c1", "c2"}},
		},
		{
			name: "shrink to zero with maxUnavailable 0",
			typ:  pickN, n: 0, mu: "0", ms: "1",
			bindings: []*placement.Binding{bnd("c1", unscheduled, notAvailable), bnd("c2", unscheduled, untrackable(time.Second))},
			want:     outcome{Delete: []string{"c1", "c2"}},
		},
		// Fix 2: a deleting binding is counted, not a stall.
		{
			name: "a binding being deleted does not stall the others",
			typ:  pickN, n: 4, mu: "50%",
			bindings: concat([]*placement.Binding{bnd("c00", bound, on(newSnap), ready, started, deleting)},
				fleet(4, bound, blocked)[1:], []*placement.Binding{bnd("c04", scheduled)}),
			want:   outcome{Bind: []string{"c01", "c04"}, Held: []string{"c02", "c03"}},
			budget: &rollout.Budget{Target: 4, MaxUnavailable: 2, MaxSurge: 1, MinAvailable: 2, ReadyCount: 4, Leaving: 1, CanBeReady: 4, MaxToRemove: 1, MaxToAdd: 1},
		},
		{
			name: "a ready unscheduled binding being deleted counts as about to be unavailable",
			typ:  pickN, n: 2,
			bindings: []*placement.Binding{
				bnd("c1", unscheduled, ready, deleting), bnd("c2", bound, ready, blocked), bnd("c3", bound, ready, blocked),
			},
			want: outcome{Bind: []string{"c2"}, Held: []string{"c3"}},
			reasons: map[string]string{
				"c3": "waiting: 1 of 2 clusters must stay available (maxUnavailable 1 of target 2) and 2 are ready besides 1 ready one being deleted, so 1 may be disrupted at once, and that went to bindings ahead (unscheduled first, then by cluster name)",
			},
		},
		{
			// c3 is not available at its generation: it has failed, so its update costs no budget.
			name: "a stale bound binding being deleted is neither updated nor waiting",
			typ:  pickN, n: 3, mu: "2",
			bindings: []*placement.Binding{
				bnd("c1", bound, ready, deleting), bnd("c2", bound, ready, blocked), bnd("c3", bound, notAvailable, blocked),
			},
			want:   outcome{Bind: []string{"c3"}, Held: []string{"c2"}},
			budget: &rollout.Budget{Target: 3, MaxUnavailable: 2, MaxSurge: 1, MinAvailable: 1, ReadyCount: 2, Leaving: 1, CanBeReady: 3, MaxToRemove: 0, MaxToAdd: 1},
		},
		{
			name: "an unready binding being deleted changes no budget",
			typ:  pickN, n: 2,
			bindings: []*placement.Binding{
				bnd("c1", unscheduled, notAvailable, deleting), bnd("c2", bound, ready, blocked), bnd("c3", bound, ready, blocked),
			},
			want: outcome{Bind: []string{"c2"}, Held: []string{"c3"}},
		},
		{
			name: "a new binding waits while its cluster's previous binding is being deleted; others roll",
			typ:  pickN, n: 2,
			bindings: []*placement.Binding{
				bnd("c1", unscheduled, named("crp-c1-old"), ready, deleting), bnd("c1", scheduled), bnd("c2", scheduled),
			},
			want: outcome{Bind: []string{"c2"}, Wait: []string{"c1"}, Held: []string{"c1"}},
			reasons: map[string]string{
				"c1": "waiting: binding crp-c1-old on the same cluster is still being deleted",
			},
		},
		{
			name: "a scheduled binding being deleted is ignored",
			typ:  pickN, n: 1,
			bindings: []*placement.Binding{bnd("c1", scheduled, deleting)},
			want:     outcome{},
		},
		// No resource snapshot yet.
		{
			name: "no resource snapshot yet: scheduled bindings wait", typ: pickN, n: 2, noSnapshot: true,
			bindings: []*placement.Binding{bnd("c1", scheduled), bnd("c2", scheduled)},
			want:     outcome{Wait: []string{"c1", "c2"}, Held: []string{"c1", "c2"}},
			reasons:  map[string]string{"c1": "waiting: no resource snapshot yet"},
		},
		{
			name: "no resource snapshot yet: bound bindings stay, unscheduled ones are deleted within budget",
			typ:  pickN, n: 1, noSnapshot: true,
			bindings: []*placement.Binding{bnd("c1", unscheduled, ready), bnd("c2", bound, ready, started)},
			want:     outcome{Delete: []string{"c1"}},
		},
		// Targets.
		{
			name:     "PickAll target counts live clusters; unscheduled bindings are removed before updates",
			typ:      pickAll,
			bindings: concat(fleet(5, bound, blocked), []*placement.Binding{bnd("c05", unscheduled, ready)}),
			want:     outcome{Bind: clusters(0, 2), Delete: []string{"c05"}, Held: clusters(2, 5)},
			budget:   &rollout.Budget{Target: 5, MaxUnavailable: 2, MaxSurge: 2, MinAvailable: 3, ReadyCount: 6, CanBeReady: 6, MaxToRemove: 3, MaxToAdd: 1},
		},
		{
			name: "PickFixed target is the number of cluster names, even with fewer bindings",
			typ:  pickFixed, names: []string{"c00", "c01", "c02", "c03"},
			bindings: fleet(3, bound, blocked),
			want:     outcome{Held: clusters(0, 3)},
			budget:   &rollout.Budget{Target: 4, MaxUnavailable: 1, MaxSurge: 1, MinAvailable: 3, ReadyCount: 3, CanBeReady: 3, MaxToRemove: 0, MaxToAdd: 2},
		},
		// What makes a binding stale, and conditions.
		{
			name: "up-to-date bindings need nothing",
			typ:  pickN, n: 3,
			bindings: fleet(3, bound, on(newSnap), started),
			want:     outcome{},
		},
		{
			name: "a blocked condition of an older generation is written again",
			typ:  pickN, n: 3,
			bindings: fleet(3, bound, cond(condition.TypeRolloutStarted, no, condition.ReasonRolloutNotStartedYet, -1, longAgo)),
			want:     outcome{Bind: clusters(0, 1), Wait: clusters(1, 3), Held: clusters(1, 3)},
		},
		{
			name: "changed override snapshots make a binding stale",
			typ:  pickN, n: 1,
			overrides: map[string]rollout.OverrideSnapshots{"c1": {ClusterResourceOverrideSnapshots: []string{"cro-1-1"}}},
			bindings:  []*placement.Binding{bnd("c1", bound, on(newSnap), cros("cro-1-0"), ready, started)},
			want:      outcome{Bind: []string{"c1"}},
			reasons: map[string]string{
				"c1": "updated in place (override snapshots): 0 of 1 clusters must stay available (maxUnavailable 1 of target 1) and 1 is ready, so 1 may be disrupted at once",
			},
		},
		{
			name: "override snapshots listed in another order are not stale",
			typ:  pickN, n: 1,
			overrides: map[string]rollout.OverrideSnapshots{"c1": {
				ClusterResourceOverrideSnapshots: []string{"a", "b"},
				ResourceOverrideSnapshots:        []placement.NamespacedName{{Namespace: "x", Name: "ro"}, {Namespace: "w", Name: "ro"}},
			}},
			bindings: []*placement.Binding{bnd("c1", bound, on(newSnap), cros("b", "a"), func(b *placement.Binding) {
				b.ResourceOverrideSnapshots = []placement.NamespacedName{{Namespace: "w", Name: "ro"}, {Namespace: "x", Name: "ro"}}
			}, ready, started)},
			want: outcome{},
		},
		{
			name: "a changed apply strategy makes a binding stale",
			typ:  pickN, n: 2, mu: "2",
			apply:    &placement.ApplyStrategy{Type: placement.ServerSideApply},
			bindings: []*placement.Binding{bnd("c1", bound, on(newSnap), ready, started), bnd("c2", bound, on(newSnap), applyType(placement.ServerSideApply), ready, started)},
			want:     outcome{Bind: []string{"c1"}},
		},
		{
			name: "a nil apply strategy equals the zero value",
			typ:  pickN, n: 2,
			apply:    &placement.ApplyStrategy{},
			bindings: []*placement.Binding{bnd("c1", bound, on(newSnap), ready, started), bnd("c2", bound, on(newSnap), applyType(""), ready, started)},
			want:     outcome{},
		},
		{
			name: "an up-to-date binding still marked blocked is refreshed to started",
			typ:  pickN, n: 2,
			bindings: []*placement.Binding{bnd("c1", bound, on(newSnap), ready, blocked), bnd("c2", bound, on(newSnap), ready, started)},
			want:     outcome{Refresh: []string{"c1"}},
		},
		{
			name: "ReportDiff bindings are ready once diffs are reported",
			typ:  pickN, n: 2,
			apply: &placement.ApplyStrategy{Type: placement.ReportDiff},
			bindings: []*placement.Binding{
				bnd("c1", bound, applyType(placement.ReportDiff), cond(condition.TypeDiffReported, yes, "AllWorkHaveDiffReported", 0, longAgo), started),
				bnd("c2", bound, applyType(placement.ReportDiff), cond(condition.TypeDiffReported, yes, "AllWorkHaveDiffReported", 0, longAgo), started),
			},
			want: outcome{Bind: []string{"c1"}, Wait: []string{"c2"}, Held: []string{"c2"}},
		},
		{
			name: "External strategy is left to staged update runs",
			typ:  pickN, n: 2, external: true,
			bindings: []*placement.Binding{bnd("c1", scheduled), bnd("c2", bound, ready)},
			want:     outcome{},
			budget:   &rollout.Budget{},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.input()
			before := deepCopy(in.Bindings)
			p := rollout.Decide(in)
			if diff := cmp.Diff(c.want, summarize(p), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide(%s) = %v, want %v (-want +got):\n%s", c.name, summarize(p), c.want, diff)
			}
			if c.budget != nil {
				if diff := cmp.Diff(*c.budget, p.Budget); diff != "" {
					t.Errorf("Decide(%s).Budget = %+v, want %+v (-want +got):\n%s", c.name, p.Budget, *c.budget, diff)
				}
			}
			got := reasons(p)
			for cl, want := range c.reasons {
				if got[cl] != want {
					t.Errorf("Decide(%s) reason for %s = %q, want %q", c.name, cl, got[cl], want)
				}
			}
			if diff := cmp.Diff(before, deref(in.Bindings), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide(%s) modified its input (-before +after):\n%s", c.name, diff)
			}
		})
	}
	if len(cases) < 30 {
		t.Errorf("rollout table has %d cases, want at least 30", len(cases))
	}
}

// TestBindContent checks the whole binding a Bind change writes.
func TestBindContent(t *testing.T) {
	t0 := now.Add(-time.Hour)
	ssa := &placement.ApplyStrategy{Type: placement.ServerSideApply, ServerSideApplyConfig: &struct {
		ForceConflicts bool `json:"force,omitempty"`
	}{ForceConflicts: true}}
	in := rollout.Input{
		Placement: "crp", PlacementType: pickN, NumberOfClusters: 2, LatestResourceSnapshot: newSnap, Now: now,
		Strategy: placement.RolloutStrategy{
			ApplyStrategy: ssa, RollingUpdate: &placement.RollingUpdateConfig{MaxUnavailable: ios("2")},
		},
		Overrides: map[string]rollout.OverrideSnapshots{
			"c1": {ClusterResourceOverrideSnapshots: []string{"cro-b-0", "cro-a-0"},
				ResourceOverrideSnapshots: []placement.NamespacedName{{Namespace: "ns2", Name: "ro-0"}, {Namespace: "ns1", Name: "ro-0"}}},
		},
		Bindings: []*placement.Binding{
			bnd("c1", scheduled, named("crp-c1-1234abcd")),
			bnd("c2", bound, gen(3), cond(condition.TypeRolloutStarted, no, condition.ReasonRolloutNotStartedYet, 0, t0),
				cond(condition.TypeApplied, yes, condition.ReasonAllWorkApplied, 0, t0),
				cond(condition.TypeAvailable, yes, condition.ReasonAllWorkAvailable, 0, t0)),
		},
	}
	started := func(g int64) condition.Timed {
		return condition.Timed{
			Condition:          condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, rollout.MessageRolloutStarted),
			ObservedGeneration: g, LastTransitionTime: now,
		}
	}
	want := []rollout.Change{
		{
			Binding: placement.Binding{
				Name: "crp-c1-1234abcd", Placement: "crp", TargetCluster: "c1", State: bound, Generation: 2,
				ResourceSnapshotName:             newSnap,
				ClusterResourceOverrideSnapshots: []string{"cro-a-0", "cro-b-0"},
				ResourceOverrideSnapshots:        []placement.NamespacedName{{Namespace: "ns1", Name: "ro-0"}, {Namespace: "ns2", Name: "ro-0"}},
				ApplyStrategy:                    ssa,
				Conditions:                       []condition.Timed{started(2)},
			},
			Reason: "bound (resource snapshot crp-2-snapshot, override snapshots, apply strategy), newly scheduled: at most 3 clusters may hold resources (target 2 + maxSurge 1) and 1 already does, so 2 may be added",
		},
		{
			Binding: placement.Binding{
				Name: "crp-c2", Placement: "crp", TargetCluster: "c2", State: bound, Generation: 4,
				ResourceSnapshotName: newSnap, ApplyStrategy: ssa,
				Conditions: []condition.Timed{
					started(4),
					in.Bindings[1].Conditions[1], in.Bindings[1].Conditions[2],
				},
			},
			Reason: "updated in place (resource snapshot crp-1-snapshot → crp-2-snapshot, apply strategy): 0 of 2 clusters must stay available (maxUnavailable 2 of target 2) and 1 is ready, so 1 may be disrupted at once",
		},
	}
	p := rollout.Decide(in)
	if diff := cmp.Diff(want, p.Bind); diff != "" {
		t.Errorf("Decide(bind content).Bind = %v, want %v (-want +got):\n%s", p.Bind, want, diff)
	}
	if p.Bind[0].Binding.ApplyStrategy == ssa || p.Bind[0].Binding.ApplyStrategy.ServerSideApplyConfig == ssa.ServerSideApplyConfig {
		t.Errorf("Decide(bind content) shares the placement's apply strategy with the binding; want a copy")
	}
	if &p.Bind[1].Binding.Conditions[0] == &in.Bindings[1].Conditions[0] {
		t.Errorf("Decide(bind content) shares conditions with its input")
	}
}

// TestWaitContent checks the conditions Wait and Refresh write and that they are written once.
func TestWaitContent(t *testing.T) {
	t0 := now.Add(-time.Hour)
	in := rollout.Input{
		Placement: "crp", PlacementType: pickN, NumberOfClusters: 3, LatestResourceSnapshot: newSnap, Now: now,
		Bindings: []*placement.Binding{
			bnd("c1", bound, gen(5), ready, cond(condition.TypeRolloutStarted, yes, condition.ReasonRolloutStarted, -1, t0)),
			bnd("c2", bound, gen(5), ready, cond(condition.TypeRolloutStarted, yes, condition.ReasonRolloutStarted, -1, t0)),
			bnd("c3", bound, gen(2), on(newSnap), notAvailable, cond(condition.TypeRolloutStarted, no, condition.ReasonRolloutNotStartedYet, 0, t0)),
		},
	}
	p := rollout.Decide(in)
	blockedAt := func(g int64, at time.Time) condition.Timed {
		return condition.Timed{
			Condition:          condition.False(condition.TypeRolloutStarted, condition.ReasonRolloutNotStartedYet, rollout.MessageRolloutNotStartedYet),
			ObservedGeneration: g, LastTransitionTime: at,
		}
	}
	var got []condition.Timed
	for _, c := range p.Wait {
		rs, _ := condition.Find(c.Binding.Conditions, condition.TypeRolloutStarted)
		got = append(got, rs)
	}
	want := []condition.Timed{blockedAt(5, now), blockedAt(5, now)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decide(wait content) RolloutStarted of Wait = %v, want %v (-want +got):\n%s", got, want, diff)
	}
	var gotRefresh []condition.Timed
	for _, c := range p.Refresh {
		rs, _ := condition.Find(c.Binding.Conditions, condition.TypeRolloutStarted)
		gotRefresh = append(gotRefresh, rs)
	}
	wantRefresh := []condition.Timed{{
		Condition:          condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, rollout.MessageRolloutStarted),
		ObservedGeneration: 2, LastTransitionTime: now,
	}}
	if diff := cmp.Diff(wantRefresh, gotRefresh); diff != "" {
		t.Errorf("Decide(wait content) RolloutStarted of Refresh = %v, want %v (-want +got):\n%s", gotRefresh, wantRefresh, diff)
	}

	// Apply the conditions and decide again, later: nothing more to write.
	next := map[string]*placement.Binding{}
	for _, l := range [][]rollout.Change{p.Wait, p.Refresh} {
		for _, c := range l {
			b := c.Binding
			next[b.Name] = &b
		}
	}
	for i, b := range in.Bindings {
		if nb, ok := next[b.Name]; ok {
			in.Bindings[i] = nb
		}
	}
	in.Now = now.Add(time.Minute)
	again := rollout.Decide(in)
	if !again.Empty() {
		t.Errorf("Decide(after applying the plan) = %v, want an empty plan", summarize(again))
	}
	if fmt.Sprint(summarize(again).Held) != "[c1 c2]" {
		t.Errorf("Decide(after applying the plan).Held = %v, want [c1 c2]", summarize(again).Held)
	}
}

func TestTarget(t *testing.T) {
	live := []*placement.Binding{
		bnd("c1", scheduled), bnd("c2", bound), bnd("c3", unscheduled), bnd("c4", bound, deleting),
		bnd("c2", scheduled, named("dup")), nil,
	}
	cases := []struct {
		name  string
		typ   placement.PlacementType
		n     int32
		names []string
		want  int
	}{
		{"PickN uses numberOfClusters even when fewer are scheduled", pickN, 5, nil, 5},
		{"PickN 0", pickN, 0, nil, 0},
		{"PickN negative counts as 0", pickN, -1, nil, 0},
		{"PickFixed uses the number of names", pickFixed, 9, []string{"a", "b", "c"}, 3},
		{"PickAll counts distinct clusters with a live binding", pickAll, 9, nil, 2},
		{"an empty type is PickAll", "", 9, nil, 2},
	}
	for _, c := range cases {
		if got := rollout.Target(c.typ, c.n, c.names, live); got != c.want {
			t.Errorf("Target(%s) = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestReady(t *testing.T) {
	period := time.Minute
	cases := []struct {
		name  string
		b     *placement.Binding
		ready bool
		until time.Duration
	}{
		{"trackable and available", bnd("c", bound, ready), true, 0},
		{"no Available condition", bnd("c", bound), false, 0},
		{"Available False", bnd("c", bound, notAvailable), false, 0},
		{"Available True at an older generation", bnd("c", bound, gen(2), cond(condition.TypeAvailable, yes, condition.ReasonAllWorkAvailable, -1, longAgo)), false, 0},
		{"untrackable inside the period", bnd("c", bound, untrackable(15*time.Second)), false, 45 * time.Second},
		{"untrackable just now", bnd("c", bound, untrackable(0)), false, time.Minute},
		{"untrackable exactly at the cutoff", bnd("c", bound, untrackable(time.Minute)), true, 0},
		{"untrackable after the cutoff", bnd("c", bound, untrackable(2*time.Minute)), true, 0},
		{"ReportDiff with diffs reported", bnd("c", bound, applyType(placement.ReportDiff), cond(condition.TypeDiffReported, yes, "AllWorkHaveDiffReported", 0, now)), true, 0},
		{"ReportDiff still reporting", bnd("c", bound, applyType(placement.ReportDiff), cond(condition.TypeDiffReported, no, "NotAllWorkHaveDiffReported", 0, now)), false, 0},
		{"DiffReported does not count for other apply types", bnd("c", bound, cond(condition.TypeDiffReported, yes, "AllWorkHaveDiffReported", 0, now)), false, 0},
	}
	for _, c := range cases {
		ready, until := rollout.Ready(c.b, now, period)
		if ready != c.ready || until != c.until {
			t.Errorf("Ready(%s) = %v, %v, want %v, %v", c.name, ready, until, c.ready, c.until)
		}
	}
}

func TestScaled(t *testing.T) {
	cases := []struct {
		v    string
		n    int
		want int
	}{
		{"25%", 10, 3}, {"25%", 3, 1}, {"25%", 2, 1}, {"25%", 4, 1}, {"25%", 1, 1}, {"25%", 0, 0},
		{"100%", 7, 7}, {"0%", 7, 0}, {"1", 10, 1}, {"0", 10, 0}, {"5", 3, 5}, {"", 10, 3},
	}
	for _, c := range cases {
		if got := rollout.Scaled(ios(c.v), c.n, rollout.DefaultMaxUnavailable); got != c.want {
			t.Errorf("Scaled(%q of %d) = %d, want %d", c.v, c.n, got, c.want)
		}
	}
	s := intstrString("3")
	if got := rollout.Scaled(&s, 10, "25%"); got != 3 {
		t.Errorf(`Scaled("3" as a string of 10) = %d, want 3`, got)
	}
	bad := intstrString("lots")
	if got := rollout.Scaled(&bad, 10, "25%"); got != 3 {
		t.Errorf(`Scaled("lots" of 10) = %d, want the default's 3`, got)
	}
}

func intstrString(s string) intstr.IntOrString { return intstr.FromString(s) }
