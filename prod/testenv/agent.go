package testenv

import (
	"context"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/resources"
)

// Outcome is what a stand-in agent reports for a manifest.
type Outcome string

const (
	// Available: applied and, if its availability is trackable, available.
	Available Outcome = "available"
	// Unavailable: applied but never available (a bad image).
	Unavailable Outcome = "unavailable"
	// ApplyFails: the member refuses the manifest.
	ApplyFails Outcome = "applyFails"
)

// StandInAgent plays a member agent against the hub, with the member's own client: it
// heartbeats on its InternalMemberCluster as joined and healthy (not joined once the hub
// asks it to leave, which lets a deleted MemberCluster finish leaving), and reports on every Work
// in its reserved namespace as if it had applied it, with the outcome Behave chooses per
// manifest (Available when nil). It changes nothing on the member side: there is none.
type StandInAgent struct {
	Client client.Client
	Member string
	Period time.Duration // between rounds; 0 means 200ms
	// Clock stamps heartbeats and reports (the wall clock when nil): the hub judges
	// heartbeats on its own clock, so a test with a mock clock gives both the same one.
	// Rounds follow Period in wall time: how soon a report lands is latency only.
	Clock clock.Clock

	mu      sync.Mutex
	behave  func(*unstructured.Unstructured) Outcome
	down    bool
	started uint64 // rounds begun
	rounds  uint64 // rounds finished
	kick    chan struct{}
	// held is, per object (resources.Identifier's key), the manifest last reported
	// applied: the member a stand-in plays holds it, so an ApplyFails outcome for the same
	// manifest refuses no write (a member refuses writes, not objects, as the simulator's
	// agent core decides) and it stays applied. Objects no Work carries any more are
	// forgotten at the end of a round.
	held map[string]string
}

func (a *StandInAgent) now() time.Time {
	if a.Clock == nil {
		return time.Now()
	}
	return a.Clock.Now()
}

// SetDown stops (true) or resumes (false) the agent's heartbeats and reports, as a member
// that fails and heals: a down agent writes nothing until it is up again.
func (a *StandInAgent) SetDown(down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down = down
}

// Rounds is how many rounds the agent has finished: a test that moved the clock waits for
// the next one, which has reported at the new time.
func (a *StandInAgent) Rounds() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rounds
}

// Started is how many rounds the agent has begun: the round numbered Started()+1 begins
// after the call, so once Rounds() reaches it the agent has read the hub afresh.
func (a *StandInAgent) Started() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.started
}

// Kick starts the next round now, if the agent is waiting for its period, rather than at
// the end of the period: a test that moved the clock or changed the hub need not wait.
func (a *StandInAgent) Kick() {
	select {
	case a.kicks() <- struct{}{}:
	default: // a round is already due
	}
}

func (a *StandInAgent) kicks() chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kick == nil {
		a.kick = make(chan struct{}, 1)
	}
	return a.kick
}

// SetBehavior changes the outcome of manifests from the next round on.
func (a *StandInAgent) SetBehavior(f func(*unstructured.Unstructured) Outcome) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.behave = f
}

func (a *StandInAgent) outcome(o *unstructured.Unstructured) Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.behave == nil {
		return Available
	}
	return a.behave(o)
}

// Run reports until ctx ends. Errors (the hub has not made the namespace yet, a conflict
// with the hub's write) are retried the next round, as a real agent would.
func (a *StandInAgent) Run(ctx context.Context) {
	period := a.Period
	if period <= 0 {
		period = 200 * time.Millisecond
	}
	t := time.NewTicker(period)
	defer t.Stop()
	kick := a.kicks()
	for {
		a.Round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
	}
}

// Round heartbeats once and reports on every Work once; a down agent does nothing.
func (a *StandInAgent) Round(ctx context.Context) {
	a.mu.Lock()
	a.started++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.rounds++
		a.mu.Unlock()
	}()
	a.mu.Lock()
	down := a.down
	a.mu.Unlock()
	if down {
		return
	}
	if !a.Heartbeat(ctx) {
		return
	}
	var works v1beta1.WorkList
	if err := a.Client.List(ctx, &works, client.InNamespace(membership.Namespace(a.Member))); err != nil {
		return
	}
	carried := map[string]bool{}
	for i := range works.Items {
		_ = a.ReportWork(ctx, &works.Items[i])
		if m, _, err := convert.WorkToModel(&works.Items[i]); err == nil {
			for _, o := range m.Manifests {
				carried[heldKey(o)] = true
			}
		}
	}
	a.mu.Lock()
	for k := range a.held {
		if !carried[k] {
			delete(a.held, k)
		}
	}
	a.mu.Unlock()
}

