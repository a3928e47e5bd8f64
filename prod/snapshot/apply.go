package snapshot

// Applying a what-if change to a real hub (`fleetsim whatif --verify`): the change's
// timeline steps as the hub's API sees them. Only steps a hub's API can perform are
// applied; a member failure, a workload's behaviour or a member-side edit needs the member
// itself and is refused before anything is written.

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/apis/kinds"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/scenarios"
)

// CheckApplicable refuses steps a hub's API cannot perform.
func CheckApplicable(steps []scenarios.Step) error {
	for _, st := range steps {
		switch st.Action {
		case scenarios.ActionApply, scenarios.ActionDelete, scenarios.ActionTaint, scenarios.ActionUntaint, scenarios.ActionLabel:
		default:
			return fmt.Errorf("a %s step cannot be applied to a hub through its API (only apply, delete, taint, untaint and label can)", st.Action)
		}
	}
	return nil
}

// Apply performs steps on a hub, in order, as an administrator would with kubectl; a step
// later in simulated time than the first waits that long in wall-clock time.
func Apply(ctx context.Context, c client.Client, steps []scenarios.Step) error {
	if err := CheckApplicable(steps); err != nil {
		return err
	}
	start := time.Now()
	for _, st := range steps {
		if wait := time.Until(start.Add(st.At - steps[0].At)); wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		var err error
		switch st.Action {
		case scenarios.ActionApply:
			for _, m := range st.Apply {
				if err = applyObject(ctx, c, m.Object.DeepCopy()); err != nil {
					break
				}
			}
		case scenarios.ActionDelete:
			err = deleteObject(ctx, c, st.Delete)
		case scenarios.ActionTaint:
			t := st.Taint.Taint
			if t.Effect == "" {
				t.Effect = member.NoSchedule
			}
			err = updateMember(ctx, c, st.Taint.Member, func(mc *clusterv1beta1.MemberCluster) {
				mc.Spec.Taints = slices.DeleteFunc(mc.Spec.Taints, func(x clusterv1beta1.Taint) bool { return x.Key == t.Key && x.Effect == t.Effect })
				mc.Spec.Taints = append(mc.Spec.Taints, clusterv1beta1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
			})
		case scenarios.ActionUntaint:
			err = updateMember(ctx, c, st.Untaint.Member, func(mc *clusterv1beta1.MemberCluster) {
				mc.Spec.Taints = slices.DeleteFunc(mc.Spec.Taints, func(x clusterv1beta1.Taint) bool { return x.Key == st.Untaint.Key })
			})
		case scenarios.ActionLabel:
			err = updateMember(ctx, c, st.Label.Member, func(mc *clusterv1beta1.MemberCluster) {
				if mc.Labels == nil {
					mc.Labels = map[string]string{}
				}
				for k, v := range st.Label.Set {
					mc.Labels[k] = v
				}
				for _, k := range st.Label.Remove {
					delete(mc.Labels, k)
				}
			})
		}
		if err != nil {
			return fmt.Errorf("%s (line %d): %w", st.Action, st.Line, err)
		}
	}
	return nil
}

// applyObject creates o, or replaces the spec of the object of its name (as kubectl
// replace: fields left out are removed).
func applyObject(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(o.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(o), cur)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("get %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	o.SetResourceVersion(cur.GetResourceVersion())
	if err := c.Update(ctx, o); err != nil {
		return fmt.Errorf("update %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return nil
}

func deleteObject(ctx context.Context, c client.Client, ref *scenarios.ObjectRef) error {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: ref.Kind}
	for _, k := range kinds.Kinds() {
		if k.Kind == ref.Kind {
			gvk = schema.GroupVersionKind{Group: k.Group, Version: kinds.StorageVersion, Kind: k.Kind}
		}
	}
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetName(ref.Name)
	o.SetNamespace(ref.Namespace)
	if err := c.Delete(ctx, o); err != nil {
		return fmt.Errorf("delete %s %s: %w", ref.Kind, ref.Name, err)
	}
	return nil
}

// updateMember changes a MemberCluster's spec, read fresh. The hub writes the member's
// status every heartbeat, so the read can be stale by the time of the update: a Conflict
// reads again and retries (retry.DefaultRetry), as kubectl edit would have the user do.
func updateMember(ctx context.Context, c client.Client, name string, change func(*clusterv1beta1.MemberCluster)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return fmt.Errorf("get MemberCluster %s: %w", name, err)
		}
		change(mc)
		if err := c.Update(ctx, mc); err != nil {
			return fmt.Errorf("update MemberCluster %s: %w", name, err)
		}
		return nil
	})
}
