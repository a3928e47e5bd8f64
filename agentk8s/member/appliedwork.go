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

// ensureAppliedWork gets or creates the Work's AppliedWork.
func (a *Agent) ensureAppliedWork(ctx context.Context, work string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(AppliedWorkGVK)
	err := a.Member.Get(ctx, client.ObjectKey{Name: work}, u)
	if err == nil {
		return u, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get AppliedWork %s: %w", work, err)
	}
	u = newAppliedWork(work, a.namespace())
	if err := a.Member.Create(ctx, u); err != nil {
		return nil, fmt.Errorf("create AppliedWork %s: %w", work, err)
	}
	return u, nil
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
