package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	placementv1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// violations reads fleetsim_invariant_violations_total by invariant from controller-runtime's
// metrics registry (the one the hub's metrics endpoint serves).
func violations(t *testing.T) map[string]float64 {
	t.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "fleetsim_invariant_violations_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "invariant" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// within polls f until it succeeds, failing after two minutes (a loaded machine is slow).
func within(t *testing.T, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: still %v after 2m", what, err)
}

// TestCheckInvariantsReportsAViolation runs the hub with CheckInvariants (`fleet hub
// --check-invariants`): a placement rolled out by the hub itself violates nothing; a
// binding written directly through the API onto a cluster that is not a member is reported
// at the hub's next decision about the placement as a Warning event on the placement, a log
// line and fleetsim_invariant_violations_total, and the hub goes on deciding.
func TestCheckInvariantsReportsAViolation(t *testing.T) {
	env := testenv.StartEnv(t)
	log := testr.New(t)
	f := &fleetHub{t: t, env: env, admin: testenv.Client(t, env.Config), agents: map[string]*testenv.StandInAgent{}}
	o := testenv.HubOptions(log)
	o.CheckInvariants = true // as `fleet hub --check-invariants`
	f.stop = testenv.RunHubWith(t, env.Config, o)
	ctx := context.Background()
	base := violations(t)
	if _, ok := base["bindingsOnKnownMembers"]; !ok {
		t.Fatalf("fleetsim_invariant_violations_total has no bindingsOnKnownMembers series at start: %v", base)
	}
	f.join("east", nil)
	f.join("west", nil)
	f.create(namespaceWithConfigMap("app")...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("app")},
	})
	f.waitPlacement("app", []string{"east=Bound", "west=Bound"}, placedConditions)
	for name, n := range violations(t) {
		if n != base[name] {
			t.Fatalf("the hub's own rollout reported %v violations of %s (metrics %v)", n-base[name], name, violations(t))
		}
	}

	// A binding of the placement on "ghost", which is not a member, written as the hub's
	// own bindings are.
	var list placementv1beta1.ClusterResourceBindingList
	if err := f.admin.List(ctx, &list, client.MatchingLabels{placementv1beta1.CRPTrackingLabel: "app"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatal("no bindings of app")
	}
	rogue := list.Items[0].DeepCopy()
	rogue.ObjectMeta = metav1.ObjectMeta{Name: "app-ghost-rogue", Labels: rogue.Labels, Annotations: rogue.Annotations}
	rogue.Spec.TargetCluster = "ghost"
	rogue.Spec.State = "Scheduled"
	rogue.Status = placementv1beta1.ResourceBindingStatus{}
	f.create(rogue)
	// The hub does not watch for bindings it did not write; its next decision about the
	// placement (here: the ConfigMap changes, so a new resource snapshot rolls out) sees it.
	cm := &corev1.ConfigMap{}
	if err := f.admin.Get(ctx, client.ObjectKey{Namespace: "app", Name: "settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "green"
	if err := f.admin.Update(ctx, cm); err != nil {
		t.Fatalf("update the ConfigMap: %v", err)
	}

	within(t, "a bindingsOnKnownMembers event on placement app", func() error {
		var evs eventsv1.EventList
		if err := f.admin.List(ctx, &evs); err != nil {
			return err
		}
		var notes []string
		for _, e := range evs.Items {
			if e.Regarding.Kind != "ClusterResourcePlacement" || e.Regarding.Name != "app" || e.Reason != "InvariantViolated" {
				continue
			}
			if e.Type == "Warning" && e.Action == "bindingsOnKnownMembers" && e.Note == "bindingsOnKnownMembers: binding app-ghost-rogue was created on ghost, which is not a member" {
				return nil
			}
			notes = append(notes, e.Type+" "+e.Action+" "+e.Note)
		}
		return fmt.Errorf("no Warning InvariantViolated event about bindingsOnKnownMembers on app among %d events; on app: %q", len(evs.Items), notes)
	})
	if got, want := violations(t)["bindingsOnKnownMembers"], base["bindingsOnKnownMembers"]+1; got != want {
		t.Errorf("fleetsim_invariant_violations_total{invariant=bindingsOnKnownMembers} = %v, want %v (reported once)", got, want)
	}

	// The hub goes on: a second placement is still placed on both members.
	f.create(namespaceWithConfigMap("web")...)
	f.create(&placementv1beta1.ClusterResourcePlacement{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       placementv1beta1.ClusterResourcePlacementSpec{ResourceSelectors: namespaceSelector("web")},
	})
	f.waitPlacement("web", []string{"east=Bound", "west=Bound"}, placedConditions)
}
