package member

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
)

// AppliedWorkGVK is the AppliedWork kind on the member (WORK-APPLIEDWORK); its CRD is
// config/member/crd.
var AppliedWorkGVK = schema.GroupVersionKind{Group: "placement.kubernetes-fleet.io", Version: "v1beta1", Kind: agentk8s.AppliedWorkKind}

// appliedResource is one entry of an AppliedWork's status.appliedResources.
type appliedResource struct {
	Ordinal   int    `json:"ordinal"`
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	UID       string `json:"uid,omitempty"`
}

func (r appliedResource) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

func (r appliedResource) key() string {
	return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

func newAppliedWork(work, workNamespace string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(AppliedWorkGVK)
	u.SetName(work)
	_ = unstructured.SetNestedField(u.Object, work, "spec", "workName")
	_ = unstructured.SetNestedField(u.Object, workNamespace, "spec", "workNamespace")
	return u
}

// ensureAppliedWork gets or creates the Work's AppliedWork, recording on it the Work's
// placement and delete strategy (the Work's delete-propagation-policy annotation), which the
// agent needs once the Work is gone.
func (a *Agent) ensureAppliedWork(ctx context.Context, w *v1beta1.Work) (*unstructured.Unstructured, error) {
	policy := w.Annotations[v1beta1.DeletePropagationPolicyAnnotation]
	placementName := w.Labels[v1beta1.CRPTrackingLabel]
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(AppliedWorkGVK)
	err := a.Member.Get(ctx, client.ObjectKey{Name: w.Name}, u)
	if err == nil {
		if u.GetAnnotations()[v1beta1.DeletePropagationPolicyAnnotation] == policy && u.GetLabels()[v1beta1.CRPTrackingLabel] == placementName {
			return u, nil
		}
		recordDeleteStrategy(u, policy, placementName)
		if err := a.Member.Update(ctx, u); err != nil {
			return nil, fmt.Errorf("record the delete strategy in AppliedWork %s: %w", w.Name, err)
		}
		return u, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get AppliedWork %s: %w", w.Name, err)
	}
	u = newAppliedWork(w.Name, a.namespace())
	recordDeleteStrategy(u, policy, placementName)
	if err := a.Member.Create(ctx, u); err != nil {
		return nil, fmt.Errorf("create AppliedWork %s: %w", w.Name, err)
	}
	return u, nil
}

func recordDeleteStrategy(u *unstructured.Unstructured, policy, placementName string) {
	ann := u.GetAnnotations()
	if policy == "" {
		delete(ann, v1beta1.DeletePropagationPolicyAnnotation)
	} else {
		if ann == nil {
			ann = map[string]string{}
		}
		ann[v1beta1.DeletePropagationPolicyAnnotation] = policy
	}
	u.SetAnnotations(ann)
	labels := u.GetLabels()
	if placementName == "" {
		delete(labels, v1beta1.CRPTrackingLabel)
	} else {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v1beta1.CRPTrackingLabel] = placementName
	}
	u.SetLabels(labels)
}

// abandons reports whether what a gone Work's AppliedWork records is to be left on the
// member: its placement had deleteStrategy Abandon and is deleted or being deleted (a Work
// dropped while its placement lives, e.g. the member unscheduled, still removes its objects),
// or the agent may not read the placement.
func (a *Agent) abandons(ctx context.Context, aw *unstructured.Unstructured) (bool, error) {
	if aw.GetAnnotations()[v1beta1.DeletePropagationPolicyAnnotation] != string(placement.DeletePropagationAbandon) {
		return false, nil
	}
	name := aw.GetLabels()[v1beta1.CRPTrackingLabel]
	if name == "" {
		return false, nil
	}
	var crp v1beta1.ClusterResourcePlacement
	err := a.Hub.Get(ctx, client.ObjectKey{Name: name}, &crp)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if apierrors.IsForbidden(err) {
		// The agent's namespaced Role does not let it read placements: it cannot tell a
		// deleted placement from a dropped member, and keeps the objects (deleting is the
		// step that cannot be undone).
		a.Log.Info("cannot read the placement; abandoning as its delete strategy says", "appliedWork", aw.GetName(), "placement", name)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get ClusterResourcePlacement %s for the delete strategy of AppliedWork %s: %w", name, aw.GetName(), err)
	}
	return crp.DeletionTimestamp != nil, nil
}

func ownerOf(aw *unstructured.Unstructured) metav1.OwnerReference {
	no := false
	return metav1.OwnerReference{APIVersion: agentk8s.AppliedWorkAPIVersion, Kind: agentk8s.AppliedWorkKind,
		Name: aw.GetName(), UID: aw.GetUID(), BlockOwnerDeletion: &no}
}

func appliedResources(aw *unstructured.Unstructured) []appliedResource {
	raw, _, _ := unstructured.NestedSlice(aw.Object, "status", "appliedResources")
	var out []appliedResource
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		ord := 0
		switch n := m["ordinal"].(type) {
		case int64:
			ord = int(n)
		case float64:
			ord = int(n)
		}
		out = append(out, appliedResource{Ordinal: ord, Group: str("group"), Version: str("version"), Kind: str("kind"),
			Resource: str("resource"), Namespace: str("namespace"), Name: str("name"), UID: str("uid")})
	}
	return out
}

func setAppliedResources(aw *unstructured.Unstructured, rs []appliedResource) {
	list := make([]any, 0, len(rs))
	for _, r := range rs {
		m := map[string]any{"ordinal": int64(r.Ordinal), "version": r.Version, "kind": r.Kind, "name": r.Name}
		for k, v := range map[string]string{"group": r.Group, "resource": r.Resource, "namespace": r.Namespace, "uid": r.UID} {
			if v != "" {
				m[k] = v
			}
		}
		list = append(list, m)
	}
	_ = unstructured.SetNestedSlice(aw.Object, list, "status", "appliedResources")
}
