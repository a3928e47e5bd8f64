package staged

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Defaults of Timing (STAGED-EXEC).
const (
	// DefaultClusterCheckInterval is how long a run waits after updating a binding before it
	// looks at it again.
	DefaultClusterCheckInterval = 15 * time.Second
	// DefaultStuckThreshold is how long a cluster may take to become available before the
	// run reports itself stuck.
	DefaultStuckThreshold = 5 * time.Minute
)

// Placement is what a run reads of its ClusterResourcePlacement.
type Placement struct {
	Name string
	// Strategy is spec.strategy: Type must be External; ApplyStrategy is frozen into the run
	// at initialization.
	Strategy placement.RolloutStrategy
	// PolicySnapshotIndex is the index of the placement's latest policy snapshot.
	PolicySnapshotIndex int
	// ObservedClusterCount is the number of clusters the scheduler observed for the latest
	// policy snapshot (the run's policyObservedClusterCount).
	ObservedClusterCount int
	// SchedulerPending is true while the scheduler has not yet acted on the latest policy
	// snapshot; a run does not initialize until it has.
	SchedulerPending bool
}

// Overrides are the override snapshots that apply to one cluster.
type Overrides struct {
	ClusterResourceOverrideSnapshots []string
	ResourceOverrideSnapshots        []placement.NamespacedName
}

// Timing tunes the waits; zero fields take the defaults.
type Timing struct {
	ClusterCheckInterval time.Duration
	StuckThreshold       time.Duration
}

// Input is everything one reconcile of a run reads.
type Input struct {
	// Run is the run, spec and current status.
	Run *ClusterStagedUpdateRun
	// Strategy is the live strategy the run names, nil if it does not exist. Only
	// initialization reads it; afterwards the run follows its snapshot.
	Strategy *ClusterStagedUpdateStrategy
	// Placement is the run's placement, nil if it does not exist or is being deleted.
	Placement *Placement
	// Bindings are the placement's bindings, in any state and any order.
	Bindings []*placement.Binding
	// Members are the fleet's members, for their labels, in any order.
	Members []*member.Member
	// ResourceSnapshots maps each resource snapshot index of the placement that exists to
	// the name of its leading snapshot ({placement}-{index}-snapshot; an empty name means
	// that one).
	ResourceSnapshots map[int]string
	// Overrides maps a cluster to the override snapshots that apply to it.
	Overrides map[string]Overrides
	// ApprovalRequests are the approval requests of this run (labelled
	// kubernetes-fleet.io/targetupdaterun=<run>), with their status as users set it.
	ApprovalRequests []*ClusterApprovalRequest
	// OtherRuns are the other runs; those of other placements are ignored.
	OtherRuns []*ClusterStagedUpdateRun
	Now       time.Time
	Timing    Timing
}

// Change is one binding write the plan asks for: the binding as it must be afterwards (or,
// for a deletion, as it is), and why.
type Change struct {
	Binding placement.Binding
	Reason  string
}

// Plan is the outcome of one reconcile. A driver writes binding updates and deletions and
// creates approval requests before it writes the status: a status that says a cluster
// started must never precede the binding write, or the next reconcile sees the binding as
// changed by someone else.
type Plan struct {
	// Status is the run's new status (a copy; the input is never modified).
	Status StagedUpdateRunStatus
	// UpdateBindings are bindings to write, as they must be.
	UpdateBindings []Change
	// DeleteBindings are Unscheduled bindings to delete (deletion stage).
	DeleteBindings []Change
	// CreateApprovalRequests are approval requests to create.
	CreateApprovalRequests []ClusterApprovalRequest
	// AcceptApprovalRequests are approved requests to write back with ApprovalAccepted=True.
	AcceptApprovalRequests []ClusterApprovalRequest
	// RequeueAfter is when to reconcile again at the latest; 0 means no timed requeue: the
	// run is finished, or only an approval (a watched object) can move it on.
	RequeueAfter time.Duration
}

