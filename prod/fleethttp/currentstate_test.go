package fleethttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/apis/convert"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/prod/fleethttp"
	"github.com/fleetsim/fleetsim/prod/testenv"
)

// TestCurrentStateIsWhatTheAgentActedOn: a unit's currentState is the state its machine's
// agent reports having acted on (units[].state), not systemd's view, which /state keeps
// (issue 30, item 8). A state from an agent that does not report it falls back on systemd's
// view; a state for other content, from a dead machine, or for an unscheduled unit is
// inactive. On a real API server.
func TestCurrentStateIsWhatTheAgentActedOn(t *testing.T) {
	env := testenv.StartEnv(t)
	admin := testenv.Client(t, env.Config)
	srv := &fleethttp.Server{Client: admin, Reader: admin, MachineTTL: time.Minute, Anonymous: true}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx := context.Background()
	f, err := unitfile.Parse("[Service]\nType=simple\n")
	if err != nil {
		t.Fatal(err)
	}
	hash := f.Hash().String()
	st := func(name, state, load, active, sub string) fleetv1.UnitState {
		return fleetv1.UnitState{Name: name, Hash: hash, State: state, LoadState: load, ActiveState: active, SubState: sub}
	}
	tests := []struct {
		unit, machine string
		alive         bool
		state         fleetv1.UnitState
		want          string
	}{
		{"noexec.service", "m1", true, st("noexec.service", "launched", "bad-setting", "inactive", "dead"), "launched"},
		{"stopped-noexec.service", "m1", true, st("stopped-noexec.service", "loaded", "bad-setting", "inactive", "dead"), "loaded"},
		{"failed.service", "m1", true, st("failed.service", "launched", "loaded", "failed", "failed"), "launched"},
		{"failed-stopped.service", "m1", true, st("failed-stopped.service", "loaded", "loaded", "failed", "failed"), "loaded"},
		{"pulled-in.service", "m1", true, st("pulled-in.service", "loaded", "loaded", "active", "running"), "loaded"},
		{"old-agent-running.service", "m1", true, st("old-agent-running.service", "", "loaded", "active", "running"), "launched"},
		{"old-agent-failed.service", "m1", true, st("old-agent-failed.service", "", "loaded", "failed", "failed"), "loaded"},
		{"other-content.service", "m1", true, fleetv1.UnitState{Name: "other-content.service", Hash: "abc", State: "launched", LoadState: "loaded", ActiveState: "active"}, "inactive"},
		{"dead-machine.service", "m2", false, st("dead-machine.service", "launched", "loaded", "active", "running"), "inactive"},
		{"unscheduled.service", "", true, st("unscheduled.service", "launched", "loaded", "active", "running"), "inactive"},
	}
	states := map[string][]fleetv1.UnitState{}
	for _, tt := range tests {
		u := &fleetv1.Unit{ObjectMeta: metav1.ObjectMeta{Name: convert.UnitObjectName(tt.unit)},
			Spec: fleetv1.UnitSpec{Name: tt.unit, File: unitfile.Serialize(f), DesiredState: "launched"}}
		if err := admin.Create(ctx, u); err != nil {
			t.Fatalf("create %s: %v", tt.unit, err)
		}
		if tt.machine != "" {
			u.Status.MachineID = tt.machine
			if err := admin.Status().Update(ctx, u); err != nil {
				t.Fatalf("schedule %s: %v", tt.unit, err)
			}
		}
		m := tt.machine
		if m == "" {
			m = "m1"
		}
		states[m] = append(states[m], tt.state)
	}
	machine(t, admin, "m1", "10.0.0.1", true, nil, states["m1"]...)
	machine(t, admin, "m2", "10.0.0.2", false, nil, states["m2"]...)

	got := map[string]string{}
	want := map[string]string{}
	for _, tt := range tests {
		want[tt.unit] = tt.want
		r, err := ts.Client().Get(ts.URL + "/fleet/v1/units/" + tt.unit)
		if err != nil {
			t.Fatal(err)
		}
		var u fleethttp.Unit
		err = json.NewDecoder(r.Body).Decode(&u)
		r.Body.Close()
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", tt.unit, r.StatusCode, err)
		}
		got[tt.unit] = u.CurrentState
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("currentState per unit (-want +got):\n%s", diff)
	}
	// systemd's view stays in /state.
	r, err := ts.Client().Get(ts.URL + "/fleet/v1/state/noexec.service")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var s fleethttp.UnitState
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%s/%s/%s", s.SystemdLoadState, s.SystemdActiveState, s.SystemdSubState); got != "bad-setting/inactive/dead" {
		t.Errorf("/state/noexec.service shows %s, want systemd's bad-setting/inactive/dead", got)
	}
}
