package staged

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// initialize runs the one-time initialization (STAGED-INIT). It reports whether execution
// may follow in the same reconcile: false when it failed (Initialized=False, for good) or
// when it waits for the scheduler (nothing recorded, requeue).
func (d *decision) initialize() bool {
	if errs := ValidateRun(d.run); len(errs) > 0 {
		return d.initFailed("invalid clusterStagedUpdateRun: " + errs.ToAggregate().Error())
	}
	p := d.placement()
	if p == nil {
		return d.initFailed(DetailPlacementNotFound)
	}
	if msg := notExternal(p); msg != "" {
		return d.initFailed(msg)
	}

	// The scheduler must have placed every cluster under the latest policy snapshot before
	// the plan is made; until then, wait.
	latest := placement.PolicySnapshotName(d.run.Spec.PlacementName, p.PolicySnapshotIndex)
	if p.SchedulerPending {
		d.wait(d.timing.ClusterCheckInterval)
		return false
	}
	for _, b := range d.live {
		if b.SchedulingPolicySnapshotName != "" && b.SchedulingPolicySnapshotName != latest {
			d.wait(d.timing.ClusterCheckInterval)
			return false
		}
	}

	d.st.PolicySnapshotIndexUsed = strconv.Itoa(p.PolicySnapshotIndex)
	d.st.PolicyObservedClusterCount = p.ObservedClusterCount
	d.st.AppliedStrategy = p.Strategy.ApplyStrategy.Copy()

	s := d.in.Strategy
	name := d.run.Spec.StagedRolloutStrategyName
	if s == nil || s.Name != name {
		return d.initFailed(fmt.Sprintf("referenced clusterStagedUpdateStrategy `%s` not found", name))
	}
	if errs := ValidateStrategySpec(&s.Spec, field.NewPath("spec")); len(errs) > 0 {
		return d.initFailed(fmt.Sprintf("clusterStagedUpdateStrategy `%s` is invalid: %s", name, errs.ToAggregate().Error()))
	}
	snap := s.Spec.DeepCopy()
	d.st.StagedUpdateStrategySnapshot = snap

	stages, msg := planStages(snap, name, d.live, d.in.Members)
	if msg != "" {
		return d.initFailed(msg)
	}
	if msg := d.checkConcurrentRuns(snap); msg != "" {
		return d.initFailed(msg)
	}
	if msg := d.resolveSnapshot(); msg != "" {
		return d.initFailed(msg)
	}

	d.st.StagesStatus = make([]StageUpdatingStatus, len(snap.Stages))
	for i, cfg := range snap.Stages {
		ss := StageUpdatingStatus{StageName: cfg.Name, Clusters: make([]ClusterUpdatingStatus, 0, len(stages[i]))}
		for _, c := range stages[i] {
			ss.Clusters = append(ss.Clusters, d.clusterStatus(c))
		}
		for _, t := range cfg.BeforeStageTasks {
			ss.BeforeStageTaskStatus = append(ss.BeforeStageTaskStatus, AfterStageTaskStatus{Type: t.Type, ApprovalRequestName: BeforeStageApprovalRequestName(d.run.Name, cfg.Name)})
		}
		for _, t := range cfg.AfterStageTasks {
			ts := AfterStageTaskStatus{Type: t.Type}
			if t.Type == TaskApproval {
				ts.ApprovalRequestName = ApprovalRequestName(d.run.Name, cfg.Name)
			}
			ss.AfterStageTaskStatus = append(ss.AfterStageTaskStatus, ts)
		}
		d.st.StagesStatus[i] = ss
	}
	ds := &StageUpdatingStatus{StageName: DeletionStageName, Clusters: []ClusterUpdatingStatus{}}
	for _, c := range sortedKeys(d.others) {
		if d.live[c] != nil || !hasUnscheduled(d.others[c]) {
			continue
		}
		ds.Clusters = append(ds.Clusters, ClusterUpdatingStatus{ClusterName: c})
	}
	d.st.DeletionStageStatus = ds
	d.setRun(condition.True(TypeInitialized, ReasonUpdateRunInitializedSuccessfully, MessageInitialized))
	return true
}

// initFailed records a failed initialization: what was recorded before the failure stays,
// the stage plan is dropped (the API: stagesStatus is empty if the run failed to
// initialize) and the deletion stage keeps only its name, as in the TSG sample.
func (d *decision) initFailed(detail string) bool {
	d.st.StagesStatus = nil
	d.st.DeletionStageStatus = &StageUpdatingStatus{StageName: DeletionStageName, Clusters: []ClusterUpdatingStatus{}}
	d.setRun(condition.False(TypeInitialized, ReasonUpdateRunInitializedFailed, PrefixInitClientError+detail))
	d.failed = true
	return false
}