// Decide makes one reconcile of a run: it initializes the run once, then moves it on as far
// as it can at in.Now, and says what to write. It reads no clock and performs no I/O; the
// result does not depend on the order of any input slice.
func Decide(in Input) Plan {
	if in.Run == nil {
		return Plan{}
	}
	d := newDecision(in)
	d.decide()
	d.plan.Status = *d.st
	if !d.failed && !d.finished {
		d.plan.RequeueAfter = d.requeue
	}
	return d.plan
}

// decision is the state of one Decide call.
type decision struct {
	in     Input
	run    *ClusterStagedUpdateRun
	st     *StagedUpdateRunStatus
	gen    int64
	now    time.Time
	timing Timing
	plan   Plan

	// live holds each cluster's Scheduled or Bound binding that is not being deleted;
	// others every other binding of the cluster (Unscheduled, or being deleted).
	live   map[string]*placement.Binding
	others map[string][]*placement.Binding
	// approvals by name.
	approvals map[string]*ClusterApprovalRequest

	index        int    // the run's resource snapshot index
	snapshotName string // its leading resource snapshot

	requeue  time.Duration
	stuck    *ClusterUpdatingStatus
	stuckIn  string
	failed   bool
	finished bool
}

func newDecision(in Input) *decision {
	d := &decision{
		in: in, run: in.Run, st: in.Run.Status.DeepCopy(), gen: in.Run.Generation, now: in.Now,
		timing: in.Timing, live: map[string]*placement.Binding{}, others: map[string][]*placement.Binding{},
		approvals: map[string]*ClusterApprovalRequest{},
	}
	if d.timing.ClusterCheckInterval <= 0 {
		d.timing.ClusterCheckInterval = DefaultClusterCheckInterval
	}
	if d.timing.StuckThreshold <= 0 {
		d.timing.StuckThreshold = DefaultStuckThreshold
	}
	bs := make([]*placement.Binding, 0, len(in.Bindings))
	for _, b := range in.Bindings {
		if b != nil && (b.Placement == "" || b.Placement == in.Run.Spec.PlacementName) {
			bs = append(bs, b)
		}
	}
	slices.SortFunc(bs, func(a, b *placement.Binding) int { return cmp.Compare(a.Name, b.Name) })
	for _, b := range bs {
		if b.Live() {
			if d.live[b.TargetCluster] == nil {
				d.live[b.TargetCluster] = b
			}
			continue
		}
		d.others[b.TargetCluster] = append(d.others[b.TargetCluster], b)
	}
	for _, a := range in.ApprovalRequests {
		if a == nil {
			continue
		}
		if old := d.approvals[a.Name]; old == nil {
			d.approvals[a.Name] = a
		}
	}
	return d
}

func (d *decision) decide() {
	if d.terminal() {
		d.finished = true
		return
	}
	if !statusTrue(d.st.Conditions, TypeInitialized) {
		if !d.initialize() {
			return
		}
	} else if msg := d.revalidate(); msg != "" {
		d.fail(msg)
		return
	}
	switch d.run.Spec.State {
	case StateInitialize:
		return // initialized; waits for spec.state Run
	case StateStop:
		d.setRun(condition.False(TypeProgressing, ReasonUpdateRunStopped, MessageStopped))
		return
	}
	d.execute()
}

// terminal: initialization failed, or the run succeeded or failed. Neither is recoverable.
func (d *decision) terminal() bool {
	if c, ok := condition.Find(d.st.Conditions, TypeInitialized); ok && c.Status == metav1.ConditionFalse {
		return true
	}
	_, done := condition.Find(d.st.Conditions, TypeSucceeded)
	return done
}

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

// resolveSnapshot finds the leading resource snapshot of the run's index.
func (d *decision) resolveSnapshot() string {
	raw := d.run.Spec.ResourceSnapshotIndex
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
	return ""
}

// execute moves the run on as far as it can at d.now.
func (d *decision) execute() {
	if c, ok := condition.Find(d.st.Conditions, TypeProgressing); !ok || c.Reason == ReasonUpdateRunStopped {
		d.setRun(condition.True(TypeProgressing, ReasonUpdateRunStarted, ""))
	}
	snap := d.st.StagedUpdateStrategySnapshot
	for i := range d.st.StagesStatus {
		if statusTrue(d.st.StagesStatus[i].Conditions, TypeSucceeded) {
			continue
		}
		if !d.runStage(&snap.Stages[i], &d.st.StagesStatus[i]) {
			d.settleProgressing()
			return
		}
	}
	if !d.runDeletionStage(d.st.DeletionStageStatus) {
		d.settleProgressing()
		return
	}
	d.setRun(condition.True(TypeSucceeded, ReasonUpdateRunSucceeded, ""))
	d.settleProgressing()
	d.finished = true
}

