package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestMemberJoinsAndLeaves runs `fleet member` in process against a hub API server (with the
// hub's controllers) and a member API server, through kubeconfig files: it takes its leader
// Lease on the member, answers its probes, joins (the hub marks the member Joined and
// Healthy), and when the MemberCluster is deleted it leaves and exits with 0 on its own.
func TestMemberJoinsAndLeaves(t *testing.T) {
	hub := testenv.StartEnv(t)
	memberEnv := testenv.StartMemberCluster(t)
	testenv.RunHub(t, hub.Config, testr.New(t))
	admin, memberAdmin := testenv.Client(t, hub.Config), testenv.Client(t, memberEnv.Config)
	ctx := context.Background()
	if err := memberAdmin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-system"}}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "west"},
		Spec: clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: 1,
			Identity: rbacv1.Subject{Kind: "User", Name: "west-agent", APIGroup: "rbac.authorization.k8s.io"}}}); err != nil {
		t.Fatal(err)
	}
	probes, metrics := freeAddr(t), freeAddr(t)
	m := startFleet(t, "member", "--hub-kubeconfig", writeKubeconfigAs(t, hub.Config, "west-agent"),
		"--member-kubeconfig", writeKubeconfig(t, memberEnv.Config), "--member-name", "west",
		"--health-probe-bind-address", probes, "--metrics-bind-address", metrics, "--poll", "200ms")
	testenv.Eventually(t, "readyz", func() error {
		if code, ok := m.exited(); ok {
			t.Fatalf("fleet member exited with %d; logs:\n%s", code, m.logs.String())
		}
		return httpOK("http://" + probes + "/readyz")
	})
	lease := &coordinationv1.Lease{}
	testenv.Eventually(t, "leader Lease on the member", func() error {
		if err := memberAdmin.Get(ctx, client.ObjectKey{Namespace: "fleet-system", Name: "fleetsim-member"}, lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder")
		}
		return nil
	})
	testenv.Eventually(t, "west joined and healthy", func() error {
		mc := &clusterv1beta1.MemberCluster{}
		if err := admin.Get(ctx, client.ObjectKey{Name: "west"}, mc); err != nil {
			return err
		}
		for _, typ := range []string{"Joined", "Healthy"} {
			if c := meta.FindStatusCondition(mc.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("%s is %v", typ, c)
			}
		}
		if v := mc.Status.Properties["kubernetes-fleet.io/node-count"].Value; v != "0" {
			return fmt.Errorf("node count %q, want 0 (no nodes)", v)
		}
		return nil
	})
	if err := admin.Delete(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "west"}}); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-m.done:
		m.done <- code
	case <-time.After(2 * time.Minute):
		t.Fatalf("fleet member did not exit after leaving; logs:\n%s", m.logs.String())
	}
	if code != exitOK {
		t.Errorf("fleet member exit code = %d, want %d; logs:\n%s", code, exitOK, m.logs.String())
	}
	if !strings.Contains(m.logs.String(), `"msg":"left the fleet"`) {
		t.Errorf("logs lack the structured leave record:\n%s", m.logs.String())
	}
}

func TestMemberRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"member", "--member-name", "a"}, "--hub-kubeconfig is required"},
		{[]string{"member", "--hub-kubeconfig", "x"}, "--member-name is required"},
		{[]string{"member", "--hub-kubeconfig", "x", "--member-name", "a", "--in-cluster", "--member-kubeconfig", "y"}, "exclusive"},
		{[]string{"member", "--hub-kubeconfig", filepath.Join(t.TempDir(), "missing"), "--member-name", "a"}, "hub kubeconfig: stat"},
		{[]string{"member", "--hub-kubeconfig", "x", "--member-name", "a", "--log-format", "xml"}, `--log-format "xml"`},
		{[]string{"member", "--hub-kubeconfig", "x", "--member-name", "a", "--property-provider", "azure"}, `unknown property provider "azure": must be one of configurable, kubernetes`},
		{[]string{"member", "--hub-kubeconfig", "x", "--member-name", "a", "--properties-configmap", "fleet-system/p"}, "need --property-provider configurable"},
		{[]string{"member", "--hub-kubeconfig", "x", "--member-name", "a", "--property-provider", "configurable", "--properties-configmap", "p"}, `properties ConfigMap "p": must be <namespace>/<name>`},
		{[]string{"member", "--hub-kubeconfig", "x", "--member-name", "a", "--property-provider", "configurable", "--node-label-property", "kubernetes-fleet.io/node-count=x"}, "reported by the built-in provider"},
	} {
		var stderr syncBuffer
		if code := execute(context.Background(), tc.args, io.Discard, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("fleet %v = %d, %q; want %d and a message containing %q", tc.args, code, stderr.String(), exitInvalid, tc.want)
		}
	}
}
