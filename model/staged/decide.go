package staged

// Decide, one reconcile of a run: what it reads (Input) and writes (Plan), the state of one
// call (decision) and the run-level outcomes (fail, stuck). Initialization is in init.go,
// the re-checks after it in revalidate.go, stage execution in stages.go and one cluster's
// update in clusters.go.

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
