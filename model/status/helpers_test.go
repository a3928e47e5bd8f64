package status_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/status"
)

var (
	t0 = time.Date(2024, 5, 7, 22, 36, 33, 0, time.UTC)
	t1 = t0.Add(5 * time.Minute)
)

const picked = "picked by scheduling policy"

// Conditions as the other controllers write them on bindings (documentation samples, Appendix A).
var (
	started    = condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, "Detected the new changes on the resources and started the rollout process")
	noOverride = condition.True(condition.TypeOverridden, "NoOverrideSpecified", "No override rules are configured for the selected resources")
	overridden = condition.True(condition.TypeOverridden, "OverriddenSucceeded", "Successfully applied the override rules on the resources")
	synced     = condition.True(condition.TypeWorkSynchronized, "AllWorkSynced", "All of the works are synchronized to the latest")
	applied    = condition.True(condition.TypeApplied, condition.ReasonAllWorkApplied, "All corresponding work objects are applied")
	available  = condition.True(condition.TypeAvailable, condition.ReasonAllWorkAvailable, "All corresponding work objects are available")
	diffDone   = condition.True(condition.TypeDiffReported, "AllWorkHaveDiffReported", "Diff reporting has been completed in all corresponding work objects")
	// blockedOnBinding is what the rollout controller writes on a binding it holds back.
	blockedOnBinding = condition.False(condition.TypeRolloutStarted, condition.ReasonRolloutNotStartedYet, "The resources cannot be updated to the latest because of the rollout strategy")
	// externalPending is an External placement's per-cluster RolloutStarted before a run
	// decides the cluster's index.
	externalPending = unknownCond(condition.TypeRolloutStarted, "RolloutStartedUnknown", "In the process of deciding whether to roll out some version of the resources or not")
)

func healthy() []condition.Condition {
	return []condition.Condition{started, noOverride, synced, applied, available}
}

func notTrackable(work string) condition.Condition {
	return condition.True(condition.TypeAvailable, condition.ReasonWorkNotTrackable, "The availability of work object "+work+" is not trackable")
}

func unknownCond(typ, reason, message string) condition.Condition {
	return condition.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: reason, Message: message}
}

func fulfilled(n int) *condition.Condition {
	c := condition.True(condition.TypeScheduled, condition.ReasonSchedulingPolicyFulfilled,
		fmt.Sprintf("found all cluster needed as specified by the scheduling policy, found %d cluster(s)", n))
	return &c
}

func unfulfilled() *condition.Condition {
	c := condition.False(condition.TypeScheduled, condition.ReasonSchedulingPolicyUnfulfilled, condition.MessageUnfulfilled)
	return &c
}

func pick(cluster string) placement.ClusterDecision {
	return placement.ClusterDecision{ClusterName: cluster, Selected: true, ClusterScore: &placement.ClusterScore{}, Reason: picked}
}

func reject(cluster, reason string) placement.ClusterDecision {
	return placement.ClusterDecision{ClusterName: cluster, Reason: reason}
}

// bound is a Bound binding of crp on cluster, rolled to snapshot, at generation gen, whose
// conditions were all written for gen.
func bound(crp, cluster, snapshot string, gen int64, conds ...condition.Condition) *placement.Binding {
	b := &placement.Binding{
		Name: placement.BindingName(crp, cluster, 0), Placement: crp, TargetCluster: cluster,
		State: placement.Bound, SchedulingPolicySnapshotName: crp + "-0", ResourceSnapshotName: snapshot,
		ClusterDecision: pick(cluster), Generation: gen,
		ApplyStrategy: &placement.ApplyStrategy{Type: placement.ClientSideApply},
	}
	for _, c := range conds {
		condition.Set(&b.Conditions, c, gen, t0)
	}
	return b
}

