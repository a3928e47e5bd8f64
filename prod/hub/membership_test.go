package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/prod/hub"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// heartbeatTimeout is short so the test sees a member go stale in seconds.
const heartbeatTimeout = 3 * time.Second

// TestMemberJoinsReportsHealthAndLeaves runs the membership controller on a real
// kube-apiserver. The test plays the member agent, with the member's own identity: it
// reports on its InternalMemberCluster, stops heartbeating, and acknowledges leaving.
func TestMemberJoinsReportsHealthAndLeaves(t *testing.T) {
	env := testenv.StartEnv(t)
	startHub(t, env.Config, testenv.Scheme(t))
	admin := testenv.Client(t, env.Config)
	agent := testenv.Client(t, env.User(t, "east-agent"))
	ctx := context.Background()
	const ns = "fleet-member-east"

	// Join: the hub makes the namespace, the RBAC for the identity and the IMC in state Join.
	mc := &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "east", Labels: map[string]string{"region": "east"}},
		Spec: clusterv1beta1.MemberClusterSpec{
			Identity:               rbacv1.Subject{Kind: "User", Name: "east-agent", APIGroup: "rbac.authorization.k8s.io"},
			HeartbeatPeriodSeconds: 1,
		},
	}
	if err := admin.Create(ctx, mc); err != nil {
		t.Fatalf("create MemberCluster: %v", err)
	}
	imc := &clusterv1beta1.InternalMemberCluster{}
	testenv.Eventually(t, "IMC in state Join, readable by the member's identity", func() error {
		if err := agent.Get(ctx, client.ObjectKey{Namespace: ns, Name: "east"}, imc); err != nil {
			return err
		}
		if imc.Spec.State != "Join" {
			return fmt.Errorf("state %q", imc.Spec.State)
		}
		return nil
	})
	testenv.Eventually(t, "MC ReadyToJoin, Joined unknown until the agent reports", memberConditions(admin, map[string]string{
		"ReadyToJoin": "True/MemberClusterReadyToJoin", "Joined": "Unknown/MemberClusterJoinStateUnknown", "Healthy": "Unknown/MemberClusterHealthUnknown",
	}))

	testenv.Eventually(t, "join recorded as events on the MemberCluster", func() error {
		list := &eventsv1.EventList{}
		if err := admin.List(ctx, list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "MemberCluster" && e.Regarding.Name == "east" && e.Reason == "NamespaceCreated" &&
				e.Note == "fleet-member-east: with Role and RoleBinding for the member identity" && e.ReportingController == "fleet-hub" {
				return nil
			}
		}
		return fmt.Errorf("no NamespaceCreated event for MemberCluster east among %d events", len(list.Items))
	})

	// The agent joins and heartbeats.
	imcKey := client.ObjectKey{Namespace: ns, Name: "east"}
	report := func(joined, healthy metav1.ConditionStatus) error {
		return testenv.ReportAgent(agent, imcKey, joined, healthy)
	}
	testenv.Eventually(t, "agent reports joined and healthy", func() error { return report("True", "True") })
	testenv.Eventually(t, "MC Joined and Healthy", memberConditions(admin, map[string]string{
		"ReadyToJoin": "True/MemberClusterReadyToJoin", "Joined": "True/MemberClusterJoined", "Healthy": "True/MemberClusterHealthy",
	}))

	// The agent falls silent: after the heartbeat timeout the hub stops calling it healthy,
	// on its own (a timed requeue; nothing else changes).
	testenv.Eventually(t, "MC heartbeat timeout", memberConditions(admin, map[string]string{
		"Joined": "True/MemberClusterJoined", "Healthy": "Unknown/MemberClusterHeartbeatTimeout",
	}))
	testenv.Eventually(t, "agent heartbeats again", func() error { return report("True", "True") })
	testenv.Eventually(t, "MC healthy again", memberConditions(admin, map[string]string{"Healthy": "True/MemberClusterHealthy"}))

	// Leave: a binding still targets the member, so the hub waits for it after the agent
	// acknowledges.
	binding := &placementv1beta1.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "crp-east-1"},
		Spec: placementv1beta1.ResourceBindingSpec{State: "Bound", TargetCluster: "east",
			ClusterDecision: placementv1beta1.ClusterDecision{ClusterName: "east", Selected: true, Reason: "picked"}},
	}
	if err := admin.Create(ctx, binding); err != nil {
		t.Fatalf("create binding: %v", err)
	}
	if err := admin.Delete(ctx, mc); err != nil {
		t.Fatalf("delete MemberCluster: %v", err)
	}
	testenv.Eventually(t, "IMC in state Leave", func() error {
		if err := agent.Get(ctx, client.ObjectKey{Namespace: ns, Name: "east"}, imc); err != nil {
			return err
		}
		if imc.Spec.State != "Leave" {
			return fmt.Errorf("state %q", imc.Spec.State)
		}
		return nil
	})
	testenv.Eventually(t, "agent acknowledges leaving", func() error { return report("False", "True") })
	testenv.Eventually(t, "MC waits for the binding", func() error {
		if err := memberConditions(admin, map[string]string{
			"ReadyToJoin": "False/MemberClusterNotReadyToJoin", "Joined": "Unknown/MemberClusterJoinStateUnknown",
		})(); err != nil {
			return err
		}
		got := &clusterv1beta1.MemberCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "east"}, got); err != nil {
			return err
		}
		const want = "the member is leaving: waiting for 1 binding(s) on the member to be removed"
		if c := meta.FindStatusCondition(got.Status.Conditions, "Joined"); c.Message != want {
			return fmt.Errorf("Joined message %q, want %q", c.Message, want)
		}
		return nil
	})
	// It stays: leave cannot finish while the binding targets the member.
	time.Sleep(2 * time.Second)
	if err := admin.Get(ctx, client.ObjectKey{Name: "east"}, &clusterv1beta1.MemberCluster{}); err != nil {
		t.Fatalf("MemberCluster gone while a binding targets it: %v", err)
	}

	if err := admin.Delete(ctx, binding); err != nil {
		t.Fatalf("delete binding: %v", err)
	}
	testenv.Eventually(t, "MemberCluster removed", func() error {
		err := admin.Get(ctx, client.ObjectKey{Name: "east"}, &clusterv1beta1.MemberCluster{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get = %v, want NotFound", err)
	})
	if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "east"}, &clusterv1beta1.InternalMemberCluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("IMC after leave: get = %v, want NotFound", err)
	}
	// envtest runs no namespace controller, so the namespace stays Terminating: check that
	// the hub asked for its deletion.
	nsObj := &corev1.Namespace{}
	switch err := admin.Get(ctx, client.ObjectKey{Name: ns}, nsObj); {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Fatalf("get namespace %s: %v", ns, err)
	case nsObj.DeletionTimestamp == nil:
		t.Errorf("namespace %s after leave: not being deleted", ns)
	}
}