// runStage moves one update stage on; it reports whether the stage succeeded. Its clusters
// start in order, at most MaxConcurrency of them updating at a time.
func (d *decision) runStage(cfg *StageConfig, ss *StageUpdatingStatus) bool {
	// Before-stage tasks (an Approval) hold the stage's first cluster back.
	for k := range ss.BeforeStageTaskStatus {
		ts := &ss.BeforeStageTaskStatus[k]
		if ts.Type != TaskApproval {
			continue
		}
		ok, msg := d.approval(ss, ts, BeforeStageApprovalRequestName(d.run.Name, ss.StageName))
		if msg != "" {
			d.fail(PrefixUnexpected + msg)
			return false
		}
		if !ok {
			return false
		}
	}
	d.startStage(ss)
	limit := MaxConcurrency(cfg, len(ss.Clusters))
	updating, pending := 0, false
	for j := range ss.Clusters {
		cs := &ss.Clusters[j]
		if statusTrue(cs.Conditions, TypeSucceeded) {
			continue
		}
		pending = true
		b := d.live[cs.ClusterName] // revalidate made sure it exists
		if !statusTrue(cs.Conditions, TypeStarted) {
			if updating >= limit {
				break
			}
			d.startCluster(ss, cs, b)
			d.wait(d.timing.ClusterCheckInterval)
			updating++
			continue
		}
		if msg := d.unexpected(ss, cs, b); msg != "" {
			d.set(&cs.Conditions, condition.False(TypeSucceeded, ReasonClusterUpdatingFailed, msg))
			d.fail(PrefixUnexpected + msg)
			return false
		}
		if !d.clusterDone(b) {
			d.waitForCluster(ss, cs)
			updating++
			continue
		}
		d.set(&cs.Conditions, condition.True(TypeSucceeded, ReasonClusterUpdatingSucceeded, ""))
	}
	if pending {
		// the after-stage tasks wait for every cluster (some may have succeeded in this pass)
		for j := range ss.Clusters {
			if !statusTrue(ss.Clusters[j].Conditions, TypeSucceeded) {
				return false
			}
		}
	}

	// Every cluster succeeded: the after-stage tasks run, in parallel, from the moment the
	// stage stops progressing (STAGED-AFTER-STAGE-TASKS, STAGE-TIMING-1).
	d.set(&ss.Conditions, condition.False(TypeProgressing, ReasonStageUpdatingWaiting, ""))
	waiting, _ := condition.Find(ss.Conditions, TypeProgressing)
	done := true
	for k := range ss.AfterStageTaskStatus {
		ts := &ss.AfterStageTaskStatus[k]
		switch ts.Type {
		case TaskTimedWait:
			if !d.timedWait(ts, findTask(cfg.AfterStageTasks, TaskTimedWait), waiting.LastTransitionTime) {
				done = false
			}
		case TaskApproval:
			ok, msg := d.approval(ss, ts, ApprovalRequestName(d.run.Name, ss.StageName))
			if msg != "" {
				d.fail(PrefixUnexpected + msg)
				return false
			}
			if !ok {
				done = false
			}
		}
	}
	if !done {
		return false
	}
	d.set(&ss.Conditions, condition.True(TypeSucceeded, ReasonStageUpdatingSucceeded, ""))
	d.setEnd(ss)
	return true
}

// timedWait completes once waitTime has passed since start.
func (d *decision) timedWait(ts *AfterStageTaskStatus, cfg *AfterStageTask, start time.Time) bool {
	if statusTrue(ts.Conditions, TypeWaitTimeElapsed) {
		return true
	}
	var wait time.Duration
	if cfg != nil && cfg.WaitTime != nil {
		wait = cfg.WaitTime.Duration
	}
	end := start.Add(wait)
	if d.now.Before(end) {
		d.wait(end.Sub(d.now))
		return false
	}
	d.set(&ts.Conditions, condition.True(TypeWaitTimeElapsed, ReasonAfterStageTaskWaitTimeElapsed, ""))
	return true
}

