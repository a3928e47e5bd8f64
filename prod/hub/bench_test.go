package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// BenchmarkPlaceOnTenMembers measures how long the hub takes, on a real API server, from
// a new PickAll placement of a namespace with a ConfigMap to the placement being available
// on ten joined members whose stand-in agents report every 50ms. One op is one placement,
// created and awaited (its deletion afterwards is not timed).
func BenchmarkPlaceOnTenMembers(b *testing.B) {
	env := testenv.StartEnv(b)
	admin := testenv.Client(b, env.Config)
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	o := testenv.HubOptions(logr.Discard())
	o.CheckInvariants = false // measure the hub, not the checks
	testenv.RunHubWith(b, env.Config, o)
	const members = 10
	for i := range members {
		name := fmt.Sprintf("member-%02d", i)
		if err := admin.Create(ctx, &clusterv1beta1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       clusterv1beta1.MemberClusterSpec{Identity: rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"}, HeartbeatPeriodSeconds: 5},
		}); err != nil {
			b.Fatal(err)
		}
		a := &testenv.StandInAgent{Client: testenv.Client(b, env.User(b, name+"-agent")), Member: name, Period: 50 * time.Millisecond}
		actx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { a.Run(actx); close(done) }()
		b.Cleanup(func() { cancel(); <-done })
	}
	testenv.Eventually(b, "members joined", func() error {
		var list clusterv1beta1.MemberClusterList
		if err := admin.List(ctx, &list); err != nil {
			return err
		}
		for _, mc := range list.Items {
			if !meta.IsStatusConditionTrue(mc.Status.Conditions, "Healthy") {
				return fmt.Errorf("%s not healthy yet", mc.Name)
			}
		}
		return nil
	})
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("app-%d", i)
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"n": name}},
			&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector(name)}},
		} {
			if err := admin.Create(ctx, o); err != nil {
				b.Fatal(err)
			}
		}
		for {
			crp := &placementv1beta1.ClusterResourcePlacement{}
			if err := admin.Get(ctx, client.ObjectKey{Name: name}, crp); err != nil {
				b.Fatal(err)
			}
			if c := meta.FindStatusCondition(crp.Status.Conditions, "ClusterResourcePlacementAvailable"); c != nil && c.Status == metav1.ConditionTrue &&
				c.ObservedGeneration == crp.Generation && len(crp.Status.PlacementStatuses) == members {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.StopTimer()
		crp := &placementv1beta1.ClusterResourcePlacement{}
		crp.Name = name
		if err := admin.Delete(ctx, crp); err != nil {
			b.Fatal(err)
		}
		testenv.Eventually(b, "placement "+name+" deleted", func() error {
			var bl placementv1beta1.ClusterResourceBindingList
			if err := admin.List(ctx, &bl); err != nil {
				return err
			}
			if len(bl.Items) > 0 {
				return fmt.Errorf("%d bindings left", len(bl.Items))
			}
			return nil
		})
		b.StartTimer()
	}
}
