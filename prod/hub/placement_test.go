package hub_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// fleetHub is a running hub with the clients and stand-in agents of a test.
type fleetHub struct {
	t      *testing.T
	env    *testenv.Env
	admin  client.Client
	agents map[string]*testenv.StandInAgent
	stop   func()
}

// startFleet starts the hub's manager (all controllers) on env.
func startFleet(t *testing.T, env *testenv.Env) *fleetHub {
	t.Helper()
	f := &fleetHub{t: t, env: env, admin: testenv.Client(t, env.Config), agents: map[string]*testenv.StandInAgent{}}
	f.stop = runManager(t, env.Config)
	return f
}

// runManager starts a manager running every hub controller and returns its stop function.
func runManager(t *testing.T, cfg *rest.Config) func() {
	return testenv.RunHub(t, cfg, testr.New(t))
}

// join creates a member with labels and starts its stand-in agent, then waits until the
// hub reports it joined and healthy.
func (f *fleetHub) join(name string, labels map[string]string) *testenv.StandInAgent {
	f.t.Helper()
	ctx := context.Background()
	mc := &clusterv1beta1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: clusterv1beta1.MemberClusterSpec{
			Identity:               rbacv1.Subject{Kind: "User", Name: name + "-agent", APIGroup: "rbac.authorization.k8s.io"},
			HeartbeatPeriodSeconds: 1,
		},
	}
	if err := f.admin.Create(ctx, mc); err != nil {
		f.t.Fatalf("create MemberCluster %s: %v", name, err)
	}
	a := &testenv.StandInAgent{Client: testenv.Client(f.t, f.env.User(f.t, name+"-agent")), Member: name}
	actx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(actx); close(done) }()
	f.t.Cleanup(func() { cancel(); <-done })
	f.agents[name] = a
	testenv.Eventually(f.t, "member "+name+" joined and healthy", func() error {
		got := &clusterv1beta1.MemberCluster{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return err
		}
		for _, typ := range []string{"Joined", "Healthy"} {
			if c := meta.FindStatusCondition(got.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
				return fmt.Errorf("%s is %v", typ, c)
			}
		}
		return nil
	})
	return a
}

// create creates objects as the admin.
func (f *fleetHub) create(objs ...client.Object) {
	f.t.Helper()
	for _, o := range objs {
		if err := f.admin.Create(context.Background(), o); err != nil {
			f.t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// bindings lists a placement's bindings as "cluster=state" sorted.
func (f *fleetHub) bindings(crp string) ([]string, error) {
	var list placementv1beta1.ClusterResourceBindingList
	if err := f.admin.List(context.Background(), &list, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: crp}); err != nil {
		return nil, err
	}
	var out []string
	for _, b := range list.Items {
		out = append(out, b.Spec.TargetCluster+"="+string(b.Spec.State))
	}
	sort.Strings(out)
	return out, nil
}

// crpConditions reads a placement's conditions as "Type=Status/Reason", sorted.
func (f *fleetHub) crpConditions(name string) ([]string, *placementv1beta1.ClusterResourcePlacement, error) {
	crp := &placementv1beta1.ClusterResourcePlacement{}
	if err := f.admin.Get(context.Background(), client.ObjectKey{Name: name}, crp); err != nil {
		return nil, nil, err
	}
	var out []string
	for _, c := range crp.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	sort.Strings(out)
	return out, crp, nil
}

// waitPlacement waits until the placement's bindings and conditions are as wanted.
func (f *fleetHub) waitPlacement(name string, bindings, conditions []string) {
	f.t.Helper()
	testenv.Eventually(f.t, "placement "+name, func() error {
		got, err := f.bindings(name)
		if err != nil {
			return err
		}
		if !slices.Equal(got, bindings) {
			return fmt.Errorf("bindings %v, want %v", got, bindings)
		}
		conds, _, err := f.crpConditions(name)
		if err != nil {
			return err
		}
		if !slices.Equal(conds, conditions) {
			return fmt.Errorf("conditions\n  %s\nwant\n  %s", strings.Join(conds, "\n  "), strings.Join(conditions, "\n  "))
		}
		return nil
	})
}

func namespaceWithConfigMap(ns string) []client.Object {
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"color": "blue"}},
	}
}

