package member

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/agentk8s/member/properties"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/convert"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/model/placement"
)

// Defaults of Agent's periods.
const (
	DefaultPoll        = time.Second
	DefaultDriftPeriod = 15 * time.Second
)

// Agent is one member's agent. Hub is a client of the hub API server with the member's
// identity (it needs only the member's reserved namespace); Member a client of the member's
// API server (cluster administrator). Member's client must read objects fresh (no cache):
// decisions compare the live object.
type Agent struct {
	Hub    client.Client
	Member client.Client
	Name   string
	Log    logr.Logger
	// Poll is how often the agent reads its InternalMemberCluster and Works on the hub;
	// DriftPeriod how often it checks applied objects for drift (and re-applies them).
	Poll        time.Duration
	DriftPeriod time.Duration
	// Clock is the agent's time (the wall clock when nil): heartbeat timestamps, the
	// heartbeat and drift periods, conditions' lastTransitionTime and the poll timer. The
	// hub compares heartbeats against its own clock, so a test gives both the same one.
	Clock clock.Clock
	// MemberConfig, when set, lets Run watch the objects the agent applied (a metadata
	// informer per applied kind): a change by someone else is checked in the next round,
	// woken at once, instead of waiting for DriftPeriod, which stays as a backstop.
	MemberConfig *rest.Config
	// Properties reports the member's properties on every heartbeat; it is started with
	// MemberConfig. Nil means the built-in node and resource figures (PROP-FALLBACK).
	Properties properties.Provider

	watch           *watcher
	provider        properties.Provider
	providerStarted metav1.Condition

	lastBeat  time.Time
	lastCheck map[string]checked
	since     agentk8s.Sightings
}

// checked is when a Work generation was last applied.
type checked struct {
	generation int64
	at         time.Time
	settled    bool
	// deletePolicy is the Work's delete-propagation-policy annotation the AppliedWork records.
	deletePolicy string
}

// ErrLeft is what Run returns after the member left the fleet.
var ErrLeft = errors.New("the member left the fleet")

func (a *Agent) clock() clock.Clock {
	if a.Clock == nil {
		a.Clock = clock.New()
	}
	return a.Clock
}

func (a *Agent) now() time.Time { return a.clock().Now() }

func (a *Agent) namespace() string { return membership.Namespace(a.Name) }

