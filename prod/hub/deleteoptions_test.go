package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/model/member"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestMemberDeleteOptions: MemberCluster spec.deleteOptions.validationMode on a real API
// server. Two members whose agents keep heartbeating but never acknowledge the leave are
// deleted: the Skip one is removed without the acknowledgement; the Strict one waits for it
// and goes once its agent acknowledges.
func TestMemberDeleteOptions(t *testing.T) {
	env := testenv.StartEnv(t)
	// A heartbeat timeout far longer than a stalled test could leave the agents silent, so
	// only the validation mode decides whether the hub waits.
	startHubWithTimeout(t, env.Config, 2*time.Minute)
	admin := testenv.Client(t, env.Config)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	acked := map[string]chan struct{}{}
	for _, m := range []struct {
		name string
		mode member.DeleteValidationMode
	}{{"strict", member.DeleteValidationStrict}, {"skip", member.DeleteValidationSkip}} {
		mc := &clusterv1beta1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: m.name},
			Spec: clusterv1beta1.MemberClusterSpec{
				Identity:               rbacv1.Subject{Kind: "User", Name: m.name + "-agent", APIGroup: "rbac.authorization.k8s.io"},
				HeartbeatPeriodSeconds: 1,
				DeleteOptions:          &clusterv1beta1.DeleteOptions{ValidationMode: m.mode},
			},
		}
		if err := admin.Create(ctx, mc); err != nil {
			t.Fatalf("create MemberCluster %s: %v", m.name, err)
		}
		agent := testenv.Client(t, env.User(t, m.name+"-agent"))
		key := client.ObjectKey{Namespace: "fleet-member-" + m.name, Name: m.name}
		ack := make(chan struct{})
		acked[m.name] = ack
		done := make(chan struct{})
		// The agent heartbeats, joined, until told to acknowledge; then it reports left.
		go func() {
			defer close(done)
			joined := metav1.ConditionTrue
			for {
				select {
				case <-ctx.Done():
					return
				case <-ack:
					joined, ack = metav1.ConditionFalse, nil
				case <-time.After(300 * time.Millisecond):
				}
				_ = testenv.ReportAgent(agent, key, joined, metav1.ConditionTrue) // fails once the IMC is gone
			}
		}()
		t.Cleanup(func() { cancel(); <-done })
		testenv.Eventually(t, "member "+m.name+" joined", func() error {
			got := &clusterv1beta1.MemberCluster{}
			if err := admin.Get(ctx, client.ObjectKey{Name: m.name}, got); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, "Joined"); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("Joined is %v", c)
			}
			return nil
		})
	}
	for _, name := range []string{"strict", "skip"} {
		if err := admin.Delete(ctx, &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatalf("delete MemberCluster %s: %v", name, err)
		}
	}
	gone := func(name string) func() error {
		return func() error {
			err := admin.Get(ctx, client.ObjectKey{Name: name}, &clusterv1beta1.MemberCluster{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("MemberCluster %s: get = %v, want NotFound", name, err)
		}
	}
	testenv.Eventually(t, "the Skip member removed without its agent's acknowledgement", gone("skip"))
	// The Strict member's agent is alive and has not acknowledged: the hub still waits.
	got := &clusterv1beta1.MemberCluster{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "strict"}, got); err != nil {
		t.Fatalf("the Strict member is gone before its agent acknowledged: %v", err)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, "Joined"); c == nil || c.Message != "the member is leaving: waiting for the member agent to acknowledge leaving" {
		t.Errorf("Strict member Joined = %v, want it waiting for the agent's acknowledgement", c)
	}
	close(acked["strict"])
	testenv.Eventually(t, "the Strict member removed once its agent acknowledged", gone("strict"))
}