// scheduledOnly is a binding the scheduler created and nothing rolled yet.
func scheduledOnly(crp, cluster string) *placement.Binding {
	return &placement.Binding{
		Name: placement.BindingName(crp, cluster, 0), Placement: crp, TargetCluster: cluster,
		State: placement.Scheduled, SchedulingPolicySnapshotName: crp + "-0",
		ClusterDecision: pick(cluster), Generation: 1,
	}
}

func with(b *placement.Binding, f func(*placement.Binding)) *placement.Binding {
	f(b)
	return b
}

// timed stamps conditions as a status written at t for generation gen.
func timed(gen int64, t time.Time, cs ...condition.Condition) []condition.Timed {
	out := make([]condition.Timed, len(cs))
	for i, c := range cs {
		out[i] = condition.Timed{Condition: c, ObservedGeneration: gen, LastTransitionTime: t}
	}
	return out
}

// Placement-level conditions.
func crpScheduled(c *condition.Condition) condition.Condition {
	out := *c
	out.Type = status.TypePlacementScheduled
	return out
}

func crpTrue(typ, reason, message string) condition.Condition {
	return condition.True(typ, reason, message)
}

func crpChainTrue(n int) []condition.Condition {
	return []condition.Condition{
		condition.True(status.TypePlacementRolloutStarted, "RolloutStarted", fmt.Sprintf("All %d cluster(s) start rolling out the latest resource", n)),
		condition.True(status.TypePlacementOverridden, "NoOverrideSpecified", "No override rules are configured for the selected resources"),
		condition.True(status.TypePlacementWorkSynchronized, "WorkSynchronized", fmt.Sprintf("Works(s) are succcesfully created or updated in %d target cluster(s)' namespaces", n)),
		condition.True(status.TypePlacementApplied, "ApplySucceeded", fmt.Sprintf("The selected resources are successfully applied to %d cluster(s)", n)),
		condition.True(status.TypePlacementAvailable, "ResourceAvailable", fmt.Sprintf("The selected resources in %d cluster(s) are available now", n)),
	}
}

func scheduledFor(cluster string) condition.Condition {
	return condition.True(condition.TypeScheduled, "Scheduled", fmt.Sprintf(
		"Successfully scheduled resources for placement in %q (affinity score: 0, topology spread score: 0): picked by scheduling policy", cluster))
}

// entry is the expected placementStatuses entry of a selected cluster, stamped at t0 for
// generation 1 unless the case re-stamps it.
func entry(cluster string, conds ...condition.Condition) status.ClusterStatus {
	return status.ClusterStatus{ClusterName: cluster, Conditions: timed(1, t0, append([]condition.Condition{scheduledFor(cluster)}, conds...)...)}
}

func unfilledEntry(cluster, reason string) status.ClusterStatus {
	return status.ClusterStatus{Conditions: timed(1, t0, condition.False(condition.TypeScheduled, "ScheduleFailed", cluster+" is not selected: "+reason))}
}

func cat(css ...[]condition.Condition) []condition.Condition {
	var out []condition.Condition
	for _, cs := range css {
		out = append(out, cs...)
	}
	return out
}

func one(c ...condition.Condition) []condition.Condition { return c }

var namespace = placement.ResourceIdentifier{Version: "v1", Kind: "Namespace", Name: "test-ns"}

// indexed is the one resource a test snapshot of index i selects.
func indexed(i int) placement.ResourceIdentifier {
	return placement.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: fmt.Sprintf("config-%d", i)}
}

// refs describes kept resource snapshots {crp}-{i}-snapshot, each selecting indexed(i).
func refs(crp string, indexes ...int) map[string]status.SnapshotRef {
	out := map[string]status.SnapshotRef{}
	for _, i := range indexes {
		out[refName(crp, i)] = status.SnapshotRef{Index: i, Selected: []placement.ResourceIdentifier{indexed(i)}}
	}
	return out
}

func refName(crp string, i int) string { return fmt.Sprintf("%s-%d-snapshot", crp, i) }