// approval creates the stage's approval request if it does not exist and completes once a
// user approved it, accepting the approval. A non-empty message is a failure.
func (d *decision) approval(ss *StageUpdatingStatus, ts *AfterStageTaskStatus, defaultName string) (bool, string) {
	if statusTrue(ts.Conditions, TypeApprovalRequestApproved) {
		return true, ""
	}
	name := ts.ApprovalRequestName
	if name == "" {
		name = defaultName
		ts.ApprovalRequestName = name
	}
	req := d.approvals[name]
	if req == nil {
		d.plan.CreateApprovalRequests = append(d.plan.CreateApprovalRequests, d.newApprovalRequest(name, ss.StageName))
		d.set(&ts.Conditions, condition.True(TypeApprovalRequestCreated, ReasonAfterStageTaskApprovalRequestCreated, ""))
		return false, ""
	}
	if want := (ApprovalRequestSpec{ParentStageRollout: d.run.Name, TargetStage: ss.StageName}); req.Spec != want {
		return false, fmt.Sprintf("the clusterApprovalRequest `%s` is for stage `%s` of clusterStagedUpdateRun `%s`, want stage `%s` of `%s`",
			name, req.Spec.TargetStage, req.Spec.ParentStageRollout, want.TargetStage, want.ParentStageRollout)
	}
	d.set(&ts.Conditions, condition.True(TypeApprovalRequestCreated, ReasonAfterStageTaskApprovalRequestCreated, ""))
	if !statusTrue(req.Status.Conditions, TypeApproved) {
		return false, ""
	}
	d.set(&ts.Conditions, condition.True(TypeApprovalRequestApproved, ReasonAfterStageTaskApprovalRequestApproved, ""))
	if !statusTrue(req.Status.Conditions, TypeApprovalAccepted) {
		acc := *req.DeepCopy()
		gen := acc.Generation
		condition.Set(&acc.Status.Conditions, condition.True(TypeApprovalAccepted, ReasonApprovalRequestApprovalAccepted, ""), gen, d.now)
		d.plan.AcceptApprovalRequests = append(d.plan.AcceptApprovalRequests, acc)
	}
	return true, ""
}

func (d *decision) newApprovalRequest(name, stage string) ClusterApprovalRequest {
	return ClusterApprovalRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: placement.GroupVersion, Kind: KindApprovalRequest},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			LabelTargetUpdateRun:           d.run.Name,
			LabelTargetUpdatingStage:       stage,
			LabelIsLatestUpdateRunApproval: "true",
		}},
		Spec: ApprovalRequestSpec{ParentStageRollout: d.run.Name, TargetStage: stage},
	}
}

// runDeletionStage deletes the bindings of clusters no longer selected, all at once, and
// succeeds once they are gone (STAGED-EXEC).
func (d *decision) runDeletionStage(ds *StageUpdatingStatus) bool {
	d.startStage(ds)
	pending := false
	for j := range ds.Clusters {
		cs := &ds.Clusters[j]
		if statusTrue(cs.Conditions, TypeSucceeded) {
			continue
		}
		if b := d.live[cs.ClusterName]; b != nil {
			// revalidate fails first when a cluster is picked again; this guards a status
			// edited by hand.
			msg := fmt.Sprintf("the clusterResourceBinding `%s` of the deleting cluster `%s` is %s again", b.Name, cs.ClusterName, b.State)
			d.set(&cs.Conditions, condition.False(TypeSucceeded, ReasonClusterUpdatingFailed, msg))
			d.fail(PrefixUnexpected + msg)
			return false
		}
		d.set(&cs.Conditions, condition.True(TypeStarted, ReasonClusterUpdatingStarted, ""))
		bs := d.others[cs.ClusterName]
		if len(bs) == 0 {
			d.set(&cs.Conditions, condition.True(TypeSucceeded, ReasonClusterUpdatingSucceeded, ""))
			continue
		}
		for _, b := range bs {
			if !b.Deleting {
				d.plan.DeleteBindings = append(d.plan.DeleteBindings, Change{
					Binding: b.Copy(),
					Reason:  fmt.Sprintf("cluster %s is no longer selected; deleted by the deletion stage of clusterStagedUpdateRun %s", cs.ClusterName, d.run.Name),
				})
			}
		}
		if !pending {
			d.waitForCluster(ds, cs)
		}
		pending = true
	}
	if pending {
		return false
	}
	d.set(&ds.Conditions, condition.True(TypeSucceeded, ReasonStageUpdatingSucceeded, ""))
	d.setEnd(ds)
	return true
}

