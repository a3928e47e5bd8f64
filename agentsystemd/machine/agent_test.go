package machine_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/agentsystemd/machine"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/unitfile"
)

func apiUnit(t *testing.T, name, text, state, machine string) fleetv1.Unit {
	t.Helper()
	f, err := unitfile.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return fleetv1.Unit{Spec: fleetv1.UnitSpec{Name: name, File: unitfile.Serialize(f), DesiredState: state}, Status: fleetv1.UnitStatus{MachineID: machine}}
}

// TestDesired: a machine runs the units scheduled to it and the global units whose metadata
// it matches and that conflict with nothing there; it counts itself alive even when the hub
// has not heard from it within the TTL.
func TestDesired(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	machines := []fleetv1.Machine{
		{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: fleetv1.MachineSpec{Metadata: map[string]string{"role": "web"}},
			Status: fleetv1.MachineStatus{LastHeartbeat: metav1.NewMicroTime(now.Add(-time.Hour))}},
		{ObjectMeta: metav1.ObjectMeta{Name: "m2"}, Status: fleetv1.MachineStatus{LastHeartbeat: metav1.NewMicroTime(now)}},
	}
	svc := "[Service]\nExecStart=/bin/true\n"
	ul := []fleetv1.Unit{
		apiUnit(t, "mine.service", svc, "launched", "m1"),
		apiUnit(t, "theirs.service", svc, "launched", "m2"),
		apiUnit(t, "idle.service", svc, "inactive", ""),
		apiUnit(t, "web-global.service", svc+"\n[X-Fleet]\nGlobal=true\nMachineMetadata=role=web\n", "launched", ""),
		apiUnit(t, "db-global.service", svc+"\n[X-Fleet]\nGlobal=true\nMachineMetadata=role=db\n", "launched", ""),
		apiUnit(t, "shy-global.service", svc+"\n[X-Fleet]\nGlobal=true\nConflicts=mine.service\n", "launched", ""),
		{Spec: fleetv1.UnitSpec{Name: "broken.service", File: "[Service\n", DesiredState: "launched"}, Status: fleetv1.UnitStatus{MachineID: "m1"}},
	}
	var got []string
	for _, d := range machine.Desired("m1", ul, machines, now, 30*time.Second) {
		got = append(got, d.Name+"="+string(d.State))
		if d.File == nil || d.EffectiveHash().IsZero() {
			t.Errorf("%s carries no file", d.Name)
		}
	}
	if diff := cmp.Diff([]string{"mine.service=launched", "web-global.service=launched"}, got); diff != "" {
		t.Errorf("Desired(m1) (-want +got):\n%s", diff)
	}
	got = nil
	for _, d := range machine.Desired("m2", ul, machines, now, 30*time.Second) {
		got = append(got, d.Name+"="+string(d.State))
	}
	if diff := cmp.Diff([]string{"shy-global.service=launched", "theirs.service=launched"}, got); diff != "" {
		t.Errorf("Desired(m2) (-want +got):\n%s", diff)
	}
}
