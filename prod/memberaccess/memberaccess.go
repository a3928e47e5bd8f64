package memberaccess

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetsim/fleetsim/model/membership"
)

// RoleName names the Role and the RoleBinding in each reserved namespace. One name serves
// every member because each namespace belongs to one member.
const RoleName = "fleet-member-agent"

// LabelMember marks the objects made for a member, so an operator can list them.
const LabelMember = "fleetsim.io/member-cluster"

// Rules are what a member agent may do in its own namespace: follow its InternalMemberCluster
// and report heartbeats and usage in its status; follow its Works, set their finalizers and
// report their status; record events. Secrets, ConfigMaps and every other kind stay closed.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{"cluster.kubernetes-fleet.io"}, Resources: []string{"internalmemberclusters"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"cluster.kubernetes-fleet.io"}, Resources: []string{"internalmemberclusters/status"}, Verbs: []string{"get", "update", "patch"}},
	{APIGroups: []string{"placement.kubernetes-fleet.io"}, Resources: []string{"works"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	{APIGroups: []string{"placement.kubernetes-fleet.io"}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// Objects are the reserved namespace, Role and RoleBinding of member for identity. A bad
// identity is an error that names the field and the reason.
func Objects(member string, identity rbacv1.Subject) (*corev1.Namespace, *rbacv1.Role, *rbacv1.RoleBinding, error) {
	ns := membership.Namespace(member)
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, nil, nil, fmt.Errorf("member %q: reserved namespace %q is not a valid namespace name: %v", member, ns, errs)
	}
	if err := validateIdentity(identity); err != nil {
		return nil, nil, nil, fmt.Errorf("member %q: spec.identity: %w", member, err)
	}
	labels := map[string]string{LabelMember: member}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: RoleName, Namespace: ns, Labels: labels},
		Rules:      slices.Clone(Rules),
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: RoleName, Namespace: ns, Labels: labels},
		Subjects:   []rbacv1.Subject{normalise(identity)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RoleName},
	}
	return namespace, role, binding, nil
}

func validateIdentity(s rbacv1.Subject) error {
	if s.Name == "" {
		return errors.New("name is required")
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Namespace == "" {
			return errors.New("namespace is required for kind ServiceAccount")
		}
		if s.APIGroup != "" {
			return fmt.Errorf("apiGroup must be empty for kind ServiceAccount, not %q", s.APIGroup)
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != "" && s.APIGroup != rbacv1.GroupName {
			return fmt.Errorf("apiGroup must be %q for kind %s, not %q", rbacv1.GroupName, s.Kind, s.APIGroup)
		}
		if s.Namespace != "" {
			return fmt.Errorf("namespace must be empty for kind %s", s.Kind)
		}
	default:
		return fmt.Errorf("kind %q is not one of ServiceAccount, User, Group", s.Kind)
	}
	return nil
}

// normalise fills the apiGroup RBAC requires of users and groups, which KubeFleet manifests
// often leave out.
func normalise(s rbacv1.Subject) rbacv1.Subject {
	if s.Kind != rbacv1.ServiceAccountKind {
		s.APIGroup = rbacv1.GroupName
	}
	return s
}

// Ensure creates the member's namespace, Role and RoleBinding, or brings existing ones back
// to what Objects says: a changed identity replaces the binding's subject, a binding to any
// other role is replaced. It leaves other labels and annotations alone.
func Ensure(ctx context.Context, c client.Client, member string, identity rbacv1.Subject) error {
	want, role, binding, err := Objects(member, identity)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: want.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, ns, func() error {
		ns.Labels = merged(ns.Labels, want.Labels)
		return nil
	}); err != nil {
		return fmt.Errorf("member %q: namespace %s: %w", member, want.Name, err)
	}
	r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: role.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, r, func() error {
		r.Labels = merged(r.Labels, role.Labels)
		r.Rules = role.Rules
		return nil
	}); err != nil {
		return fmt.Errorf("member %q: role %s/%s: %w", member, role.Namespace, role.Name, err)
	}
	// roleRef cannot change in place: a binding to another role (someone else's, or a
	// broader one) is replaced, never left granting what Objects does not say.
	existing := &rbacv1.RoleBinding{}
	switch err := c.Get(ctx, client.ObjectKeyFromObject(binding), existing); {
	case err == nil && existing.RoleRef != binding.RoleRef:
		if err := client.IgnoreNotFound(c.Delete(ctx, existing)); err != nil {
			return fmt.Errorf("member %q: replace role binding %s/%s bound to %s %s: %w", member, binding.Namespace, binding.Name, existing.RoleRef.Kind, existing.RoleRef.Name, err)
		}
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("member %q: role binding %s/%s: %w", member, binding.Namespace, binding.Name, err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name, Namespace: binding.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, rb, func() error {
		rb.Labels = merged(rb.Labels, binding.Labels)
		rb.Subjects = binding.Subjects
		rb.RoleRef = binding.RoleRef
		return nil
	}); err != nil {
		return fmt.Errorf("member %q: role binding %s/%s: %w", member, binding.Namespace, binding.Name, err)
	}
	return nil
}

func merged(have, want map[string]string) map[string]string {
	if have == nil {
		have = map[string]string{}
	}
	for k, v := range want {
		have[k] = v
	}
	return have
}