func (d *decision) startStage(ss *StageUpdatingStatus) {
	if ss.StartTime != nil {
		return
	}
	t := d.now
	ss.StartTime = &t
	d.set(&ss.Conditions, condition.True(TypeProgressing, ReasonStageUpdatingStarted, ""))
}

func (d *decision) setEnd(ss *StageUpdatingStatus) {
	t := d.now
	ss.EndTime = &t
}

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

// settleProgressing reports a stuck run, or clears the report once it moves again.
func (d *decision) settleProgressing() {
	if d.failed {
		return
	}
	if d.stuck != nil {
		d.setRun(condition.False(TypeProgressing, ReasonUpdateRunStuck, StuckMessage(d.stuck.ClusterName, d.stuckIn)))
		return
	}
	if c, ok := condition.Find(d.st.Conditions, TypeProgressing); ok && c.Status != metav1.ConditionTrue {
		d.setRun(condition.True(TypeProgressing, ReasonUpdateRunProgressing, ""))
	}
}

// fail aborts the run for good (STAGED-FAIL): the stage under way fails with it, and the
// plan writes no binding and creates no approval request.
func (d *decision) fail(msg string) {
	d.failed = true
	d.plan.UpdateBindings, d.plan.DeleteBindings, d.plan.CreateApprovalRequests = nil, nil, nil
	stages := make([]*StageUpdatingStatus, 0, len(d.st.StagesStatus)+1)
	for i := range d.st.StagesStatus {
		stages = append(stages, &d.st.StagesStatus[i])
	}
	if d.st.DeletionStageStatus != nil {
		stages = append(stages, d.st.DeletionStageStatus)
	}
	for _, ss := range stages {
		if _, done := condition.Find(ss.Conditions, TypeSucceeded); ss.StartTime != nil && !done {
			d.set(&ss.Conditions, condition.False(TypeSucceeded, ReasonStageUpdatingFailed, msg))
			d.setEnd(ss)
		}
	}
	d.setRun(condition.False(TypeProgressing, ReasonUpdateRunFailed, MessageAborted))
	d.setRun(condition.False(TypeSucceeded, ReasonUpdateRunFailed, msg))
}

// MaxConcurrency resolves a stage's maxConcurrency for n clusters: a number, or a
// percentage of n rounded down; never below 1. nil (or a value that does not parse) is 1.
func MaxConcurrency(cfg *StageConfig, n int) int {
	if cfg == nil || cfg.MaxConcurrency == nil {
		return 1
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(cfg.MaxConcurrency, n, false)
	if err != nil || v < 1 {
		return 1
	}
	return v
}

func (d *decision) wait(t time.Duration) {
	if t > 0 && (d.requeue == 0 || t < d.requeue) {
		d.requeue = t
	}
}

func (d *decision) set(cs *[]condition.Timed, c condition.Condition) {
	condition.Set(cs, c, d.gen, d.now)
}

func (d *decision) setRun(c condition.Condition) { d.set(&d.st.Conditions, c) }

// statusTrue: the condition is present and True, whatever generation it names.
func statusTrue(cs []condition.Timed, typ string) bool {
	c, ok := condition.Find(cs, typ)
	return ok && c.Status == metav1.ConditionTrue
}

func findTask(ts []AfterStageTask, typ AfterStageTaskType) *AfterStageTask {
	for i := range ts {
		if ts[i].Type == typ {
			return &ts[i]
		}
	}
	return nil
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
