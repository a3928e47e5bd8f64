package hub

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fleetsim/fleetsim/model/triggers"
)

// A placement that selects a namespace places every propagatable object in it, including
// objects of kinds a CustomResourceDefinition added after the hub started (an ArgoCD
// Application, in KubeFleet's ArgoCD tutorial). Which kinds a namespace can hold comes from
// discovery; the Resync ticker reads it again every few minutes, but a user who installs a
// CRD and then creates an object of it expects the placement to pick the object up at
// once, as the simulator does. So the hub watches CRDs (metadata only) and reads discovery
// again when one is created, changes (it becomes Established) or is deleted.

// discoveryCatchUp bounds how long the hub waits for discovery to serve a changed CRD's
// kind. Latency only: it decides how soon a new kind is seen, not what is placed, so it
// runs on the wall clock.
const (
	discoveryCatchUpTries = 20
	discoveryCatchUpEvery = 250 * time.Millisecond
)

// watchCRDs adds the CRD watch to the builder.
func (h *Hub) watchCRDs(b *ctrl.Builder) *ctrl.Builder {
	crd := &metav1.PartialObjectMetadata{}
	crd.APIVersion = "apiextensions.k8s.io/v1"
	crd.Kind = "CustomResourceDefinition"
	return b.WatchesMetadata(crd, handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !e.IsInInitialList { // a starting hub reads discovery and decides every placement (HubStarted)
				go h.kindsMayHaveChanged(context.WithoutCancel(ctx))
			}
		},
		UpdateFunc: func(ctx context.Context, _ event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			go h.kindsMayHaveChanged(context.WithoutCancel(ctx))
		},
		DeleteFunc: func(ctx context.Context, _ event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			go h.kindsMayHaveChanged(context.WithoutCancel(ctx))
		},
	})
}

// discoveryCatchUp keeps one discovery poller at a time. An operator install creates dozens
// of CRDs within a second, each creating and then updating its object; a poller per event
// would read discovery hundreds of times. Events that arrive while a poller runs only ask it
// to start its tries again when it ends, so the last CRD is still waited for.
type discoveryCatchUp struct {
	mu      sync.Mutex
	running bool
	again   bool
}

// start reports whether the caller should run the poller (none runs); otherwise it asks the
// running one to try again.
func (d *discoveryCatchUp) start() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running {
		d.again = true
		return false
	}
	d.running = true
	return true
}

// finish reports whether the poller should run its tries once more (events came meanwhile),
// and otherwise marks it stopped.
func (d *discoveryCatchUp) finish() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.again {
		d.again = false
		return true
	}
	d.running = false
	return false
}

// kindsMayHaveChanged runs the discovery poller unless one runs already.
func (h *Hub) kindsMayHaveChanged(ctx context.Context) {
	if h.Resources == nil || !h.crds.start() {
		return
	}
	for {
		h.pollDiscovery(ctx)
		if !h.crds.finish() {
			return
		}
	}
}

// pollDiscovery reads discovery again until it shows a change in the namespaced kinds (a
// CRD is served a moment after it is Established) or the tries run out, and wakes every
// placement when it does.
func (h *Hub) pollDiscovery(ctx context.Context) {
	for range discoveryCatchUpTries {
		if h.Resources.Refresh() {
			h.fire(ctx, nil, triggers.HubResourceChanged, "", "", "")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(discoveryCatchUpEvery):
		}
	}
}
