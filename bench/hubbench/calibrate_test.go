package hubbench

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestCalibrationMeasurements: on a real API server, the calibration's list workload stores
// each kind at two sizes and times a LIST of exactly them, its write workload writes every
// object of each kind and measures a rate, and its informer delay sees every create (the
// pieces of Calibrate short of the hub run; fleet bench hub --calibrate runs them all).
func TestCalibrationMeasurements(t *testing.T) {
	env := testenv.StartEnv(t)
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const decisions = 7
	wl := &writeLoad{c: c, decisions: decisions}
	if err := wl.setUp(ctx); err != nil {
		t.Fatal(err)
	}
	const small, large = 3, 8
	for _, k := range listKinds {
		f, err := measureList(ctx, wl, k, small, large)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		if f.small <= 0 || f.large <= 0 {
			t.Errorf("LIST %s: %+v ms an object, want both above 0", k.name, f)
		}
	}
	// The listed policy snapshots hold their decisions, as the hub's scheduler writes them.
	var snaps v1beta1.ClusterSchedulingPolicySnapshotList
	if err := c.List(ctx, &snaps); err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps.Items {
		if len(s.Status.ClusterDecisions) != decisions {
			t.Errorf("policy snapshot %s: %d decisions, want %d", s.Name, len(s.Status.ClusterDecisions), decisions)
		}
	}
	const n = 12
	for _, kind := range writeKinds {
		write, err := wl.prepare(ctx, kind, n)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		f, err := measureWrites(n, 4, write)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if f.perSecond <= 0 {
			t.Errorf("%s: %v writes a second", kind, f.perSecond)
		}
	}
	// The lists stored large of their kinds; each create kind made n objects, each status
	// kind n more to write on.
	var bl v1beta1.ClusterResourceBindingList
	var wlist v1beta1.WorkList
	var psl v1beta1.ClusterSchedulingPolicySnapshotList
	var rsl v1beta1.ClusterResourceSnapshotList
	var pl v1beta1.ClusterResourcePlacementList
	var imcl clusterv1beta1.InternalMemberClusterList
	var mcl clusterv1beta1.MemberClusterList
	var got []int
	for _, l := range []client.ObjectList{&bl, &wlist, &psl, &rsl, &pl, &imcl, &mcl} {
		if err := c.List(ctx, l); err != nil {
			t.Fatal(err)
		}
		got = append(got, meta.LenList(l))
	}
	if diff := cmp.Diff([]int{large + 2*n, large + 2*n, large + 2*n, large + n, n, n, n}, got); diff != "" {
		t.Errorf("bindings, Works, policy and resource snapshots, placements, InternalMemberClusters, MemberClusters stored (-want +got):\n%s", diff)
	}
	for _, mc := range mcl.Items {
		if len(mc.Status.Conditions) != 3 || len(mc.Status.AgentStatus) != 1 || len(mc.Status.Properties) == 0 {
			t.Errorf("MemberCluster %s: status %+v, want the hub's conditions and the agent's report", mc.Name, mc.Status)
		}
	}
	for _, p := range pl.Items {
		if len(p.Status.PlacementStatuses) != decisions {
			t.Errorf("placement %s: %d cluster statuses, want %d", p.Name, len(p.Status.PlacementStatuses), decisions)
		}
	}
	if _, err := wl.prepare(ctx, "binding-delete", 1); err == nil {
		t.Error("prepare(binding-delete) = nil error, want an unknown kind")
	}
	d, err := watchDelay(ctx, env.Config, scheme, c)
	if err != nil {
		t.Fatal(err)
	}
	if d < 0 {
		t.Errorf("informer delay %v ms, want 0 or more", d)
	}
}
