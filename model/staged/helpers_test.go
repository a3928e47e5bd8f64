package staged_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/staged"
)

// t0 is when the runs of the tests are created: the concept sample's 23:21:39 [Staged Update › Understand ClusterStagedUpdateRun status].
var t0 = time.Date(2025, 3, 12, 23, 21, 39, 0, time.UTC)

const (
	crpName      = "example-placement"
	strategyName = "example-strategy"
	runName      = "example-run"
)

func at(d time.Duration) time.Time { return t0.Add(d) }

func newMember(name string, kv ...string) *member.Member {
	m := &member.Member{Name: name, Kind: member.KindCluster, Labels: map[string]string{}}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m.Labels[k] = v
	}
	return m
}

func newBinding(cluster string, state placement.BindingState) *placement.Binding {
	return &placement.Binding{
		Name: placement.BindingName(crpName, cluster, 0), Placement: crpName, TargetCluster: cluster,
		State: state, SchedulingPolicySnapshotName: placement.PolicySnapshotName(crpName, 0), Generation: 1,
	}
}

func newStage(name string, matchLabels map[string]string, tasks ...staged.AfterStageTask) staged.StageConfig {
	s := staged.StageConfig{Name: name, AfterStageTasks: tasks}
	if matchLabels != nil {
		s.LabelSelector = &metav1.LabelSelector{MatchLabels: matchLabels}
	}
	return s
}

func sortedBy(key string, s staged.StageConfig) staged.StageConfig {
	s.SortingLabelKey = &key
	return s
}

func env(v string) map[string]string { return map[string]string{"environment": v} }

func timedWait(d time.Duration) staged.AfterStageTask {
	return staged.AfterStageTask{Type: staged.TaskTimedWait, WaitTime: &metav1.Duration{Duration: d}}
}

func approvalTask() staged.AfterStageTask { return staged.AfterStageTask{Type: staged.TaskApproval} }

func newStrategy(stages ...staged.StageConfig) *staged.ClusterStagedUpdateStrategy {
	return &staged.ClusterStagedUpdateStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: strategyName},
		Spec:       staged.StagedUpdateStrategySpec{Stages: stages},
	}
}

func newRun(name, index string) *staged.ClusterStagedUpdateRun {
	return &staged.ClusterStagedUpdateRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec:       staged.StagedUpdateRunSpec{PlacementName: crpName, ResourceSnapshotIndex: index, StagedRolloutStrategyName: strategyName},
	}
}

// howToFleet is the how-to's fleet [How to Roll Out and Roll Back Changes in Stage › Prerequisite]: member1 canary order=2, member2 staging,
// member3 canary order=1.
func howToFleet() []*member.Member {
	return []*member.Member{
		newMember("member1", "environment=canary", "order=2"),
		newMember("member2", "environment=staging"),
		newMember("member3", "environment=canary", "order=1"),
	}
}

// howToStrategy is the how-to's strategy [How to Roll Out and Roll Back Changes in Stage › To check current resource snapshots]: staging (TimedWait 1m), canary
// sorted by order (Approval).
func howToStrategy() *staged.ClusterStagedUpdateStrategy {
	return newStrategy(
		newStage("staging", env("staging"), timedWait(time.Minute)),
		sortedBy("order", newStage("canary", env("canary"), approvalTask())),
	)
}

// world is an in-memory hub for driving Decide: it applies plans, plays the member agents
// (a binding becomes Applied and Available some time after it is written) and the users
// (approvals at given times), and keeps a log of binding writes.
type world struct {
	t         tb
	now       time.Time
	run       *staged.ClusterStagedUpdateRun
	strategy  *staged.ClusterStagedUpdateStrategy
	placement *staged.Placement
	bindings  map[string]*placement.Binding
	members   []*member.Member
	snapshots map[int]string
	overrides map[string]staged.Overrides
	approvals map[string]*staged.ClusterApprovalRequest
	others    []*staged.ClusterStagedUpdateRun
	timing    staged.Timing

	// readyAfter is how long a member takes to apply a binding write; a negative value means
	// never. Clusters not listed take defaultReady.
	readyAfter   map[string]time.Duration
	defaultReady time.Duration
	// approveAt is when users approve each request (by name); requests not listed are
	// approved approveAfter after their creation, or never if approveAfter is negative.
	approveAt    map[string]time.Time
	approveAfter time.Duration
	deleteAfter  time.Duration

	events []event
	log    []write
}

type event struct {
	at time.Time
	// wake: the event changes an object the run controller watches (an approval request),
	// so it triggers a reconcile; member agents' binding updates do not.
	wake bool
	do   func()
}