func namespaceSelector(ns string) []placementv1beta1.ClusterResourceSelector {
	return []placementv1beta1.ClusterResourceSelector{{Group: "", Version: "v1", Kind: "Namespace", Name: ns}}
}

// placedConditions are the conditions of a placement whose resources are available on
// every cluster it wanted.
var placedConditions = []string{
	"ClusterResourcePlacementApplied=True/ApplySucceeded",
	"ClusterResourcePlacementAvailable=True/ResourceAvailable",
	"ClusterResourcePlacementOverridden=True/NoOverrideSpecified",
	"ClusterResourcePlacementRolloutStarted=True/RolloutStarted",
	"ClusterResourcePlacementScheduled=True/SchedulingPolicyFulfilled",
	"ClusterResourcePlacementWorkSynchronized=True/WorkSynchronized",
}

// TestPickAllPlacesOnEveryMember: a PickAll placement of a namespace binds every joined
// member, writes a Work with the namespace and its ConfigMap into each member's reserved
// namespace, and reports the placement available once the agents say so.
func TestPickAllPlacesOnEveryMember(t *testing.T) {
	f := startFleet(t, testenv.StartEnv(t))
	f.join("east", map[string]string{"region": "east"})
	f.join("west", map[string]string{"region": "west"})
	f.create(namespaceWithConfigMap("app")...)
	// What a hub cut while writing a resource snapshot group leaves: a part without its
	// leading snapshot. It must not stop the hub, and is cleaned up.
	f.create(&placementv1beta1.ClusterResourceSnapshot{ObjectMeta: metav1.ObjectMeta{
		Name:        "app-0-1",
		Labels:      map[string]string{placementv1beta1.CRPTrackingLabel: "app", placementv1beta1.ResourceIndexLabel: "0", placementv1beta1.IsLatestSnapshotLabel: "true"},
		Annotations: map[string]string{placementv1beta1.SubindexOfResourceSnapshotAnnotation: "1"},
	}, Spec: placementv1beta1.ResourceSnapshotSpec{SelectedResources: []placementv1beta1.ResourceContent{
		{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"part","namespace":"app"}}`)}},
	}}})
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("app")},
	})
	f.waitPlacement("app", []string{"east=Bound", "west=Bound"}, placedConditions)
	testenv.Eventually(t, "the leftover part replaced by a whole snapshot", func() error {
		var list placementv1beta1.ClusterResourceSnapshotList
		if err := f.admin.List(context.Background(), &list); err != nil {
			return err
		}
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		if fmt.Sprint(names) != "[app-0-snapshot]" {
			return fmt.Errorf("resource snapshots %v, want [app-0-snapshot]", names)
		}
		return nil
	})

	for _, m := range []string{"east", "west"} {
		var works placementv1beta1.WorkList
		if err := f.admin.List(context.Background(), &works, client.InNamespace("fleet-member-"+m)); err != nil {
			t.Fatal(err)
		}
		if len(works.Items) != 1 || len(works.Items[0].Spec.Workload.Manifests) != 2 {
			t.Fatalf("Works in fleet-member-%s = %d with %v manifests, want 1 Work with the namespace and the ConfigMap", m, len(works.Items), works.Items)
		}
	}

	// Deleting the placement takes its bindings, Works and snapshots with it, then the
	// placement itself (its finalizer holds it until then).
	crp := &placementv1beta1.ClusterResourcePlacement{}
	crp.Name = "app"
	if err := f.admin.Delete(context.Background(), crp); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "placement deleted with everything it made", func() error {
		ctx := context.Background()
		for _, l := range []client.ObjectList{&placementv1beta1.ClusterResourceBindingList{}, &placementv1beta1.WorkList{},
			&placementv1beta1.ClusterResourceSnapshotList{}, &placementv1beta1.ClusterSchedulingPolicySnapshotList{}} {
			if err := f.admin.List(ctx, l); err != nil {
				return err
			}
			if n := meta.LenList(l); n != 0 {
				return fmt.Errorf("%T still has %d items", l, n)
			}
		}
		err := f.admin.Get(ctx, client.ObjectKey{Name: "app"}, &placementv1beta1.ClusterResourcePlacement{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the placement is still there (%v)", err)
		}
		return nil
	})
}