// heldKey names the object a manifest places on the member.
func heldKey(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

// refused reports whether the member refuses a write of manifest o whose outcome is
// ApplyFails: not when it holds the object as o says already (nothing to write). A
// manifest of any other outcome is written, and recorded as held.
func (a *StandInAgent) refused(o *unstructured.Unstructured, outcome Outcome) bool {
	body, err := o.MarshalJSON()
	if err != nil {
		return outcome == ApplyFails
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	k := heldKey(o)
	if outcome == ApplyFails {
		return a.held[k] != string(body)
	}
	if a.held == nil {
		a.held = map[string]string{}
	}
	a.held[k] = string(body)
	return false
}

// Heartbeat reports the member joined (not joined once the hub asks it to leave) and
// healthy; false when the hub has not made its InternalMemberCluster yet, or it is gone.
// A failed report is retried at the next heartbeat.
func (a *StandInAgent) Heartbeat(ctx context.Context) bool {
	key := client.ObjectKey{Namespace: membership.Namespace(a.Member), Name: a.Member}
	imc := &clusterv1beta1.InternalMemberCluster{}
	if err := a.Client.Get(ctx, key, imc); err != nil {
		return false // not made yet, or gone after leaving
	}
	at := a.now()
	_ = retry.RetryOnConflict(retry.DefaultRetry, func() error { // else retried next time
		if err := a.Client.Get(ctx, key, imc); err != nil {
			return err
		}
		return reportOn(ctx, a.Client, imc, joinedFor(imc), metav1.ConditionTrue, at)
	})
	return true
}

// HeartbeatOn is Heartbeat on an InternalMemberCluster the caller holds, as a real agent
// reads it from its informer's cache: one write and no read. A copy that is no longer
// current fails with a conflict, and the caller tries again on a fresh one.
func (a *StandInAgent) HeartbeatOn(ctx context.Context, imc *clusterv1beta1.InternalMemberCluster) error {
	return reportOn(ctx, a.Client, imc, joinedFor(imc), metav1.ConditionTrue, a.now())
}

// joinedFor is the agent's Joined condition: asked to leave, the agent leaves (it has
// nothing on a member to remove) and says so.
func joinedFor(imc *clusterv1beta1.InternalMemberCluster) metav1.ConditionStatus {
	if imc.Spec.State == membership.StateLeave {
		return metav1.ConditionFalse
	}
	return metav1.ConditionTrue
}

// ReportWork reports on one Work of the member as if it had applied it, unless its status
// already says so.
func (a *StandInAgent) ReportWork(ctx context.Context, w *v1beta1.Work) error {
	m, _, err := convert.WorkToModel(w)
	if err != nil {
		return err
	}
	var results []agentk8s.ManifestResult
	for j, o := range m.Manifests {
		res := agentk8s.ManifestResult{Identifier: resources.Identifier(o), Tracking: agentk8s.Classify(o)}
		res.Identifier.Envelope = m.Envelopes[j]
		outcome := a.outcome(o)
		if outcome == ApplyFails && !a.refused(o, outcome) {
			outcome = Available // held as the manifest says: nothing written, nothing refused
		}
		switch outcome {
		case ApplyFails:
			res.ApplyError = "Failed to apply manifest: " + o.GetKind() + " " + o.GetName() + " was rejected by the member cluster (stand-in agent)"
		case Unavailable:
			a.refused(o, outcome)
			res.Tracking, res.Available = agentk8s.Trackable, false
		default:
			a.refused(o, outcome)
			res.Available = true
		}
		results = append(results, res)
	}
	st := convert.WorkStatusFromResults(w, "", results, a.now())
	if equality.Semantic.DeepEqual(st, w.Status) {
		return nil
	}
	w.Status = st
	return a.Client.Status().Update(ctx, w)
}