// write is one binding write or deletion a plan asked for.
type write struct {
	At      time.Time
	Cluster string
	Deleted bool
	Status  staged.StagedUpdateRunStatus // the run's status in the same plan
}

// tb is what the world needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

func newWorld(t tb, s *staged.ClusterStagedUpdateStrategy, members []*member.Member, bindings ...*placement.Binding) *world {
	w := &world{
		t: t, now: t0, run: newRun(runName, "1"), strategy: s,
		placement: &staged.Placement{Name: crpName, Strategy: placement.RolloutStrategy{Type: placement.ExternalStrategy}},
		bindings:  map[string]*placement.Binding{}, members: members,
		snapshots: map[int]string{0: crpName + "-0-snapshot", 1: crpName + "-1-snapshot"},
		approvals: map[string]*staged.ClusterApprovalRequest{}, readyAfter: map[string]time.Duration{},
		defaultReady: 5 * time.Second, approveAt: map[string]time.Time{}, approveAfter: -1, deleteAfter: 5 * time.Second,
	}
	for _, b := range bindings {
		w.bindings[b.Name] = b
		if b.Live() {
			w.placement.ObservedClusterCount++
		}
	}
	return w
}

// scheduled makes a world whose every member holds a Scheduled binding.
func scheduled(t tb, s *staged.ClusterStagedUpdateStrategy, members []*member.Member) *world {
	var bs []*placement.Binding
	for _, m := range members {
		bs = append(bs, newBinding(m.Name, placement.Scheduled))
	}
	return newWorld(t, s, members, bs...)
}

func (w *world) input() staged.Input {
	in := staged.Input{
		Run: w.run, Strategy: w.strategy, Placement: w.placement, Members: w.members,
		ResourceSnapshots: w.snapshots, Overrides: w.overrides, OtherRuns: w.others, Now: w.now, Timing: w.timing,
	}
	for _, n := range sortedKeys(w.bindings) {
		in.Bindings = append(in.Bindings, w.bindings[n])
	}
	for _, n := range sortedKeys(w.approvals) {
		in.ApprovalRequests = append(in.ApprovalRequests, w.approvals[n])
	}
	return in
}

// step decides at w.now and applies the plan.
func (w *world) step() staged.Plan {
	w.t.Helper()
	in := w.input()
	before := w.run.DeepCopy()
	p := staged.Decide(in)
	if diff := gocmp.Diff(before, w.run); diff != "" {
		w.t.Fatalf("Decide modified its input run:\n%s", diff)
	}
	w.apply(p)
	return p
}

func (w *world) apply(p staged.Plan) {
	for _, c := range p.UpdateBindings {
		b := c.Binding
		w.bindings[b.Name] = &b
		w.log = append(w.log, write{At: w.now, Cluster: b.TargetCluster, Status: *p.Status.DeepCopy()})
		delay, ok := w.readyAfter[b.TargetCluster]
		if !ok {
			delay = w.defaultReady
		}
		if delay >= 0 {
			name, gen := b.Name, b.Generation
			w.schedule(w.now.Add(delay), false, func() { w.makeReady(name, gen) })
		}
	}
	for _, c := range p.DeleteBindings {
		name := c.Binding.Name
		w.bindings[name].Deleting = true
		w.log = append(w.log, write{At: w.now, Cluster: c.Binding.TargetCluster, Deleted: true, Status: *p.Status.DeepCopy()})
		w.schedule(w.now.Add(w.deleteAfter), false, func() { delete(w.bindings, name) })
	}
	for _, a := range p.CreateApprovalRequests {
		if _, ok := w.approvals[a.Name]; ok {
			w.t.Fatalf("at %s: plan creates approval request %s, which exists", w.now.Format(time.TimeOnly), a.Name)
		}
		a := a
		w.approvals[a.Name] = &a
		when, ok := w.approveAt[a.Name]
		if !ok && w.approveAfter >= 0 {
			when, ok = w.now.Add(w.approveAfter), true
		}
		if ok {
			name := a.Name
			w.schedule(when, true, func() { w.approve(name) })
		}
	}
	for _, a := range p.AcceptApprovalRequests {
		a := a
		w.approvals[a.Name] = &a
	}
	w.run.Status = *p.Status.DeepCopy()
}

func (w *world) schedule(at time.Time, wake bool, do func()) {
	w.events = append(w.events, event{at: at, wake: wake, do: do})
	slices.SortStableFunc(w.events, func(a, b event) int { return a.at.Compare(b.at) })
}

// makeReady plays the member agent: the binding is Applied and Available at generation gen.
func (w *world) makeReady(name string, gen int64) {
	b := w.bindings[name]
	if b == nil || b.Generation != gen {
		return
	}
	nb := *b
	nb.Conditions = slices.Clone(b.Conditions)
	condition.Set(&nb.Conditions, condition.True(condition.TypeApplied, condition.ReasonAllWorkApplied, ""), gen, w.now)
	condition.Set(&nb.Conditions, condition.True(condition.TypeAvailable, condition.ReasonAllWorkAvailable, ""), gen, w.now)
	w.bindings[name] = &nb
}

