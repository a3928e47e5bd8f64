package staged

// One cluster of a stage (STAGED-EXEC step 2): the binding write that starts it, the check
// that nobody changed the binding since (TSG-CSUR-PREEMPTED), and when it is done or stuck.

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
)

// startCluster marks the cluster started and writes its binding (STAGED-EXEC step 2). A
// binding that already holds exactly what this run would write is left alone.
func (d *decision) startCluster(ss *StageUpdatingStatus, cs *ClusterUpdatingStatus, b *placement.Binding) {
	d.set(&cs.Conditions, condition.True(TypeStarted, ReasonClusterUpdatingStarted, ""))
	msg := RolloutStartedMessage(d.index, d.run.Name)
	if len(d.specDiff(cs, b)) == 0 && b.State == placement.Bound {
		if c, ok := condition.Find(b.Conditions, condition.TypeRolloutStarted); ok && c.Status == metav1.ConditionTrue &&
			c.ObservedGeneration == b.Generation && c.Message == msg {
			return
		}
	}
	nb := b.Copy()
	nb.State = placement.Bound
	nb.ResourceSnapshotName = d.snapshotName
	nb.ClusterResourceOverrideSnapshots = copySlice(cs.ClusterResourceOverrideSnapshots)
	nb.ResourceOverrideSnapshots = copySlice(cs.ResourceOverrideSnapshots)
	nb.ApplyStrategy = d.st.AppliedStrategy.Copy()
	nb.Generation = b.Generation + 1
	condition.Set(&nb.Conditions, condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted, msg), nb.Generation, d.now)
	d.plan.UpdateBindings = append(d.plan.UpdateBindings, Change{
		Binding: nb,
		Reason:  fmt.Sprintf("rolling out resource snapshot %s to cluster %s in stage %s of clusterStagedUpdateRun %s", d.snapshotName, cs.ClusterName, ss.StageName, d.run.Name),
	})
}

// specDiff lists how the binding's spec differs from what the run writes.
func (d *decision) specDiff(cs *ClusterUpdatingStatus, b *placement.Binding) []string {
	var diffs []string
	if b.ResourceSnapshotName != d.snapshotName {
		diffs = append(diffs, fmt.Sprintf("binding has different resourceSnapshotName, want: %s, got: %s", d.snapshotName, b.ResourceSnapshotName))
	}
	if !slices.Equal(b.ClusterResourceOverrideSnapshots, cs.ClusterResourceOverrideSnapshots) {
		diffs = append(diffs, fmt.Sprintf("binding has different clusterResourceOverrideSnapshots, want: %v, got: %v", cs.ClusterResourceOverrideSnapshots, b.ClusterResourceOverrideSnapshots))
	}
	if !slices.Equal(b.ResourceOverrideSnapshots, cs.ResourceOverrideSnapshots) {
		diffs = append(diffs, fmt.Sprintf("binding has different resourceOverrideSnapshots, want: %v, got: %v", cs.ResourceOverrideSnapshots, b.ResourceOverrideSnapshots))
	}
	if !placement.ApplyStrategiesEqual(b.ApplyStrategy, d.st.AppliedStrategy) {
		diffs = append(diffs, fmt.Sprintf("binding has different applyStrategy, want: %s, got: %s", applyString(d.st.AppliedStrategy), applyString(b.ApplyStrategy)))
	}
	return diffs
}

func applyString(a *placement.ApplyStrategy) string {
	if a == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("{type: %s, comparisonOption: %s, whenToApply: %s, whenToTakeOver: %s, allowCoOwnership: %t",
		a.Type, a.ComparisonOption, a.WhenToApply, a.WhenToTakeOver, a.AllowCoOwnership)
	if a.ServerSideApplyConfig != nil {
		s += fmt.Sprintf(", serverSideApplyConfig: {force: %t}", a.ServerSideApplyConfig.ForceConflicts)
	}
	return s + "}"
}

// unexpected checks, after the wait, that the updating cluster's binding still holds what
// the run wrote; otherwise someone else (a concurrent run) changed it (TSG-CSUR-PREEMPTED).
func (d *decision) unexpected(ss *StageUpdatingStatus, cs *ClusterUpdatingStatus, b *placement.Binding) string {
	diffs := d.specDiff(cs, b)
	started := condition.IsTrue(b.Conditions, condition.TypeRolloutStarted, b.Generation)
	if len(diffs) == 0 && b.State == placement.Bound && started {
		return ""
	}
	spec := "no difference"
	if len(diffs) > 0 {
		spec = strings.Join(diffs, "; ")
	}
	return fmt.Sprintf("the clusterResourceBinding of the updating cluster `%s` in the stage `%s` does not have expected status: binding spec diff: %s; binding state (want Bound): %s; binding RolloutStarted (want true): %t, please check if there is concurrent clusterStagedUpdateRun",
		cs.ClusterName, ss.StageName, spec, b.State, started)
}

// clusterDone: the binding's resources are applied and available at its generation (or,
// under ReportDiff, which never makes them Applied or Available, diff reporting completed).
func (d *decision) clusterDone(b *placement.Binding) bool {
	if d.st.AppliedStrategy.TypeOrDefault().ReportsOnly() {
		return condition.IsTrue(b.Conditions, condition.TypeDiffReported, b.Generation)
	}
	return condition.IsTrue(b.Conditions, condition.TypeApplied, b.Generation) &&
		condition.IsTrue(b.Conditions, condition.TypeAvailable, b.Generation)
}

// waitForCluster requeues for the next check and notes a cluster that has been updating
// for the stuck threshold or longer.
func (d *decision) waitForCluster(ss *StageUpdatingStatus, cs *ClusterUpdatingStatus) {
	started, _ := condition.Find(cs.Conditions, TypeStarted)
	left := started.LastTransitionTime.Add(d.timing.StuckThreshold).Sub(d.now)
	if left <= 0 {
		d.stuck, d.stuckIn = cs, ss.StageName
		d.wait(d.timing.ClusterCheckInterval)
		return
	}
	d.wait(min(d.timing.ClusterCheckInterval, left))
}
