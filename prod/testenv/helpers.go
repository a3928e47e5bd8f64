package testenv

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
)

// Scheme knows the built-in kinds and the fleet API's.
func Scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Client is an uncached client for cfg that knows Scheme's kinds.
func Client(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: Scheme(t)})
	if err != nil {
		t.Fatalf("client for %q: %v", cfg.Host, err)
	}
	return c
}

// Eventually retries f every 100ms until it succeeds, and fails the test with f's last error
// after 30s. Controllers act asynchronously, and RBAC changes reach the authorizer through an
// informer, a moment after the write.
func Eventually(t testing.TB, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: still %v after 30s", what, err)
}

// ReportAgent writes what a member agent reports on its InternalMemberCluster at key: a
// heartbeat now, its Joined condition and, unless healthy is empty, its Healthy condition.
// It retries when the hub changed the object between the read and the write.
func ReportAgent(c client.Client, key client.ObjectKey, joined, healthy metav1.ConditionStatus) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		imc := &clusterv1beta1.InternalMemberCluster{}
		if err := c.Get(context.Background(), key, imc); err != nil {
			return err
		}
		return reportOn(context.Background(), c, imc, joined, healthy, time.Now())
	})
}

// reportOn writes an agent's report on imc as read: one write, which fails with a conflict
// when the hub changed the object since.
func reportOn(ctx context.Context, c client.Client, imc *clusterv1beta1.InternalMemberCluster, joined, healthy metav1.ConditionStatus, at time.Time) error {
	now := metav1.NewTime(at)
	conds := []metav1.Condition{{Type: clusterv1beta1.ConditionTypeJoined, Status: joined, Reason: "AgentReport", LastTransitionTime: now}}
	if healthy != "" {
		conds = append(conds, metav1.Condition{Type: clusterv1beta1.ConditionTypeHealthy, Status: healthy, Reason: "AgentReport", LastTransitionTime: now})
	}
	imc.Status.AgentStatus = []clusterv1beta1.AgentStatus{{Type: clusterv1beta1.MemberAgent, LastReceivedHeartbeat: now, Conditions: conds}}
	return c.Status().Update(ctx, imc)
}
