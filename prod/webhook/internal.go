package webhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
)

// InternalKinds are the hub's internal objects (ARCH-RESERVED-NS); config/webhook lists
// their resources.
var InternalKinds = []string{
	"ClusterResourceBinding", "ClusterResourceSnapshot", "ClusterSchedulingPolicySnapshot",
	"ClusterResourceOverrideSnapshot", "ResourceOverrideSnapshot", "Work", "InternalMemberCluster",
}

// memberWritable are the internal kinds a member agent writes, in its reserved namespace.
var memberWritable = []string{"Work", "InternalMemberCluster"}

// internal refuses writes of internal objects by anyone but the hub, the member agent of the
// reserved namespace (Works and its InternalMemberCluster), the cluster's own controllers
// (the garbage collector and the namespace controller remove what the hub owns) and
// administrators.
type internal struct {
	reader   client.Reader
	hubUsers []string
}

func (h *internal) Handle(ctx context.Context, req admission.Request) admission.Response {
	if !slices.Contains(InternalKinds, req.Kind.Kind) {
		return admission.Allowed("")
	}
	u := req.UserInfo
	if slices.Contains(u.Groups, "system:masters") || slices.Contains(h.hubUsers, u.Username) || clusterController(u.Username) {
		return admission.Allowed("")
	}
	if member, ok := strings.CutPrefix(req.Namespace, membership.NamespacePrefix); ok && slices.Contains(memberWritable, req.Kind.Kind) {
		mc := &clusterv1beta1.MemberCluster{}
		switch err := h.reader.Get(ctx, client.ObjectKey{Name: member}, mc); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("read MemberCluster %s: %w", member, err))
		case identifies(mc.Spec.Identity, u):
			return admission.Allowed("")
		}
	}
	return admission.Denied(fmt.Sprintf("%s is an internal object of the fleet: user %q may not %s it (only the hub, the member agent of its reserved namespace and administrators may)",
		req.Kind.Kind, u.Username, strings.ToLower(string(req.Operation))))
}

// clusterController reports whether user is one of the cluster's own controllers.
func clusterController(user string) bool {
	return user == "system:kube-controller-manager" || strings.HasPrefix(user, "system:serviceaccount:kube-system:")
}

// identifies reports whether the MemberCluster's identity is the requesting user: a User by
// name, a ServiceAccount by namespace and name, a Group by membership.
func identifies(id rbacv1.Subject, u authenticationv1.UserInfo) bool {
	switch id.Kind {
	case rbacv1.UserKind:
		return id.Name == u.Username
	case rbacv1.ServiceAccountKind:
		return serviceaccount.MakeUsername(id.Namespace, id.Name) == u.Username
	case rbacv1.GroupKind:
		return slices.Contains(u.Groups, id.Name)
	}
	return false
}
