package difftest

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// workloadKinds are the trackable kinds a member's controllers make available: envtest runs
// no controller-manager, kubelet or cloud controller, so runWorkloads writes the status they
// would (for a Service, the load balancer's address a cloud controller assigns; ClusterIP
// and NodePort Services get their cluster IP from the API server itself).
var workloadKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Version: "v1", Kind: "Service"},
}

// runWorkloads plays a member cluster's controllers for the real agents: every workload of
// workloadKinds on the member becomes available, or stays (or becomes) unavailable when the
// scenario's workload steps say so (workloadOracle, the simulator's rule), until the test
// ends.
func (f *fleet) runWorkloads(name string, env *testenv.Env) {
	c := testenv.Client(f.t, env.Config)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	rounds := &playerRounds{kick: make(chan struct{}, 1)}
	f.workloadRounds.Store(name, rounds)
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			rounds.started.Add(1)
			for _, gvk := range workloadKinds {
				f.playWorkloads(ctx, c, name, gvk)
			}
			rounds.finished.Add(1)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-rounds.kick:
			}
		}
	}()
	f.t.Cleanup(func() { cancel(); <-done })
}

// playerRounds counts the rounds of a member's workload player, as StandInAgent's Started
// and Rounds do for a stand-in, and lets the test start the next one at once.
type playerRounds struct {
	started, finished atomic.Uint64
	kick              chan struct{}
}

// Kick starts the next round now if the player is waiting for its period.
func (r *playerRounds) Kick() {
	select {
	case r.kick <- struct{}{}:
	default: // a round is already due
	}
}

func (f *fleet) playWorkloads(ctx context.Context, c client.Client, member string, gvk schema.GroupVersionKind) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, l); err != nil {
		return // retried next round
	}
	for i := range l.Items {
		o := &l.Items[i]
		want := f.workloads.outcome(member, o) == testenv.Available
		if agentk8s.Available(o) == want {
			continue
		}
		if gvk.Kind == "Service" {
			if t, _, _ := unstructured.NestedString(o.Object, "spec", "type"); t != "LoadBalancer" {
				continue
			}
			var ingress []any
			if want {
				ingress = []any{map[string]any{"ip": "192.0.2.10"}} // TEST-NET-1: documentation addresses
			}
			_ = unstructured.SetNestedSlice(o.Object, ingress, "status", "loadBalancer", "ingress")
			_ = c.Status().Update(ctx, o) // a conflict is retried next round
			continue
		}
		replicas, ok, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
		if !ok {
			replicas = 1
		}
		n := replicas
		if !want {
			n = 0
		}
		var status map[string]any
		switch gvk.Kind {
		case "Deployment":
			status = map[string]any{"observedGeneration": o.GetGeneration(), "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": n, "availableReplicas": n}
		case "StatefulSet":
			status = map[string]any{"observedGeneration": o.GetGeneration(), "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": n, "availableReplicas": n}
		case "DaemonSet":
			status = map[string]any{"observedGeneration": o.GetGeneration(), "desiredNumberScheduled": int64(1), "currentNumberScheduled": int64(1),
				"numberMisscheduled": int64(0), "numberReady": min(n, 1), "updatedNumberScheduled": int64(1), "numberAvailable": min(n, 1)}
		case "Job":
			status = map[string]any{"ready": min(n, 1)}
		}
		_ = unstructured.SetNestedMap(o.Object, status, "status")
		_ = c.Status().Update(ctx, o) // a conflict is retried next round
	}
}
