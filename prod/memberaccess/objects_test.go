package memberaccess

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

func TestObjectsBindsTheIdentityInTheReservedNamespace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		identity rbacv1.Subject
		want     rbacv1.Subject
	}{
		{"service account", rbacv1.Subject{Kind: "ServiceAccount", Name: "agent", Namespace: "fleet-system"},
			rbacv1.Subject{Kind: "ServiceAccount", Name: "agent", Namespace: "fleet-system"}},
		// KubeFleet manifests often omit apiGroup for users; RBAC needs it.
		{"user without apiGroup", rbacv1.Subject{Kind: "User", Name: "cluster-1"},
			rbacv1.Subject{Kind: "User", Name: "cluster-1", APIGroup: "rbac.authorization.k8s.io"}},
		{"group", rbacv1.Subject{Kind: "Group", Name: "members", APIGroup: "rbac.authorization.k8s.io"},
			rbacv1.Subject{Kind: "Group", Name: "members", APIGroup: "rbac.authorization.k8s.io"}},
	} {
		ns, role, rb, err := Objects("cluster-1", tc.identity)
		if err != nil {
			t.Fatalf("%s: Objects = %v", tc.name, err)
		}
		if ns.Name != "fleet-member-cluster-1" || role.Namespace != ns.Name || rb.Namespace != ns.Name {
			t.Errorf("%s: namespaces %q, %q, %q, want fleet-member-cluster-1", tc.name, ns.Name, role.Namespace, rb.Namespace)
		}
		if diff := cmp.Diff([]rbacv1.Subject{tc.want}, rb.Subjects); diff != "" {
			t.Errorf("%s: subjects (-want +got):\n%s", tc.name, diff)
		}
		wantRef := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name}
		if rb.RoleRef != wantRef {
			t.Errorf("%s: roleRef = %+v, want %+v", tc.name, rb.RoleRef, wantRef)
		}
		if diff := cmp.Diff(Rules, role.Rules); diff != "" {
			t.Errorf("%s: rules (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestRulesOpenNothingBeyondTheAgentsObjects(t *testing.T) {
	for _, r := range Rules {
		for _, v := range r.Verbs {
			if v == "*" || v == "delete" || v == "deletecollection" || v == "escalate" || v == "bind" || v == "impersonate" {
				t.Errorf("rule %+v grants %q", r, v)
			}
		}
		for _, res := range r.Resources {
			if res == "*" || strings.HasPrefix(res, "secrets") || strings.HasPrefix(res, "roles") || strings.HasPrefix(res, "rolebindings") {
				t.Errorf("rule %+v opens %q", r, res)
			}
		}
	}
}

func TestObjectsRejectsABadIdentity(t *testing.T) {
	for _, tc := range []struct {
		member   string
		identity rbacv1.Subject
		want     string
	}{
		{"c", rbacv1.Subject{Kind: "ServiceAccount", Namespace: "fleet-system"}, `member "c": spec.identity: name is required`},
		{"c", rbacv1.Subject{Kind: "ServiceAccount", Name: "a"}, "namespace is required for kind ServiceAccount"},
		{"c", rbacv1.Subject{Kind: "ServiceAccount", Name: "a", Namespace: "n", APIGroup: "rbac.authorization.k8s.io"}, "apiGroup must be empty for kind ServiceAccount"},
		{"c", rbacv1.Subject{Kind: "User", Name: "a", Namespace: "n"}, "namespace must be empty for kind User"},
		{"c", rbacv1.Subject{Kind: "Group", Name: "a", APIGroup: "example.com"}, `apiGroup must be "rbac.authorization.k8s.io" for kind Group`},
		{"c", rbacv1.Subject{Kind: "Robot", Name: "a"}, `kind "Robot" is not one of ServiceAccount, User, Group`},
		{"Not_A_Name", rbacv1.Subject{Kind: "User", Name: "a"}, `reserved namespace "fleet-member-Not_A_Name" is not a valid namespace name`},
	} {
		_, _, _, err := Objects(tc.member, tc.identity)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Objects(%q, %+v) = %v, want an error containing %q", tc.member, tc.identity, err, tc.want)
		}
	}
}
