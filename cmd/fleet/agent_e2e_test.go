package main

import (
	"context"
	"fmt"
	"github.com/fleetsim/fleetsim/apis/convert"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentsystemd/machine/dbus/sdtest"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// waitFor retries f every 200ms for up to 2 minutes (the machine is shared and slow).
func waitFor(t *testing.T, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: still %v after 2m", what, err)
}

// sdState is ACTIVE/SUB of a unit as the sandbox's own systemctl shows it.
func sdState(sb *sdtest.Sandbox, name string) string {
	out, _ := sb.Systemctl("show", "-p", "ActiveState", "-p", "SubState", "--value", name)
	return strings.Join(strings.Fields(out), "/")
}

func putUnit(t *testing.T, c client.Client, name, text, state string) {
	t.Helper()
	f, err := unitfile.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	u := &fleetv1.Unit{ObjectMeta: metav1.ObjectMeta{Name: convert.UnitObjectName(name)},
		Spec: fleetv1.UnitSpec{Name: name, File: unitfile.Serialize(f), DesiredState: state}}
	if err := c.Create(context.Background(), u); err != nil {
		t.Fatalf("create unit %s: %v", name, err)
	}
}

func setDesired(t *testing.T, c client.Client, name, state string) {
	t.Helper()
	waitFor(t, "set "+name+" "+state, func() error {
		var u fleetv1.Unit
		if err := c.Get(context.Background(), client.ObjectKey{Name: convert.UnitObjectName(name)}, &u); err != nil {
			return err
		}
		u.Spec.DesiredState = state
		return c.Update(context.Background(), &u)
	})
}

func scheduledTo(c client.Client, name string) (string, error) {
	var u fleetv1.Unit
	if err := c.Get(context.Background(), client.ObjectKey{Name: convert.UnitObjectName(name)}, &u); err != nil {
		return "", err
	}
	return u.Status.MachineID, nil
}

// reported returns "machine=ACTIVE/SUB" for every machine reporting the unit, sorted.
func reported(c client.Client, name string) ([]string, error) {
	var l fleetv1.MachineList
	if err := c.List(context.Background(), &l); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range l.Items {
		for _, s := range m.Status.Units {
			if s.Name == name {
				out = append(out, m.Name+"="+s.ActiveState+"/"+s.SubState)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func wantReported(t *testing.T, c client.Client, name string, want ...string) {
	t.Helper()
	waitFor(t, name+" reported", func() error {
		got, err := reported(c, name)
		if err != nil {
			return err
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			return fmt.Errorf("reported %v, want %v", got, want)
		}
		return nil
	})
}

// TestAgentsOnRealSystemd is the machine half end to end: a real kube-apiserver, `fleet hub`
// and two `fleet agent`s, each driving its own real systemd (an nspawn sandbox). Units run
// real processes; Conflicts, MachineOf and a global unit place as fleet does; stop and
// destroy act in systemd; an agent that dies loses its units to the other machine after the
// TTL; a restarted hub loses nothing.
func TestAgentsOnRealSystemd(t *testing.T) {
	sbs := map[string]*sdtest.Sandbox{"m1": sdtest.Start(t), "m2": sdtest.Start(t)}
	env := testenv.StartEnv(t)
	kubeconfig := writeKubeconfig(t, env.Config)
	c := testenv.Client(t, env.Config)

	hubArgs := []string{"hub", "--kubeconfig", kubeconfig, "--leader-elect=false", "--metrics-bind-address", "0",
		"--health-probe-bind-address", "0", "--log-format", "text", "--machine-ttl", "6s", "--engine-lease-ttl", "3s"}
	hub := startFleet(t, hubArgs...)
	agents := map[string]*runningHub{}
	probes, metrics := freeAddr(t), freeAddr(t)
	for _, id := range []string{"m1", "m2"} {
		sb := sbs[id]
		p, m := "0", "0"
		if id == "m1" {
			p, m = probes, metrics
		}
		agents[id] = startFleet(t, "agent", "--kubeconfig", kubeconfig, "--machine-id", id, "--public-ip", "10.0.0."+id[1:],
			"--metadata", "role=web,name="+id, "--dbus-address", sb.BusAddress, "--unit-dir", sb.UnitDir,
			"--interval", "1s", "--machine-ttl", "6s", "--metrics-bind-address", m, "--health-probe-bind-address", p, "--log-format", "text")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("hub logs:\n%s", hub.logs.String())
			for id, a := range agents {
				t.Logf("agent %s logs:\n%s", id, a.logs.String())
			}
		}
	})
	waitFor(t, "machines registered", func() error {
		var l fleetv1.MachineList
		if err := c.List(context.Background(), &l); err != nil {
			return err
		}
		if len(l.Items) != 2 || l.Items[0].Status.LastHeartbeat.IsZero() || l.Items[1].Status.LastHeartbeat.IsZero() {
			return fmt.Errorf("%d machines", len(l.Items))
		}
		return nil
	})

	// The agent's probes and metrics.
	waitFor(t, "agent m1 healthy", func() error { return httpOK("http://" + probes + "/healthz") })
	// The metrics listener is its own and may come up after the probes' one.
	waitFor(t, "agent m1 metrics", func() error {
		body, err := httpGet("http://" + metrics + "/metrics")
		if err != nil {
			return err
		}
		if !strings.Contains(body, "fleet_agent_rounds_total") {
			return fmt.Errorf("no fleet_agent_rounds_total in:\n%s", body)
		}
		return nil
	})

	// A unit running a real process.
	putUnit(t, c, "hello.service", "[Unit]\nDescription=hello\n\n[Service]\nExecStart=/bin/sleep 3600\n\n[X-Fleet]\nMachineMetadata=name=m1\n", "launched")
	wantReported(t, c, "hello.service", "m1=active/running")
	if got := sdState(sbs["m1"], "hello.service"); got != "active/running" {
		t.Fatalf("systemd on m1 shows hello.service %s", got)
	}
	// Conflicts: leader and other on different machines; MachineOf: follower with leader.
	putUnit(t, c, "leader.service", "[Service]\nExecStart=/bin/sleep 3600\n", "launched")
	waitFor(t, "leader scheduled", func() error {
		m, err := scheduledTo(c, "leader.service")
		if m == "" && err == nil {
			err = fmt.Errorf("not scheduled")
		}
		return err
	})
	putUnit(t, c, "follower.service", "[Service]\nExecStart=/bin/sleep 3600\n\n[X-Fleet]\nMachineOf=leader.service\n", "launched")
	putUnit(t, c, "apart.service", "[Service]\nExecStart=/bin/sleep 3600\n\n[X-Fleet]\nConflicts=leader.service\n", "launched")
	putUnit(t, c, "everywhere.service", "[Service]\nExecStart=/bin/sleep 3600\n\n[X-Fleet]\nGlobal=true\nMachineMetadata=role=web\n", "launched")
	lm, _ := scheduledTo(c, "leader.service")
	other := map[string]string{"m1": "m2", "m2": "m1"}[lm]
	wantReported(t, c, "leader.service", lm+"=active/running")
	wantReported(t, c, "follower.service", lm+"=active/running")
	wantReported(t, c, "apart.service", other+"=active/running")
	wantReported(t, c, "everywhere.service", "m1=active/running", "m2=active/running")
	for id, sb := range sbs {
		if got := sdState(sb, "everywhere.service"); got != "active/running" {
			t.Errorf("systemd on %s shows everywhere.service %s", id, got)
		}
	}

	// stop: loaded, not running, in systemd; destroy: gone from systemd and the unit dir.
	setDesired(t, c, "hello.service", "loaded")
	wantReported(t, c, "hello.service", "m1=inactive/dead")
	if got := sdState(sbs["m1"], "hello.service"); got != "inactive/dead" {
		t.Fatalf("after stop systemd on m1 shows hello.service %s", got)
	}
	if err := c.Delete(context.Background(), &fleetv1.Unit{ObjectMeta: metav1.ObjectMeta{Name: convert.UnitObjectName("hello.service")}}); err != nil {
		t.Fatal(err)
	}
	wantReported(t, c, "hello.service")
	waitFor(t, "hello.service gone from systemd", func() error {
		out, _ := sbs["m1"].Systemctl("show", "-p", "LoadState", "--value", "hello.service")
		if strings.TrimSpace(out) != "not-found" {
			return fmt.Errorf("LoadState %q", strings.TrimSpace(out))
		}
		return nil
	})

	// A restarted hub loses nothing: same schedule, and it keeps scheduling.
	hub.stop()
	hub = startFleet(t, hubArgs...)
	putUnit(t, c, "late.service", "[Service]\nExecStart=/bin/sleep 3600\n\n[X-Fleet]\nMachineID=m2\n", "launched")
	wantReported(t, c, "late.service", "m2=active/running")
	if m, _ := scheduledTo(c, "leader.service"); m != lm {
		t.Fatalf("after the hub restart leader.service is on %q, was on %s", m, lm)
	}

	// Kill the agent of the leader's machine: after the TTL, the leader and its follower move
	// to the other machine; apart.service (conflicting with the leader) cannot stay there with
	// it, so one of them is left unscheduled.
	agents[lm].stop()
	waitFor(t, "leader moved", func() error {
		m, err := scheduledTo(c, "leader.service")
		if err != nil {
			return err
		}
		f, _ := scheduledTo(c, "follower.service")
		a, _ := scheduledTo(c, "apart.service")
		if m == lm || f != m || (m == other && a == other) {
			return fmt.Errorf("leader on %q, follower on %q, apart on %q", m, f, a)
		}
		return nil
	})
	if m, _ := scheduledTo(c, "leader.service"); m == other {
		waitFor(t, "leader running on "+other, func() error {
			if got := sdState(sbs[other], "leader.service"); got != "active/running" {
				return fmt.Errorf("systemd on %s shows leader.service %s", other, got)
			}
			return nil
		})
	}
}
