package main

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestHubFailover runs two replicas of `fleet hub`: only the Lease holder reconciles; when
// it stops, the other takes the Lease and carries on where it left off, a member's leave
// begun under the first finishing under the second, with nothing duplicated.
func TestHubFailover(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-system"}}); err != nil {
		t.Fatal(err)
	}
	args := []string{"hub", "--kubeconfig", writeKubeconfig(t, env.Config), "--metrics-bind-address", "0",
		"--health-probe-bind-address", "0", "--leader-election-namespace", "fleet-system", "--heartbeat-timeout", "1m"}
	holder := func() string { return leaseHolder(t, admin) }

	first := startFleet(t, args...)
	testenv.Eventually(t, "first replica leads", func() error {
		if holder() == "" {
			return fmt.Errorf("no lease holder")
		}
		return nil
	})
	leader := holder()
	second := startFleet(t, args...)

	if err := admin.Create(ctx, &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "north"},
		Spec:       clusterv1beta1.MemberClusterSpec{Identity: rbacv1.Subject{Kind: "User", Name: "north-agent"}},
	}); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "fleet-member-north", Name: "north"}
	testenv.Eventually(t, "IMC created by the leader", func() error { return admin.Get(ctx, key, &clusterv1beta1.InternalMemberCluster{}) })
	if got := holder(); got != leader {
		t.Fatalf("lease holder changed from %q to %q while the first replica ran", leader, got)
	}
	// The member's agent has joined, so leaving will wait for it to acknowledge.
	if err := testenv.ReportAgent(admin, key, "True", ""); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "member joined", func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "north"}, mc); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(mc.Status.Conditions, "Joined"); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Joined = %+v", c)
		}
		return nil
	})
	if err := admin.Delete(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "north"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "IMC set to Leave by the leader", func() error {
		imc := &clusterv1beta1.InternalMemberCluster{}
		if err := admin.Get(ctx, key, imc); err != nil {
			return err
		}
		if imc.Spec.State != "Leave" {
			return fmt.Errorf("state %q", imc.Spec.State)
		}
		return nil
	})

	// The leader goes away mid-leave.
	if code := first.stop(); code != exitOK {
		t.Fatalf("first replica exit code = %d; logs:\n%s", code, first.logs.String())
	}
	testenv.Eventually(t, "second replica takes the lease", func() error {
		if h := holder(); h == "" || h == leader {
			return fmt.Errorf("holder %q", h)
		}
		return nil
	})

	// The agent acknowledges; the second replica finishes the leave.
	if err := testenv.ReportAgent(admin, key, "False", ""); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "MemberCluster removed by the second replica", func() error {
		err := admin.Get(ctx, client.ObjectKey{Name: "north"}, &clusterv1beta1.MemberCluster{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get = %v, want NotFound", err)
	})
	imcs := &clusterv1beta1.InternalMemberClusterList{}
	if err := admin.List(ctx, imcs); err != nil || len(imcs.Items) != 0 {
		t.Errorf("InternalMemberClusters after leave = %d (%v), want 0", len(imcs.Items), err)
	}
	if code := second.stop(); code != exitOK {
		t.Errorf("second replica exit code = %d; logs:\n%s", code, second.logs.String())
	}
}
