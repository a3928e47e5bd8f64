package engine_test

import (
	"context"
	"fmt"
	"github.com/fleetsim/fleetsim/apis/convert"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/prod/engine"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: still %v after 2m", what, err)
}

func heartbeat(t *testing.T, c client.Client, id string, md map[string]string) {
	t.Helper()
	if err := beat(c, id, md); err != nil {
		t.Fatal(err)
	}
}

func beat(c client.Client, id string, md map[string]string) error {
	ctx := context.Background()
	m := &fleetv1.Machine{}
	if err := c.Get(ctx, client.ObjectKey{Name: id}, m); err != nil {
		m = &fleetv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: id}, Spec: fleetv1.MachineSpec{Metadata: md}}
		if err := c.Create(ctx, m); err != nil {
			return fmt.Errorf("create machine %s: %w", id, err)
		}
	}
	m.Status.LastHeartbeat = metav1.NewMicroTime(time.Now())
	if err := c.Status().Update(ctx, m); err != nil {
		return fmt.Errorf("heartbeat %s: %w", id, err)
	}
	return nil
}

func submit(t *testing.T, c client.Client, name, text, state string) {
	t.Helper()
	f, err := unitfile.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	u := &fleetv1.Unit{ObjectMeta: metav1.ObjectMeta{Name: convert.UnitObjectName(name)},
		Spec: fleetv1.UnitSpec{Name: name, File: unitfile.Serialize(f), DesiredState: state}}
	if err := c.Create(context.Background(), u); err != nil {
		t.Fatalf("submit %s: %v", name, err)
	}
}

func schedule(c client.Client) (map[string]string, error) {
	var l fleetv1.UnitList
	if err := c.List(context.Background(), &l); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, u := range l.Items {
		out[u.Spec.Name] = u.Status.MachineID
	}
	return out, nil
}

func wantSchedule(t *testing.T, c client.Client, want map[string]string) {
	t.Helper()
	eventually(t, "schedule", func() error {
		got, err := schedule(c)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("(-want +got):\n%s", diff)
		}
		return nil
	})
}

// TestEngineOnRealAPIServer: the shared schedule with Conflicts, MachineOf, MachineMetadata
// and a global unit over Unit and Machine objects, woken by watches; a machine that stops
// heartbeating loses its units after the TTL; a restarted engine (new holder, new token)
// carries on from what is stored.
func TestEngineOnRealAPIServer(t *testing.T) {
	cfg := testenv.Start(t)
	c := testenv.Client(t, cfg)
	log := logr.Discard()
	var eng *engine.Engine
	setup := func(mgr ctrl.Manager) error {
		var err error
		eng, err = engine.Setup(mgr, engine.Options{LeaseNamespace: "fleet-system", LeaseTTL: 3 * time.Second, MachineTTL: 4 * time.Second, Log: log})
		return err
	}
	stop := testenv.RunManager(t, cfg, log, setup)

	heartbeat(t, c, "m1", map[string]string{"disk": "ssd"})
	heartbeat(t, c, "m2", map[string]string{"disk": "hdd"})
	submit(t, c, "a.service", "[Service]\nExecStart=/bin/sleep 1000\n\n[X-Fleet]\nMachineMetadata=disk=ssd\n", "launched")
	submit(t, c, "b.service", "[Service]\nExecStart=/bin/sleep 1000\n\n[X-Fleet]\nConflicts=a.service\n", "launched")
	submit(t, c, "c.service", "[Service]\nExecStart=/bin/sleep 1000\n\n[X-Fleet]\nMachineOf=a.service\n", "loaded")
	submit(t, c, "g.service", "[Service]\nExecStart=/bin/sleep 1000\n\n[X-Fleet]\nGlobal=true\n", "launched")
	submit(t, c, "idle.service", "[Service]\nExecStart=/bin/sleep 1000\n", "inactive")
	wantSchedule(t, c, map[string]string{"a.service": "m1", "b.service": "m2", "c.service": "m1", "g.service": "", "idle.service": ""})

	// Lease: held, with a token, by this engine.
	var u fleetv1.Unit
	if err := c.Get(context.Background(), client.ObjectKey{Name: convert.UnitObjectName("a.service")}, &u); err != nil {
		t.Fatal(err)
	}
	if u.Status.FenceToken < 1 || u.Status.Reason == "" {
		t.Fatalf("a.service status %+v: want a fence token and a reason", u.Status)
	}
	firstToken := u.Status.FenceToken

	// m2 keeps beating; m1 stops: after the TTL, a and c move to m2 and b (conflicting with a)
	// cannot stay there.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			_ = beat(c, "m2", nil) // a conflict with the engine's read is retried next second
			time.Sleep(time.Second)
		}
	}()
	wantSchedule(t, c, map[string]string{"a.service": "", "b.service": "m2", "c.service": "", "g.service": "", "idle.service": ""})
	eventually(t, "reason for a.service", func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Name: convert.UnitObjectName("a.service")}, &u); err != nil {
			return err
		}
		if u.Status.Reason == "" {
			return fmt.Errorf("no reason")
		}
		return nil
	})
	t.Logf("a.service after m1 was lost: %s", u.Status.Reason)

	// A restarted engine: a new tenure, a greater token, nothing lost.
	stop()
	testenv.RunManager(t, cfg, log, setup)
	heartbeat(t, c, "m1", map[string]string{"disk": "ssd"})
	submit(t, c, "d.service", "[Service]\nExecStart=/bin/sleep 1000\n", "launched")
	eventually(t, "d.service scheduled by the new engine", func() error {
		got, err := schedule(c)
		if err != nil {
			return err
		}
		if got["d.service"] == "" || got["a.service"] != "m1" {
			return fmt.Errorf("schedule %v", got)
		}
		return nil
	})
	if err := c.Get(context.Background(), client.ObjectKey{Name: convert.UnitObjectName("d.service")}, &u); err != nil {
		t.Fatal(err)
	}
	if u.Status.FenceToken <= firstToken {
		t.Fatalf("new engine wrote with token %d, not above the first engine's %d", u.Status.FenceToken, firstToken)
	}
	if eng.Passes() == 0 {
		t.Fatal("the engine made no decision")
	}
}