// startHub runs a manager with the membership controller until the test ends.
func startHub(t *testing.T, cfg *rest.Config, s *runtime.Scheme) {
	t.Helper()
	startHubWithTimeout(t, cfg, heartbeatTimeout)
}

// startHubWithTimeout is startHub with a heartbeat timeout of the test's choice.
func startHubWithTimeout(t *testing.T, cfg *rest.Config, timeout time.Duration) {
	t.Helper()
	testenv.RunManager(t, cfg, testr.New(t), func(mgr ctrl.Manager) error {
		return (&hub.MembershipReconciler{
			Client:      mgr.GetClient(),
			Eligibility: member.EligibilityConfig{HeartbeatTimeout: timeout, UnhealthyTolerance: timeout},
			Log:         testr.New(t),
			Events:      mgr.GetEventRecorder("fleet-hub"),
		}).SetupWithManager(mgr)
	})
}

// memberConditions checks the MemberCluster's conditions as "Status/Reason" by type.
func memberConditions(c client.Client, want map[string]string) func() error {
	return func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: "east"}, mc); err != nil {
			return err
		}
		for typ, w := range want {
			got := "absent"
			if cd := meta.FindStatusCondition(mc.Status.Conditions, typ); cd != nil {
				got = string(cd.Status) + "/" + cd.Reason
			}
			if got != w {
				return fmt.Errorf("condition %s = %s, want %s", typ, got, w)
			}
		}
		return nil
	}
}