// Run runs rounds until ctx ends (nil) or the member has left (ErrLeft). A round that
// cannot reach the hub changes nothing on the member: applied objects stay as they are.
func (a *Agent) Run(ctx context.Context) error {
	if a.Poll <= 0 {
		a.Poll = DefaultPoll
	}
	if a.DriftPeriod <= 0 {
		a.DriftPeriod = DefaultDriftPeriod
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if a.MemberConfig != nil {
		mc, err := metadata.NewForConfig(a.MemberConfig)
		if err != nil {
			return fmt.Errorf("watch applied objects: %w", err)
		}
		a.watch = newWatcher(ctx, mc)
		defer func() { a.watch = nil }()
	}
	for {
		left, err := a.Round(ctx)
		if left {
			return ErrLeft
		}
		if err != nil && ctx.Err() == nil {
			a.Log.Info("round failed; retrying", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.clock().After(a.Poll):
		case <-a.watch.wake():
		}
	}
}

// Round reads the InternalMemberCluster: asked to leave, it leaves; else it heartbeats when
// due and syncs every Work. left is true once the member has left.
func (a *Agent) Round(ctx context.Context) (left bool, err error) {
	imc := &clusterv1beta1.InternalMemberCluster{}
	if err := a.Hub.Get(ctx, client.ObjectKey{Namespace: a.namespace(), Name: a.Name}, imc); err != nil {
		return false, fmt.Errorf("read InternalMemberCluster: %w", err)
	}
	if imc.Spec.State == membership.StateLeave {
		return true, a.leave(ctx, imc)
	}
	period := time.Duration(imc.Spec.HeartbeatPeriodSeconds) * time.Second
	if period <= 0 {
		period = clusterv1beta1.DefaultHeartbeatPeriodSeconds * time.Second
	}
	var errs []error
	if a.lastBeat.IsZero() || a.now().Sub(a.lastBeat) >= period {
		if err := a.heartbeat(ctx, imc, true); err != nil {
			errs = append(errs, err)
		} else {
			a.lastBeat = a.now()
		}
	}
	if err := a.syncWorks(ctx); err != nil {
		errs = append(errs, err)
	}
	return false, errors.Join(errs...)
}

// heartbeat writes the agent's status on the InternalMemberCluster: a heartbeat now, Joined
// (True, or False once left) and Healthy conditions observing its generation, and the
// member's properties and resource usage (MC-HEARTBEAT-HEALTH, MC-PROPERTIES).
func (a *Agent) heartbeat(ctx context.Context, imc *clusterv1beta1.InternalMemberCluster, joined bool) error {
	now := metav1.NewTime(a.now())
	st := imc.Status.DeepCopy()
	collected := a.collect(ctx, &st.Conditions, imc.Generation)
	props, usage, propErr := collected.Properties, collected.Usage, collected.Err
	var entry clusterv1beta1.AgentStatus
	if i := slices.IndexFunc(st.AgentStatus, func(s clusterv1beta1.AgentStatus) bool { return s.Type == clusterv1beta1.MemberAgent }); i >= 0 {
		entry = st.AgentStatus[i]
		st.AgentStatus = slices.Delete(st.AgentStatus, i, i+1)
	}
	entry.Type, entry.LastReceivedHeartbeat = clusterv1beta1.MemberAgent, now
	j := metav1.Condition{Type: clusterv1beta1.ConditionTypeJoined, Status: metav1.ConditionTrue, Reason: agentk8s.ReasonMemberJoined,
		Message: "the member agent joined the fleet", ObservedGeneration: imc.Generation}
	if !joined {
		j.Status, j.Reason, j.Message = metav1.ConditionFalse, agentk8s.ReasonMemberLeft, "the member agent left the fleet"
	}
	meta.SetStatusCondition(&entry.Conditions, j)
	h := metav1.Condition{Type: clusterv1beta1.ConditionTypeHealthy, Status: metav1.ConditionTrue, Reason: agentk8s.ReasonMemberHealthy,
		Message: "the member's API server answers", ObservedGeneration: imc.Generation}
	if propErr != nil {
		h.Status, h.Reason, h.Message = metav1.ConditionFalse, agentk8s.ReasonMemberUnhealthy, propErr.Error()
	}
	if joined {
		meta.SetStatusCondition(&entry.Conditions, h)
	} else {
		meta.RemoveStatusCondition(&entry.Conditions, clusterv1beta1.ConditionTypeHealthy)
	}
	st.AgentStatus = append(st.AgentStatus, entry)
	if propErr == nil {
		st.Properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{}
		for k, v := range props {
			st.Properties[clusterv1beta1.PropertyName(k)] = clusterv1beta1.PropertyValue{Value: v, ObservationTime: now}
		}
		usage.ObservationTime = now
		st.ResourceUsage = usage
	}
	imc.Status = *st
	if err := a.Hub.Status().Update(ctx, imc); err != nil {
		return fmt.Errorf("heartbeat on InternalMemberCluster: %w", err)
	}
	return nil
}

// syncWorks applies every Work that changed, is due a drift check or is not available yet,
// and removes what Works that are gone applied.
func (a *Agent) syncWorks(ctx context.Context) error {
	var works v1beta1.WorkList
	if err := a.Hub.List(ctx, &works, client.InNamespace(a.namespace())); err != nil {
		return fmt.Errorf("list Works: %w", err)
	}
	var errs []error
	names := map[string]bool{}
	for i := range works.Items {
		w := &works.Items[i]
		names[w.Name] = true
		if w.DeletionTimestamp != nil {
			continue
		}
		c, ok := a.lastCheck[w.Name]
		applied := meta.FindStatusCondition(w.Status.Conditions, condition.TypeApplied)
		diffed := meta.FindStatusCondition(w.Status.Conditions, condition.TypeDiffReported)
		reported := (applied != nil && applied.ObservedGeneration == w.Generation) || (diffed != nil && diffed.ObservedGeneration == w.Generation)
		changed := a.watch.take(w.Name)
		if ok && c.generation == w.Generation && c.settled && reported && !changed && a.now().Sub(c.at) < a.DriftPeriod {
			// The delete strategy travels in an annotation, which does not change the
			// generation: keep the AppliedWork's record of it current.
			if c.deletePolicy == w.Annotations[v1beta1.DeletePropagationPolicyAnnotation] {
				continue
			}
			if _, err := a.ensureAppliedWork(ctx, w); err != nil {
				errs = append(errs, fmt.Errorf("syncing Work %s: %w", w.Name, err))
				continue
			}
			c.deletePolicy = w.Annotations[v1beta1.DeletePropagationPolicyAnnotation]
			a.lastCheck[w.Name] = c
			continue
		}
		if err := a.syncWork(ctx, w); err != nil {
			if changed {
				a.watch.mark(w.Name)
			}
			errs = append(errs, fmt.Errorf("syncing Work %s: %w", w.Name, err))
		}
	}
	if err := a.collectGarbage(ctx, names); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// syncWork applies one Work's manifests, records them in its AppliedWork, removes what the
// Work no longer holds, and writes the Work's status.
func (a *Agent) syncWork(ctx context.Context, w *v1beta1.Work) error {
	mw, strategy, err := convert.WorkToModel(w)
	if err != nil {
		return err
	}
	aw, err := a.ensureAppliedWork(ctx, w)
	if err != nil {
		return err
	}
	owner := ownerOf(aw)
	var applyType placement.ApplyType
	if strategy != nil {
		applyType = strategy.Type
	}
	now := a.now()
	run := agentk8s.RunWork(agentk8s.Work{Name: w.Name, Manifests: mw.Manifests, Envelopes: mw.Envelopes, Owner: owner,
		Strategy: strategy, ReportBack: mw.ReportBack}, apiMember{ctx: ctx, a: a}, &a.since, now)
	// What the agent owns stays recorded whatever this run's verdict (a drifted object
	// under IfNotDrifted is still Fleet's).
	var applied []appliedResource
	for i, live := range run.Live {
		if live != nil && agentk8s.Manages(live, owner) {
			gvk := live.GroupVersionKind()
			applied = append(applied, appliedResource{Ordinal: i, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
				Namespace: live.GetNamespace(), Name: live.GetName(), UID: string(live.GetUID())})
		}
	}
	// What the Work no longer holds is removed from the member (WORK-APPLIEDWORK).
	keep := map[string]bool{}
	for _, r := range applied {
		keep[r.key()] = true
	}
	for _, r := range appliedResources(aw) {
		if !keep[r.key()] {
			if err := a.release(ctx, r, aw.GetName(), false); err != nil {
				return err
			}
		}
	}
	a.watchApplied(applied)
	if !equality.Semantic.DeepEqual(applied, appliedResources(aw)) {
		setAppliedResources(aw, applied)
		if err := a.Member.Status().Update(ctx, aw); err != nil {
			return fmt.Errorf("record applied resources in AppliedWork: %w", err)
		}
	}
	st := convert.WorkStatusFromResults(w, applyType, run.Results, now)
	if !equality.Semantic.DeepEqual(st, w.Status) {
		w.Status = st
		if err := a.Hub.Status().Update(ctx, w); err != nil {
			return fmt.Errorf("write status: %w", err)
		}
	}
	if a.lastCheck == nil {
		a.lastCheck = map[string]checked{}
	}
	a.lastCheck[w.Name] = checked{generation: w.Generation, at: now, settled: run.Settled, deletePolicy: w.Annotations[v1beta1.DeletePropagationPolicyAnnotation]}
	return nil
}

// release removes the AppliedWork's owner reference from an object it recorded, and
// deletes the object when no owner is left (WORK-APPLIEDWORK). An object the agent does not
// own (a failed takeover) is left alone.
func (a *Agent) release(ctx context.Context, r appliedResource, appliedWork string, abandon bool) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk())
	if err := a.Member.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Name}, u); err != nil {
		return client.IgnoreNotFound(err)
	}
	refs := u.GetOwnerReferences()
	kept := slices.DeleteFunc(slices.Clone(refs), func(o metav1.OwnerReference) bool {
		return o.Kind == agentk8s.AppliedWorkKind && o.Name == appliedWork
	})
	if len(kept) == len(refs) {
		return nil
	}
	if len(kept) == 0 && !abandon {
		if err := a.Member.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
		}
		a.Log.Info("deleted", "kind", r.Kind, "namespace", r.Namespace, "name", r.Name, "appliedWork", appliedWork)
		return nil
	}
	u.SetOwnerReferences(kept)
	if err := a.Member.Update(ctx, u); err != nil {
		return fmt.Errorf("release %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
	}
	return nil
}