func (d *decision) clusterStatus(cluster string) ClusterUpdatingStatus {
	cs := ClusterUpdatingStatus{ClusterName: cluster}
	if o, ok := d.in.Overrides[cluster]; ok {
		cs.ClusterResourceOverrideSnapshots = copySlice(o.ClusterResourceOverrideSnapshots)
		cs.ResourceOverrideSnapshots = copySlice(o.ResourceOverrideSnapshots)
	}
	return cs
}

// planStages puts every selected cluster in exactly one stage, in update order. It returns
// the clusters per stage, or a failure detail.
func planStages(snap *StagedUpdateStrategySpec, strategy string, live map[string]*placement.Binding, members []*member.Member) ([][]string, string) {
	byName := make(map[string]*member.Member, len(members))
	for _, m := range members {
		if m != nil {
			if old, ok := byName[m.Name]; !ok || old == nil {
				byName[m.Name] = m
			}
		}
	}
	selectors := make([]labels.Selector, len(snap.Stages))
	for i, st := range snap.Stages {
		if st.LabelSelector == nil {
			selectors[i] = labels.Everything()
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(st.LabelSelector)
		if err != nil {
			return nil, fmt.Sprintf("the labelSelector of stage `%s` of clusterStagedUpdateStrategy `%s` is invalid: %v", st.Name, strategy, err)
		}
		selectors[i] = sel
	}

	type entry struct {
		name   string
		hasKey bool
		key    int64
	}
	entries := make([][]entry, len(snap.Stages))
	for _, c := range sortedKeys(live) {
		var set labels.Set
		if m := byName[c]; m != nil {
			set = m.Labels
		}
		stage := -1
		for i, sel := range selectors {
			if !sel.Matches(set) {
				continue
			}
			if stage >= 0 {
				return nil, fmt.Sprintf("cluster `%s` is selected by more than one stage of clusterStagedUpdateStrategy `%s`: `%s` and `%s`",
					c, strategy, snap.Stages[stage].Name, snap.Stages[i].Name)
			}
			stage = i
		}
		if stage < 0 {
			return nil, fmt.Sprintf("cluster `%s` is not selected by any stage of clusterStagedUpdateStrategy `%s`", c, strategy)
		}
		e := entry{name: c}
		if k := snap.Stages[stage].SortingLabelKey; k != nil {
			if v, ok := set[*k]; ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil, fmt.Sprintf("the sorting label `%s` of cluster `%s` in stage `%s` has value `%s`, which is not an integer", *k, c, snap.Stages[stage].Name, v)
				}
				e.hasKey, e.key = true, n
			}
		}
		entries[stage] = append(entries[stage], e)
	}
	out := make([][]string, len(snap.Stages))
	for i, es := range entries {
		// Clusters with the key by its integer value, then clusters without it; names break ties.
		slices.SortFunc(es, func(a, b entry) int {
			if a.hasKey != b.hasKey {
				if a.hasKey {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(a.key, b.key); c != 0 {
				return c
			}
			return cmp.Compare(a.name, b.name)
		})
		out[i] = make([]string, len(es))
		for j, e := range es {
			out[i][j] = e.name
		}
	}
	return out, ""
}

// checkConcurrentRuns: every other initialized, unfinished run of the placement must use an
// identical strategy (STAGED-CONCURRENT).
func (d *decision) checkConcurrentRuns(snap *StagedUpdateStrategySpec) string {
	others := make([]*ClusterStagedUpdateRun, 0, len(d.in.OtherRuns))
	for _, o := range d.in.OtherRuns {
		if o != nil {
			others = append(others, o)
		}
	}
	slices.SortFunc(others, func(a, b *ClusterStagedUpdateRun) int { return cmp.Compare(a.Name, b.Name) })
	for _, o := range others {
		if o.Name == d.run.Name || o.Spec.PlacementName != d.run.Spec.PlacementName {
			continue
		}
		if !statusTrue(o.Status.Conditions, TypeInitialized) || o.Status.StagedUpdateStrategySnapshot == nil {
			continue
		}
		if _, done := condition.Find(o.Status.Conditions, TypeSucceeded); done {
			continue
		}
		if !equality.Semantic.DeepEqual(*o.Status.StagedUpdateStrategySnapshot, *snap) {
			return fmt.Sprintf("the strategy of clusterStagedUpdateRun `%s` differs from that of the concurrent clusterStagedUpdateRun `%s` of clusterResourcePlacement `%s`; all concurrent runs must use an identical strategy",
				d.run.Name, o.Name, d.run.Spec.PlacementName)
		}
	}
	return ""
}

func hasUnscheduled(bs []*placement.Binding) bool {
	for _, b := range bs {
		if b.State == placement.Unscheduled {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
