package agentsystemd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetsim/fleetsim/agentsystemd"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// unit makes a valid unit with the given desired state and [X-Fleet] lines.
func unit(t *testing.T, name string, state units.State, xfleet ...string) *units.Unit {
	t.Helper()
	text := "[Service]\nExecStart=/bin/sleep 1000\n"
	if len(xfleet) > 0 {
		text += "\n[X-Fleet]\n" + strings.Join(xfleet, "\n") + "\n"
	}
	f, err := unitfile.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	u, err := units.New(name, f)
	if err != nil {
		t.Fatal(err)
	}
	return u.WithState(state)
}

func machineState(id string, alive bool, md ...string) units.MachineState {
	m := units.MachineState{ID: id, Metadata: map[string]string{}, Alive: alive}
	for _, kv := range md {
		k, v, _ := strings.Cut(kv, "=")
		m.Metadata[k] = v
	}
	return m
}

// TestDesiredOn: the cases both agents rely on, the simulator's and `fleet agent`'s: units
// scheduled here (in every desired state), elsewhere or nowhere, global units by metadata and
// conflicts, the agent's own machine counted alive, a lost machine's units, templates.
func TestDesiredOn(t *testing.T) {
	const (
		inactive = units.StateInactive
		loaded   = units.StateLoaded
		launched = units.StateLaunched
	)
	on := func(u *units.Unit, m string) units.Job { return units.Job{Unit: u, Machine: m} }
	web := machineState("m1", true, "role=web")
	db := machineState("m2", true, "role=db")
	tests := []struct {
		name     string
		id       string
		machines []units.MachineState
		jobs     []units.Job
		want     []string // "unit=target state", by name
	}{
		{
			name: "units scheduled here, with their target states", id: "m1", machines: []units.MachineState{web, db},
			jobs: []units.Job{on(unit(t, "a.service", launched), "m1"), on(unit(t, "b.service", loaded), "m1")},
			want: []string{"a.service=launched", "b.service=loaded"},
		},
		{
			// The engine has not unscheduled it yet: the agent stops it and removes its file.
			name: "an inactive unit still scheduled here is desired inactive", id: "m1", machines: []units.MachineState{web},
			jobs: []units.Job{on(unit(t, "a.service", inactive), "m1")},
			want: []string{"a.service=inactive"},
		},
		{
			name: "units scheduled elsewhere or nowhere are not desired", id: "m1", machines: []units.MachineState{web, db},
			jobs: []units.Job{on(unit(t, "a.service", launched), "m2"), on(unit(t, "b.service", launched), "")},
		},
		{
			// Moving them is the engine's decision: this agent waits for it.
			name: "units of a lost machine are not taken over", id: "m1", machines: []units.MachineState{web, machineState("m2", false)},
			jobs: []units.Job{on(unit(t, "a.service", launched), "m2")},
		},
		{
			name: "global units by metadata", id: "m1", machines: []units.MachineState{web, db},
			jobs: []units.Job{
				on(unit(t, "all.service", launched, "Global=true"), ""),
				on(unit(t, "db-only.service", launched, "Global=true", "MachineMetadata=role=db"), ""),
				on(unit(t, "web-only.service", loaded, "Global=true", "MachineMetadata=role=web"), ""),
			},
			want: []string{"all.service=launched", "web-only.service=loaded"},
		},
		{
			name: "an inactive global unit runs nowhere", id: "m1", machines: []units.MachineState{web},
			jobs: []units.Job{on(unit(t, "g.service", inactive, "Global=true"), "")},
		},
		{
			name: "a global unit gives way to a unit scheduled here that conflicts with it", id: "m1", machines: []units.MachineState{web, db},
			jobs: []units.Job{
				on(unit(t, "db.service", launched), "m1"),
				on(unit(t, "g.service", launched, "Global=true", "Conflicts=db.service"), ""),
			},
			want: []string{"db.service=launched"},
		},
		{
			name: "the same global unit runs where nothing conflicts", id: "m2", machines: []units.MachineState{web, db},
			jobs: []units.Job{
				on(unit(t, "db.service", launched), "m1"),
				on(unit(t, "g.service", launched, "Global=true", "Conflicts=db.service"), ""),
			},
			want: []string{"g.service=launched"},
		},
		{
			// The hub has not heard from m1 within the TTL, but m1's agent is running.
			name: "the agent counts its own machine alive", id: "m1", machines: []units.MachineState{machineState("m1", false, "role=web"), db},
			jobs: []units.Job{
				on(unit(t, "a.service", launched), "m1"),
				on(unit(t, "g.service", launched, "Global=true", "MachineMetadata=role=web"), ""),
			},
			want: []string{"a.service=launched", "g.service=launched"},
		},
		{
			name: "a machine the registry does not know runs what is scheduled to it but no global unit", id: "m9", machines: []units.MachineState{web},
			jobs: []units.Job{on(unit(t, "a.service", launched), "m9"), on(unit(t, "g.service", launched, "Global=true"), "")},
			want: []string{"a.service=launched"},
		},
		{
			name: "templates are never run, their instances are", id: "m1", machines: []units.MachineState{web},
			jobs: []units.Job{
				on(unit(t, "web@.service", inactive), "m1"),
				on(unit(t, "web@1.service", launched), "m1"),
				on(unit(t, "g@.service", inactive, "Global=true"), ""),
				on(&units.Unit{Name: "stale@.service", File: &unitfile.File{}, DesiredState: launched}, "m1"),
			},
			want: []string{"web@1.service=launched"},
		},
		{
			name: "no units", id: "m1", machines: []units.MachineState{web},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.machines)
			got := agentsystemd.DesiredOn(tt.id, tt.machines, tt.jobs)
			if diff := cmp.Diff(tt.want, summarize(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("DesiredOn(%s) (-want +got):\n%s", tt.id, diff)
			}
			if diff := cmp.Diff(before, tt.machines); diff != "" {
				t.Errorf("DesiredOn modified its machines (-before +after):\n%s", diff)
			}
			for _, d := range got {
				if err := d.Validate(); err != nil || d.File == nil {
					t.Errorf("%s: %v (file %v)", d.Name, err, d.File != nil)
				}
			}
			// The order of the registry's listing does not matter.
			rev := agentsystemd.DesiredOn(tt.id, reversed(tt.machines), reversed(tt.jobs))
			if diff := cmp.Diff(summarize(got), summarize(rev)); diff != "" {
				t.Errorf("DesiredOn with the inputs reversed (-in order +reversed):\n%s", diff)
			}
		})
	}
}

func summarize(ds []agentsystemd.DesiredUnit) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name+"="+string(d.State))
	}
	return out
}

func reversed[T any](s []T) []T {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}
