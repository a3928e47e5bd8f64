package hubbench

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestCalibrationMeasurements: on a real API server, the calibration's write workload writes
// every object of each kind and measures a rate, and its informer delay sees every create
// (the pieces of Calibrate short of the hub run; fleet bench hub --calibrate runs them all).
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
	wl := &writeLoad{c: c}
	if err := wl.setUp(ctx); err != nil {
		t.Fatal(err)
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
	// Each create kind made n objects, each status kind n more to write on: 2n of each.
	var bl v1beta1.ClusterResourceBindingList
	var wlist v1beta1.WorkList
	if err := c.List(ctx, &bl); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &wlist); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{2 * n, 2 * n}, []int{len(bl.Items), len(wlist.Items)}); diff != "" {
		t.Errorf("bindings and Works stored (-want +got):\n%s", diff)
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