// approve plays the user: Approved=True on the request's status.
func (w *world) approve(name string) {
	a := w.approvals[name]
	if a == nil {
		return
	}
	na := *a.DeepCopy()
	condition.Set(&na.Status.Conditions, condition.True(staged.TypeApproved, "lgtm", "lgtm"), 1, w.now)
	w.approvals[name] = &na
}

// advance moves the clock to t, firing every event due by then.
func (w *world) advance(t time.Time) {
	for len(w.events) > 0 && !w.events[0].at.After(t) {
		e := w.events[0]
		w.events = w.events[1:]
		w.now = e.at
		e.do()
	}
	w.now = t
}

// drive loops Decide → apply → advance, waking at the plan's requeue time or at the next
// approval (the run watches approval requests, not bindings), until the run is finished or
// failed. It fails the test after maxSteps reconciles.
func (w *world) drive(maxSteps int) {
	w.t.Helper()
	for range maxSteps {
		p := w.step()
		if done(p.Status) {
			return
		}
		next := time.Time{}
		if p.RequeueAfter > 0 {
			next = w.now.Add(p.RequeueAfter)
		}
		for _, e := range w.events {
			if e.at.After(w.now) && (next.IsZero() || e.at.Before(next)) && e.wake {
				next = e.at
			}
		}
		if next.IsZero() {
			// Nothing to wake the run: fire the remaining events and look once more.
			if len(w.events) == 0 {
				w.t.Fatalf("at %s: run is blocked with nothing pending; status:\n%s", w.now.Format(time.TimeOnly), timeline(p.Status))
			}
			next = w.events[len(w.events)-1].at
		}
		w.advance(next)
	}
	w.t.Fatalf("run did not finish in %d reconciles; status:\n%s", maxSteps, timeline(w.run.Status))
}

func done(s staged.StagedUpdateRunStatus) bool {
	if c, ok := condition.Find(s.Conditions, staged.TypeInitialized); ok && c.Status == metav1.ConditionFalse {
		return true
	}
	_, ok := condition.Find(s.Conditions, staged.TypeSucceeded)
	return ok
}

func statusTrue(cs []condition.Timed, typ string) bool {
	c, ok := condition.Find(cs, typ)
	return ok && c.Status == metav1.ConditionTrue
}

// order lists the clusters in the order their bindings were first written.
func (w *world) order() []string {
	var out []string
	for _, l := range w.log {
		if !l.Deleted && !slices.Contains(out, l.Cluster) {
			out = append(out, l.Cluster)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// conds renders conditions as Type=Status/Reason@offset-from-t0.
func conds(cs []condition.Timed) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s/%s@%s", c.Type, c.Status, c.Reason, c.LastTransitionTime.Sub(t0)))
	}
	return out
}

func offset(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Sub(t0).String()
}

// timeline renders a status as lines, one per condition, with times as offsets from t0.
func timeline(s staged.StagedUpdateRunStatus) string {
	return strings.Join(timelineLines(s), "\n")
}

func timelineLines(s staged.StagedUpdateRunStatus) []string {
	var out []string
	add := func(prefix string, cs []condition.Timed) {
		for _, c := range conds(cs) {
			out = append(out, prefix+c)
		}
	}
	add("run ", s.Conditions)
	stages := slices.Clone(s.StagesStatus)
	if s.DeletionStageStatus != nil {
		stages = append(stages, *s.DeletionStageStatus)
	}
	for _, st := range stages {
		out = append(out, fmt.Sprintf("stage %s start=%s end=%s", st.StageName, offset(st.StartTime), offset(st.EndTime)))
		add("stage "+st.StageName+" ", st.Conditions)
		for _, c := range st.Clusters {
			add("cluster "+c.ClusterName+" ", c.Conditions)
		}
		for _, ts := range st.AfterStageTaskStatus {
			add("task "+st.StageName+"/"+string(ts.Type)+" ", ts.Conditions)
		}
	}
	return out
}

// stagePlan lists each stage's clusters in order.
func stagePlan(s staged.StagedUpdateRunStatus) [][]string {
	var out [][]string
	for _, st := range s.StagesStatus {
		names := []string{}
		for _, c := range st.Clusters {
			names = append(names, c.ClusterName)
		}
		out = append(out, names)
	}
	return out
}

func findCond(cs []condition.Timed, typ string) condition.Condition {
	c, _ := condition.Find(cs, typ)
	return c.Condition
}
