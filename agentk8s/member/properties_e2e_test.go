package member_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s/member"
	"github.com/fleetsim/fleetsim/agentk8s/member/properties"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

const costProperty = "example.com/cost-per-cpu-core"

// TestPropertySortingByCost is the property-sorting how-to (rank by a cost property) in
// production: two members whose agents run the configurable provider, each member's
// administrator declaring its per-core cost in a ConfigMap. The properties, with the
// Kubernetes version, reach the MemberClusters' status; a PickN 1 placement with an
// Ascending sorter on the cost lands on the cheaper member; after the costs are swapped, a
// second such placement lands on the other one.
func TestPropertySortingByCost(t *testing.T) {
	ctx := context.Background()
	hub := testenv.StartEnv(t)
	admin := testenv.Client(t, hub.Config)
	testenv.RunHub(t, hub.Config, testr.New(t))
	members := map[string]client.Client{}
	versions := map[string]string{}
	for name, cost := range map[string]string{"alpha": "0.1", "bravo": "0.8"} {
		env := hub.StartMemberOn(t, name)
		mc := testenv.Client(t, env.Config)
		members[name] = mc
		d, err := discovery.NewDiscoveryClientForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		versions[name] = v.GitVersion
		for _, o := range []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet-system"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-system", Name: "fleet-properties"}, Data: map[string]string{"cost": costProperty + ": " + cost}},
			&clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1beta1.MemberClusterSpec{HeartbeatPeriodSeconds: 1,
				Identity: rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"}}},
		} {
			c := mc
			if _, ok := o.(*clusterv1beta1.MemberCluster); ok {
				c = admin
			}
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		provider, err := properties.New(properties.Config{Provider: "configurable", ConfigMap: "fleet-system/fleet-properties"})
		if err != nil {
			t.Fatal(err)
		}
		a := &member.Agent{Hub: testenv.Client(t, hub.User(t, name+"-agent")), Member: mc, Name: name, Log: testr.New(t).WithValues("member", name),
			Poll: 100 * time.Millisecond, MemberConfig: env.Config, Properties: provider}
		runCtx, cancel := context.WithCancel(ctx)
		finished := make(chan struct{})
		go func() { _ = a.Run(runCtx); close(finished) }()
		t.Cleanup(func() { cancel(); <-finished })
	}
	reports := func(name, cost string) func() error {
		return func() error {
			mc := &clusterv1beta1.MemberCluster{}
			if err := admin.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
				return err
			}
			got := map[string]string{}
			for k, v := range mc.Status.Properties {
				got[string(k)] = v.Value
			}
			want := map[string]string{costProperty: cost, "kubernetes-fleet.io/node-count": "0", properties.KubernetesVersionProperty: versions[name]}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("properties %v, want %v", got, want)
			}
			if c := meta.FindStatusCondition(mc.Status.Conditions, "Joined"); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("Joined is %+v", c)
			}
			return nil
		}
	}
	wait(t, "alpha reports its cost and version", reports("alpha", "100m"))
	wait(t, "bravo reports its cost and version", reports("bravo", "800m"))
	imc := &clusterv1beta1.InternalMemberCluster{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: membership.Namespace("alpha"), Name: "alpha"}, imc); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{properties.ConditionTypeStarted, properties.ConditionTypeCollectionSucceeded} {
		if c := meta.FindStatusCondition(imc.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("InternalMemberCluster alpha: %s is %+v, want True", typ, c)
		}
	}

	place := func(name string) {
		t.Helper()
		for _, doc := range []string{
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}",
			`apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: ` + name + `}
spec:
  resourceSelectors: [{group: "", version: v1, kind: Namespace, name: ` + name + `}]
  policy:
    placementType: PickN
    numberOfClusters: 1
    affinity:
      clusterAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 20
          preference:
            propertySorter: {name: ` + costProperty + `, sortOrder: Ascending}`,
		} {
			if err := admin.Create(ctx, decode(t, doc)); err != nil {
				t.Fatal(err)
			}
		}
	}
	landsOn := func(ns, want, other string) func() error {
		return func() error {
			if err := members[want].Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); err != nil {
				return fmt.Errorf("namespace %s on %s: %w", ns, want, err)
			}
			if err := members[other].Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); err == nil {
				return fmt.Errorf("namespace %s is on %s too", ns, other)
			}
			return nil
		}
	}
	place("first")
	wait(t, "the first placement lands on the cheaper member, alpha", landsOn("first", "alpha", "bravo"))

	for name, cost := range map[string]string{"alpha": "0.9", "bravo": "0.3"} {
		cm := &corev1.ConfigMap{}
		if err := members[name].Get(ctx, client.ObjectKey{Namespace: "fleet-system", Name: "fleet-properties"}, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["cost"] = costProperty + ": " + cost
		if err := members[name].Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, "alpha reports its new cost", reports("alpha", "900m"))
	wait(t, "bravo reports its new cost", reports("bravo", "300m"))
	place("second")
	wait(t, "the second placement lands on the now cheaper member, bravo", landsOn("second", "bravo", "alpha"))
	// The first placement stays where it is (IgnoredDuringExecution).
	wait(t, "the first placement stays on alpha", landsOn("first", "alpha", "bravo"))
}
