package difftest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentk8s"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/staged"
	"github.com/fleetsim/fleetsim/prod/testenv"
	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/sim"
)

// workloadOracle answers how a member plays a manifest under the scenario's workload steps
// so far, with the simulator's own rule (a simulator holding only those steps): the
// stand-in agents report what the simulated members do, and the rule is not written twice.
//
// A trackable object the rule makes available becomes so readyDelay after a member first
// sees its content, on the fleet's clock (the simulator's WorkloadReadyDelay); the deadline
// is noted on the clock so the test steps to it.
type workloadOracle struct {
	mu         sync.Mutex
	s          *sim.Sim
	clk        *fleetClock
	readyDelay time.Duration
	seen       map[string]time.Time // member and canonical content -> first seen
	trackable  bool                 // the scenario applied a trackable object on the hub
}

func newWorkloadOracle(t *testing.T, clk *fleetClock) *workloadOracle {
	s, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// A trackable workload is ready as long after a member first sees it as the
	// simulator's members take (sim.Config.WorkloadReadyDelay).
	return &workloadOracle{s: s, clk: clk, readyDelay: s.WorkloadReadyDelay(), seen: map[string]time.Time{}}
}

// placesTrackable records that the scenario has applied a trackable object on the hub,
// which members may be given.
func (o *workloadOracle) placesTrackable() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.trackable = true
}

// tracking reports whether trackable workloads may reach members and wait to be ready
// (then the test must let the members catch up before each step of the clock).
func (o *workloadOracle) tracking() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.readyDelay > 0 && o.trackable
}

func (o *workloadOracle) set(w *scenarios.WorkloadStep) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.s.SetWorkload(simWorkload(w)) // the simulator took the same step already
}

func (o *workloadOracle) outcome(member string, obj *unstructured.Unstructured) testenv.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.s.WorkloadBehaviorOf(member, obj) {
	case sim.WorkloadUnavailable:
		return testenv.Unavailable
	case sim.WorkloadApplyFails:
		return testenv.ApplyFails
	}
	if o.readyDelay <= 0 || agentk8s.Classify(obj) != agentk8s.Trackable {
		return testenv.Available
	}
	// The content is the object's spec: the stand-ins pass a Work's manifest, the member
	// controllers of the real agents the live object, whose metadata and status change
	// while its spec (what a rollout changes) does not.
	spec, _ := json.Marshal(obj.Object["spec"])
	gvk := obj.GroupVersionKind()
	key := strings.Join([]string{member, gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName(), string(spec)}, "\x00")
	now := o.clk.Now()
	first, ok := o.seen[key]
	if !ok {
		first = now
		o.seen[key] = now
		o.clk.noteAt(now.Add(o.readyDelay))
	}
	if now.Before(first.Add(o.readyDelay)) {
		return testenv.Unavailable // not ready yet
	}
	return testenv.Available
}

// fail stops a member's agent, as the simulator's crash and partition do (neither
// heartbeats nor reports reach the hub): a stand-in goes down, a real agent is stopped.
func (f *fleet) fail(name string) {
	f.t.Helper()
	f.down[name] = true
	if a := f.standIns[name]; a != nil {
		a.SetDown(true)
		return
	}
	if stop := f.stops[name]; stop != nil {
		stop()
		delete(f.running, name)
	}
}

// heal runs a failed member's agent again.
func (f *fleet) heal(name string) {
	f.t.Helper()
	if !f.down[name] {
		return
	}
	delete(f.down, name)
	if a := f.standIns[name]; a != nil {
		a.SetDown(false)
		return
	}
	f.startRealAgent(name)
}

// approve approves a ClusterApprovalRequest as a user does: Approved=True in its status,
// observing its generation, at the fleet's time.
func (f *fleet) approve(name string) {
	f.t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		a := &v1beta1.ClusterApprovalRequest{}
		if err := f.admin.Get(ctx, client.ObjectKey{Name: name}, a); err != nil {
			return err
		}
		meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: staged.TypeApproved, Status: metav1.ConditionTrue,
			Reason: "Approved", Message: "approved by the scenario", ObservedGeneration: a.Generation, LastTransitionTime: metav1.NewTime(f.clk.Now())})
		return f.admin.Status().Update(ctx, a)
	})
	if err != nil {
		f.t.Fatalf("approve %s: %v", name, err)
	}
}

// memberEdit edits an object on a member's API server as someone with access to the member
// would: a merge patch of the step's fields, or a create when the object is not there.
func (f *fleet) memberEdit(e *scenarios.MemberEditStep) {
	f.t.Helper()
	env, ok := f.clusters[e.Member]
	if !ok {
		f.t.Fatalf("edit on %s: the member has no API server (stand-in agents cannot play memberEdit)", e.Member)
	}
	c := testenv.Client(f.t, env.Config)
	ctx := context.Background()
	o := e.Object.DeepCopy()
	raw, err := o.MarshalJSON()
	if err != nil {
		f.t.Fatalf("edit %s on %s: %v", o.GetName(), e.Member, err)
	}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(o.GroupVersionKind())
	switch err := c.Get(ctx, client.ObjectKeyFromObject(o), cur); {
	case err == nil:
		err = c.Patch(ctx, cur, client.RawPatch(types.MergePatchType, raw))
		if err != nil {
			f.t.Fatalf("edit %s on %s: %v", o.GetName(), e.Member, err)
		}
	default:
		if err := c.Create(ctx, o); err != nil {
			f.t.Fatalf("create %s on %s: %v", o.GetName(), e.Member, err)
		}
	}
}