// collectGarbage removes the AppliedWorks of this agent's namespace whose Work is gone,
// with what they own, and forgets the drifts and diffs it saw of those Works.
func (a *Agent) collectGarbage(ctx context.Context, works map[string]bool) error {
	a.since.RetainWorks(func(work string) bool { return works[work] })
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(AppliedWorkGVK.GroupVersion().WithKind(AppliedWorkGVK.Kind + "List"))
	if err := a.Member.List(ctx, &list); err != nil {
		return fmt.Errorf("list AppliedWorks: %w", err)
	}
	var errs []error
	for i := range list.Items {
		aw := &list.Items[i]
		if ns, _, _ := unstructured.NestedString(aw.Object, "spec", "workNamespace"); ns != a.namespace() || works[aw.GetName()] {
			continue
		}
		if err := a.removeAppliedWork(ctx, aw); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a *Agent) removeAppliedWork(ctx context.Context, aw *unstructured.Unstructured) error {
	abandon, err := a.abandons(ctx, aw)
	if err != nil {
		return err
	}
	for _, r := range appliedResources(aw) {
		if err := a.release(ctx, r, aw.GetName(), abandon); err != nil {
			return err
		}
	}
	if err := a.Member.Delete(ctx, aw); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete AppliedWork %s: %w", aw.GetName(), err)
	}
	delete(a.lastCheck, aw.GetName())
	a.Log.Info("removed the AppliedWork of a deleted Work", "work", aw.GetName())
	return nil
}

// leave does what MC-LEAVE asks of the agent: everything placed on the member is removed
// (every AppliedWork of this member and what it owns), and the agent reports Joined False.
func (a *Agent) leave(ctx context.Context, imc *clusterv1beta1.InternalMemberCluster) error {
	if err := a.collectGarbage(ctx, map[string]bool{}); err != nil {
		return err
	}
	if err := a.heartbeat(ctx, imc, false); err != nil {
		return err
	}
	a.Log.Info("left the fleet", "member", a.Name)
	return nil
}
