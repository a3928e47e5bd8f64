package member

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s"
)

// apiMember is the member's API server as one run of a Work's loop (agentk8s.RunWork)
// sees it: reads are fresh (the agent's member client has no cache), writes are the
// agent's as FieldManager, and a conflict is retried after an exponential backoff.
type apiMember struct {
	ctx context.Context
	a   *Agent
}

// writeBackoff is the wait before the first retry of a conflicting write; each retry
// doubles it, and each wait is up to a fifth longer (jitter).
var writeBackoff = wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.2}

// Admit admits every manifest: the API server refuses on the write itself.
func (m apiMember) Admit(*unstructured.Unstructured) error { return nil }

// DryRun server-side applies a copy of o as the agent, taking every field, without
// persisting it: the member's validation and admission (webhooks, admission policies)
// judge it as they would the real write.
func (m apiMember) DryRun(o *unstructured.Unstructured) error {
	obj := o.DeepCopy()
	obj.SetResourceVersion("")
	obj.SetManagedFields(nil)
	return m.a.Member.Apply(m.ctx, client.ApplyConfigurationFromUnstructured(obj),
		client.FieldOwner(agentk8s.FieldManager), client.ForceOwnership, client.DryRunAll)
}

// Get reads the object a manifest names on the member; nil when there is none.
func (m apiMember) Get(o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(o.GroupVersionKind())
	err := m.a.Member.Get(m.ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetName()}, u)
	switch {
	case errors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return u, nil
}

// Write creates, updates or server-side applies as the decision says; the object comes
// back as the API server stored it.
func (m apiMember) Write(d agentk8s.Decision) (*unstructured.Unstructured, error) {
	obj := d.Object
	var err error
	switch d.Op {
	case agentk8s.OpCreate:
		err = m.a.Member.Create(m.ctx, obj, client.FieldOwner(agentk8s.FieldManager))
	case agentk8s.OpUpdate:
		err = m.a.Member.Update(m.ctx, obj, client.FieldOwner(agentk8s.FieldManager))
	case agentk8s.OpServerSideApply:
		obj.SetResourceVersion("")
		obj.SetManagedFields(nil)
		opts := []client.ApplyOption{client.FieldOwner(agentk8s.FieldManager)}
		if d.Force {
			opts = append(opts, client.ForceOwnership)
		}
		// The answer is decoded into obj, as a Patch's would be.
		err = m.a.Member.Apply(m.ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)
	}
	if err != nil {
		return nil, err
	}
	m.a.Log.V(1).Info("applied", "op", string(d.Op), "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName())
	m.a.watch.wrote(obj.GroupVersionKind().GroupKind(), obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion())
	return obj, nil
}

// Backoff sleeps writeBackoff doubled attempt times, jittered; it gives up when the
// agent stops.
func (m apiMember) Backoff(attempt int) error {
	d := writeBackoff.Duration
	for range attempt {
		d = time.Duration(float64(d) * writeBackoff.Factor)
	}
	// Wall time: write backoff is latency only and never changes an outcome.
	t := time.NewTimer(wait.Jitter(d, writeBackoff.Jitter))
	defer t.Stop()
	select {
	case <-m.ctx.Done():
		return m.ctx.Err()
	case <-t.C:
		return nil
	}
}

// Available judges an applied object from its status on the member.
func (m apiMember) Available(_, live *unstructured.Unstructured, t agentk8s.Tracking) (agentk8s.Tracking, bool) {
	return t, agentk8s.Available(live)
}
