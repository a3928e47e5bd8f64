package staged

// What a run depends on (STAGED-FAIL): its placement, still External; a status that still
// matches the strategy snapshot; the policy snapshot and the set of clusters it was
// initialized with; its resource snapshot. revalidate re-checks them on every reconcile after
// initialization; initialization (init.go) uses the same lookups.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/fleetsim/fleetsim/model/placement"
)

// revalidate re-checks, on every reconcile after initialization, what the run depends on
// (STAGED-FAIL). It returns the failure message, or "".
func (d *decision) revalidate() string {
	p := d.placement()
	if p == nil {
		return PrefixInitClientError + DetailPlacementNotFound
	}
	if msg := notExternal(p); msg != "" {
		return PrefixInitClientError + msg
	}
	if msg := d.checkStatusShape(); msg != "" {
		return PrefixUnexpected + msg
	}
	if idx := strconv.Itoa(p.PolicySnapshotIndex); idx != d.st.PolicySnapshotIndexUsed {
		return PrefixSchedulingChanged + fmt.Sprintf("the latest policy snapshot index is `%s`, but the run uses `%s`", idx, d.st.PolicySnapshotIndexUsed)
	}
	if p.ObservedClusterCount != d.st.PolicyObservedClusterCount {
		return PrefixSchedulingChanged + fmt.Sprintf("the policy snapshot now observes %d cluster(s), but the run observed %d", p.ObservedClusterCount, d.st.PolicyObservedClusterCount)
	}
	planned := map[string]bool{}
	var missing []string
	for i := range d.st.StagesStatus {
		for _, c := range d.st.StagesStatus[i].Clusters {
			planned[c.ClusterName] = true
			if d.live[c.ClusterName] == nil {
				missing = append(missing, c.ClusterName)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return PrefixSchedulingChanged + fmt.Sprintf("cluster `%s` is no longer selected", missing[0])
	}
	var added []string
	for c := range d.live {
		if !planned[c] {
			added = append(added, c)
		}
	}
	if len(added) > 0 {
		slices.Sort(added)
		return PrefixSchedulingChanged + fmt.Sprintf("cluster `%s` is newly selected", added[0])
	}
	if msg := d.resolveSnapshot(); msg != "" {
		return PrefixInitClientError + msg
	}
	return ""
}

// checkStatusShape verifies that the status still matches the strategy snapshot: a stage
// status per stage, with the task statuses initialization filled in.
func (d *decision) checkStatusShape() string {
	snap := d.st.StagedUpdateStrategySnapshot
	if snap == nil || d.st.DeletionStageStatus == nil || len(snap.Stages) != len(d.st.StagesStatus) {
		return "the status of the clusterStagedUpdateRun does not match its strategy snapshot"
	}
	for i, cfg := range snap.Stages {
		ss := &d.st.StagesStatus[i]
		if ss.StageName != cfg.Name || len(ss.AfterStageTaskStatus) != len(cfg.AfterStageTasks) || len(ss.BeforeStageTaskStatus) != len(cfg.BeforeStageTasks) {
			return fmt.Sprintf("the status of stage `%s` does not match the strategy snapshot", cfg.Name)
		}
		for _, t := range ss.AfterStageTaskStatus {
			if findTask(cfg.AfterStageTasks, t.Type) == nil {
				return fmt.Sprintf("the status of stage `%s` does not match the strategy snapshot", cfg.Name)
			}
		}
	}
	return ""
}

// placement returns the run's placement, nil when missing.
func (d *decision) placement() *Placement {
	p := d.in.Placement
	if p == nil || (p.Name != "" && p.Name != d.run.Spec.PlacementName) {
		return nil
	}
	return p
}

func notExternal(p *Placement) string {
	if p.Strategy.Type == placement.ExternalStrategy {
		return ""
	}
	typ := p.Strategy.Type
	if typ == "" {
		typ = placement.RollingUpdateStrategy
	}
	return fmt.Sprintf("parent clusterResourcePlacement `%s` does not use the %s rollout strategy, got `%s`", p.Name, placement.ExternalStrategy, typ)
}

// resolveSnapshot finds the leading resource snapshot the run rolls out and records its
// index in resourceSnapshotIndexUsed. Once recorded, that index is the run's for good; before,
// it is the spec's, or, when the spec names none, the placement's latest index now, at
// initialization (STAGED-RUN-API).
func (d *decision) resolveSnapshot() string {
	raw := d.st.ResourceSnapshotIndexUsed
	if raw == "" {
		raw = d.run.Spec.ResourceSnapshotIndex
	}
	if raw == "" {
		if len(d.in.ResourceSnapshots) == 0 {
			return fmt.Sprintf("no clusterResourceSnapshots found for clusterResourcePlacement `%s`", d.run.Spec.PlacementName)
		}
		raw = strconv.Itoa(slices.Max(slices.Collect(maps.Keys(d.in.ResourceSnapshots))))
	}
	idx, err := strconv.Atoi(raw)
	if err != nil || idx < 0 {
		return fmt.Sprintf("invalid resource snapshot index `%s` provided, expected a non-negative integer", raw)
	}
	name, ok := d.in.ResourceSnapshots[idx]
	if !ok {
		return fmt.Sprintf("no clusterResourceSnapshots with index `%s` found for clusterResourcePlacement `%s`", raw, d.run.Spec.PlacementName)
	}
	if name == "" {
		name = ResourceSnapshotName(d.run.Spec.PlacementName, idx)
	}
	d.index, d.snapshotName = idx, name
	d.st.ResourceSnapshotIndexUsed = strconv.Itoa(idx)
	return ""
}