// TestEngineReportsUnitInvariantViolations: with CheckInvariants, a registry in which two
// conflicting units are scheduled to one machine (here written by hand, as a buggy or
// rogue writer would) is reported as a Warning event on a unit and in
// fleetsim_unit_invariant_violations_total, and the engine carries on and repairs it.
func TestEngineReportsUnitInvariantViolations(t *testing.T) {
	cfg := testenv.Start(t)
	c := testenv.Client(t, cfg)
	log := logr.Discard()
	testenv.RunManager(t, cfg, log, func(mgr ctrl.Manager) error {
		_, err := engine.Setup(mgr, engine.Options{LeaseNamespace: "fleet-system", LeaseTTL: 3 * time.Second,
			MachineTTL: time.Minute, Log: log, CheckInvariants: true, Events: mgr.GetEventRecorder("fleet-unit-engine")})
		return err
	})
	before := unitViolations(t, "unitConflicts")

	heartbeat(t, c, "m1", nil)
	submit(t, c, "a.service", "[Service]\nExecStart=/bin/sleep 1000\n", "launched")
	submit(t, c, "b.service", "[Service]\nExecStart=/bin/sleep 1000\n\n[X-Fleet]\nConflicts=a.service\n", "launched")
	wantSchedule(t, c, map[string]string{"a.service": "m1", "b.service": ""})
	if got := unitViolations(t, "unitConflicts"); got != before {
		t.Fatalf("violations counted on a sound schedule: %v, want %v", got, before)
	}

	// b.service put beside a.service behind the engine's back.
	eventually(t, "b.service written to m1", func() error {
		u := &fleetv1.Unit{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: convert.UnitObjectName("b.service")}, u); err != nil {
			return err
		}
		u.Status.MachineID = "m1"
		return c.Status().Update(context.Background(), u)
	})
	eventually(t, "the violation counted", func() error {
		if got := unitViolations(t, "unitConflicts"); got != before+1 {
			return fmt.Errorf("fleetsim_unit_invariant_violations_total{invariant=unitConflicts} = %v, want %v", got, before+1)
		}
		return nil
	})
	eventually(t, "a Warning event on a unit", func() error {
		var l eventsv1.EventList
		if err := c.List(context.Background(), &l); err != nil {
			return err
		}
		for _, e := range l.Items {
			if e.Reason == "InvariantViolated" && e.Action == "unitConflicts" && e.Type == "Warning" &&
				strings.Contains(e.Note, "a.service and b.service") {
				return nil
			}
		}
		return fmt.Errorf("no InvariantViolated event among %d events", len(l.Items))
	})
	// The engine goes on: it takes b.service off m1 again.
	wantSchedule(t, c, map[string]string{"a.service": "m1", "b.service": ""})
}

// unitViolations reads the engine's violation counter from controller-runtime's registry.
func unitViolations(t *testing.T, invariant string) float64 {
	t.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "fleetsim_unit_invariant_violations_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "invariant" && l.GetValue() == invariant {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("fleetsim_unit_invariant_violations_total{invariant=%q} is not registered", invariant)
	return 0
}
