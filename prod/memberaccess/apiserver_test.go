package memberaccess_test

import (
	"context"
	"fmt"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/memberaccess"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestMemberIdentityIsConfinedToItsNamespace runs on a real kube-apiserver with RBAC: member
// "east" is a ServiceAccount authenticating with a token from the TokenRequest API, member
// "west" a User with a client certificate. Each may do its agent's work in its own reserved
// namespace and is forbidden everything in the other's.
func TestMemberIdentityIsConfinedToItsNamespace(t *testing.T) {
	env := testenv.StartEnv(t)
	ctx := context.Background()
	admin := testenv.Client(t, env.Config)

	mustCreate(t, admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-system"}})
	mustCreate(t, admin, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "east-agent", Namespace: "fleet-system"}})
	eastID := rbacv1.Subject{Kind: "ServiceAccount", Name: "east-agent", Namespace: "fleet-system"}
	westID := rbacv1.Subject{Kind: "User", Name: "west-agent"}
	for _, m := range []struct {
		name string
		id   rbacv1.Subject
	}{{"east", eastID}, {"west", westID}} {
		// Twice: Ensure must be idempotent.
		for range 2 {
			if err := memberaccess.Ensure(ctx, admin, m.name, m.id); err != nil {
				t.Fatalf("Ensure(%s) = %v", m.name, err)
			}
		}
		mustCreate(t, admin, &clusterv1beta1.InternalMemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: "fleet-member-" + m.name},
			Spec:       clusterv1beta1.InternalMemberClusterSpec{State: "Join"},
		})
		mustCreate(t, admin, &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "crp-work", Namespace: "fleet-member-" + m.name}})
	}

	east := testenv.Client(t, tokenConfig(t, env.Config, "fleet-system", "east-agent"))
	west := testenv.Client(t, env.User(t, "west-agent"))

	for _, a := range []struct {
		name        string
		c           client.Client
		own, others string
	}{{"east (service account token)", east, "east", "west"}, {"west (client certificate)", west, "west", "east"}} {
		own, others := "fleet-member-"+a.own, "fleet-member-"+a.others
		// The agent's work in its own namespace: read its IMC and report status, follow its
		// Works and report their status.
		testenv.Eventually(t, a.name+": read own InternalMemberCluster", func() error {
			return a.c.Get(ctx, client.ObjectKey{Namespace: own, Name: a.own}, &clusterv1beta1.InternalMemberCluster{})
		})
		imc := &clusterv1beta1.InternalMemberCluster{}
		if err := a.c.Get(ctx, client.ObjectKey{Namespace: own, Name: a.own}, imc); err != nil {
			t.Fatalf("%s: get own IMC: %v", a.name, err)
		}
		imc.Status.AgentStatus = []clusterv1beta1.AgentStatus{{Type: "MemberAgent", LastReceivedHeartbeat: metav1.Now()}}
		if err := a.c.Status().Update(ctx, imc); err != nil {
			t.Errorf("%s: update own IMC status = %v, want allowed", a.name, err)
		}
		works := &placementv1beta1.WorkList{}
		if err := a.c.List(ctx, works, client.InNamespace(own)); err != nil || len(works.Items) != 1 {
			t.Errorf("%s: list own works = %d, %v; want 1, allowed", a.name, len(works.Items), err)
		} else if err := a.c.Status().Update(ctx, &works.Items[0]); err != nil {
			t.Errorf("%s: update own work status = %v, want allowed", a.name, err)
		}

		// Everything else is forbidden: the other member's namespace, its own spec writes
		// beyond what the agent needs, other kinds, and cluster-wide reads.
		forbidden := []struct {
			what string
			do   func() error
		}{
			{"get the other's IMC", func() error {
				return a.c.Get(ctx, client.ObjectKey{Namespace: others, Name: a.others}, &clusterv1beta1.InternalMemberCluster{})
			}},
			{"list the other's works", func() error { return a.c.List(ctx, &placementv1beta1.WorkList{}, client.InNamespace(others)) }},
			{"create a work in the other's namespace", func() error {
				return a.c.Create(ctx, &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "intruder", Namespace: others}})
			}},
			{"delete the other's work", func() error {
				return a.c.Delete(ctx, &placementv1beta1.Work{ObjectMeta: metav1.ObjectMeta{Name: "crp-work", Namespace: others}})
			}},
			{"list works in every namespace", func() error { return a.c.List(ctx, &placementv1beta1.WorkList{}) }},
			{"change its own IMC spec", func() error {
				imc.Spec.State = "Leave"
				return a.c.Update(ctx, imc)
			}},
			{"read secrets in its own namespace", func() error { return a.c.List(ctx, &corev1.SecretList{}, client.InNamespace(own)) }},
			{"grant itself more in its own namespace", func() error {
				return a.c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "more", Namespace: own},
					Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}})
			}},
			{"list member clusters", func() error { return a.c.List(ctx, &clusterv1beta1.MemberClusterList{}) }},
		}
		for _, f := range forbidden {
			if err := f.do(); !apierrors.IsForbidden(err) {
				t.Errorf("%s: %s = %v, want Forbidden", a.name, f.what, err)
			}
		}
	}

	// A binding someone pointed at a broader role is put back to the member's own Role.
	rb := &rbacv1.RoleBinding{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "fleet-member-west", Name: memberaccess.RoleName}, rb); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, rb); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, admin, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: memberaccess.RoleName, Namespace: "fleet-member-west"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "west-agent", APIGroup: rbacv1.GroupName}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
	})
	if err := memberaccess.Ensure(ctx, admin, "west", westID); err != nil {
		t.Fatalf("Ensure(west) over a binding to ClusterRole admin = %v", err)
	}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "fleet-member-west", Name: memberaccess.RoleName}, rb); err != nil {
		t.Fatal(err)
	}
	if want := (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: memberaccess.RoleName}); rb.RoleRef != want {
		t.Errorf("roleRef after Ensure = %+v, want %+v", rb.RoleRef, want)
	}

	// A changed identity moves the access: east's old service account loses it.
	mustCreate(t, admin, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "east-agent-v2", Namespace: "fleet-system"}})
	if err := memberaccess.Ensure(ctx, admin, "east", rbacv1.Subject{Kind: "ServiceAccount", Name: "east-agent-v2", Namespace: "fleet-system"}); err != nil {
		t.Fatalf("Ensure(east, new identity) = %v", err)
	}
	testenv.Eventually(t, "old identity forbidden after the change", func() error {
		err := east.List(ctx, &placementv1beta1.WorkList{}, client.InNamespace("fleet-member-east"))
		if apierrors.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("list = %v, want Forbidden", err)
	})
	eastV2 := testenv.Client(t, tokenConfig(t, env.Config, "fleet-system", "east-agent-v2"))
	testenv.Eventually(t, "new identity allowed after the change", func() error {
		return eastV2.List(ctx, &placementv1beta1.WorkList{}, client.InNamespace("fleet-member-east"))
	})
}

// tokenConfig authenticates as a service account with a bound token from the TokenRequest
// API, as a member agent deployed with a projected token would.
func tokenConfig(t *testing.T, adminCfg *rest.Config, namespace, name string) *rest.Config {
	t.Helper()
	cs, err := kubernetes.NewForConfig(adminCfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(adminCfg)
	cfg.BearerToken = tr.Status.Token
	return cfg
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}
