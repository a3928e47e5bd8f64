package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	multiclusterv1alpha1 "github.com/fleetsim/fleetsim/apis/multicluster/v1alpha1"
	"github.com/fleetsim/fleetsim/model/clusterprofile"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/prod/hub"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// profileView is what the test compares of a ClusterProfile.
type profileView struct {
	Label, DisplayName, Manager, Version, Healthy string
}

// TestClusterProfilesFollowMembers runs the membership and ClusterProfile controllers on a
// real kube-apiserver: a member's profile appears with its MemberCluster, follows the agent's
// report (version, health, lost heartbeat) and goes when the member starts leaving; a
// profile left behind by a gone member is deleted, another manager's is kept.
func TestClusterProfilesFollowMembers(t *testing.T) {
	env := testenv.StartEnv(t)
	elig := member.EligibilityConfig{HeartbeatTimeout: heartbeatTimeout, UnhealthyTolerance: heartbeatTimeout}
	testenv.RunManager(t, env.Config, testr.New(t), func(mgr ctrl.Manager) error {
		if err := (&hub.MembershipReconciler{Client: mgr.GetClient(), Eligibility: elig, Log: testr.New(t)}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&hub.ClusterProfileReconciler{Client: mgr.GetClient(), Eligibility: elig, Log: testr.New(t)}).SetupWithManager(mgr)
	})
	admin := testenv.Client(t, env.Config)
	agent := testenv.Client(t, env.User(t, "east-agent"))
	ctx := context.Background()
	key := client.ObjectKey{Namespace: clusterprofile.Namespace, Name: "east"}
	profile := func(want profileView) func() error {
		return func() error {
			cp := &multiclusterv1alpha1.ClusterProfile{}
			if err := admin.Get(ctx, key, cp); err != nil {
				return err
			}
			got := profileView{Label: cp.Labels[multiclusterv1alpha1.LabelClusterManager], DisplayName: cp.Spec.DisplayName,
				Manager: cp.Spec.ClusterManager.Name, Version: cp.Status.Version.Kubernetes, Healthy: "absent"}
			if c := meta.FindStatusCondition(cp.Status.Conditions, multiclusterv1alpha1.ConditionControlPlaneHealthy); c != nil {
				got.Healthy = string(c.Status) + "/" + c.Reason
				if c.Message == "" || c.LastTransitionTime.IsZero() {
					return fmt.Errorf("condition %+v: no message or transition time", c)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				return fmt.Errorf("ClusterProfile %s (-want +got):\n%s", key, diff)
			}
			return nil
		}
	}
	kubefleet := profileView{Label: "KubeFleet", DisplayName: "east", Manager: "KubeFleet"}
	with := func(version, healthy string) profileView {
		v := kubefleet
		v.Version, v.Healthy = version, healthy
		return v
	}

	mc := &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "east"},
		Spec: clusterv1beta1.MemberClusterSpec{
			Identity:               rbacv1.Subject{Kind: "User", Name: "east-agent", APIGroup: "rbac.authorization.k8s.io"},
			HeartbeatPeriodSeconds: 1,
		},
	}
	if err := admin.Create(ctx, mc); err != nil {
		t.Fatalf("create MemberCluster: %v", err)
	}
	testenv.Eventually(t, "profile created with the MemberCluster, health unknown", profile(with("", "Unknown/"+clusterprofile.ReasonNoStatus)))

	imcKey := client.ObjectKey{Namespace: "fleet-member-east", Name: "east"}
	report := func(healthy metav1.ConditionStatus) func() error {
		return func() error {
			if err := testenv.ReportAgent(agent, imcKey, "True", healthy); err != nil {
				return err
			}
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				imc := &clusterv1beta1.InternalMemberCluster{}
				if err := agent.Get(ctx, imcKey, imc); err != nil {
					return err
				}
				imc.Status.Properties = map[clusterv1beta1.PropertyName]clusterv1beta1.PropertyValue{
					clusterprofile.KubernetesVersionProperty: {Value: "v1.33.1", ObservationTime: metav1.Now()},
				}
				return agent.Status().Update(ctx, imc)
			})
		}
	}
	testenv.Eventually(t, "agent reports healthy with its version", report("True"))
	testenv.Eventually(t, "profile healthy with the version", profile(with("v1.33.1", "True/"+clusterprofile.ReasonHealthy)))
	testenv.Eventually(t, "agent reports unhealthy", report("False"))
	testenv.Eventually(t, "profile unhealthy", profile(with("v1.33.1", "False/"+clusterprofile.ReasonUnhealthy)))
	// The agent falls silent: past the heartbeat timeout the profile says so on its own.
	testenv.Eventually(t, "profile heartbeat lost", profile(with("v1.33.1", "False/"+clusterprofile.ReasonHeartbeatLost)))

	// Deleted by hand, the profile comes back.
	if err := admin.Delete(ctx, &multiclusterv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatalf("delete ClusterProfile: %v", err)
	}
	testenv.Eventually(t, "profile recreated", profile(with("v1.33.1", "False/"+clusterprofile.ReasonHeartbeatLost)))

	// Leave: the profile goes as soon as the MemberCluster is being deleted.
	if err := admin.Delete(ctx, mc); err != nil {
		t.Fatalf("delete MemberCluster: %v", err)
	}
	gone := func(k client.ObjectKey) func() error {
		return func() error {
			err := admin.Get(ctx, k, &multiclusterv1alpha1.ClusterProfile{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("get ClusterProfile %s = %v, want NotFound", k, err)
		}
	}
	testenv.Eventually(t, "profile deleted on leave", gone(key))

	// Profiles with no member: KubeFleet's are deleted, another manager's are kept.
	for _, name := range []string{"orphan", "theirs"} {
		manager := clusterprofile.ClusterManagerName
		if name == "theirs" {
			manager = "other-manager"
		}
		cp := &multiclusterv1alpha1.ClusterProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: clusterprofile.Namespace, Name: name},
			Spec:       multiclusterv1alpha1.ClusterProfileSpec{ClusterManager: multiclusterv1alpha1.ClusterManager{Name: manager}},
		}
		if err := admin.Create(ctx, cp); err != nil {
			t.Fatalf("create ClusterProfile %s: %v", name, err)
		}
	}
	testenv.Eventually(t, "orphaned KubeFleet profile deleted", gone(client.ObjectKey{Namespace: clusterprofile.Namespace, Name: "orphan"}))
	time.Sleep(time.Second)
	if err := admin.Get(ctx, client.ObjectKey{Namespace: clusterprofile.Namespace, Name: "theirs"}, &multiclusterv1alpha1.ClusterProfile{}); err != nil {
		t.Errorf("another cluster manager's profile: get = %v, want it kept", err)
	}
}

// TestClusterProfileManagerImmutable: the CRD refuses a change of spec.clusterManager.
func TestClusterProfileManagerImmutable(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	ctx := context.Background()
	cp := &multiclusterv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"},
		Spec:       multiclusterv1alpha1.ClusterProfileSpec{ClusterManager: multiclusterv1alpha1.ClusterManager{Name: "KubeFleet"}},
	}
	if err := admin.Create(ctx, cp); err != nil {
		t.Fatalf("create ClusterProfile: %v", err)
	}
	cp.Spec.ClusterManager.Name = "other"
	err := admin.Update(ctx, cp)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("update spec.clusterManager: err = %v, want Invalid", err)
	}
}
