package units_test

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// file parses a unit file whose [X-Fleet] section holds the given lines.
func file(t tb, xfleet ...string) *unitfile.File {
	t.Helper()
	text := "[Service]\nExecStart=/usr/bin/sleep infinity\n"
	if len(xfleet) > 0 {
		text += "\n[X-Fleet]\n" + strings.Join(xfleet, "\n") + "\n"
	}
	f, err := unitfile.Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return f
}

// mk makes a valid unit with the given desired state and [X-Fleet] lines.
func mk(t tb, name string, state units.State, xfleet ...string) *units.Unit {
	t.Helper()
	u, err := units.New(name, file(t, xfleet...))
	if err != nil {
		t.Fatalf("New(%s): %v", name, err)
	}
	return u.WithState(state)
}

// raw makes a unit without resolved options, as a store might hold one: Schedule parses its
// file itself. Invalid names and options are allowed.
func raw(t tb, name string, state units.State, xfleet ...string) *units.Unit {
	t.Helper()
	f := file(t, xfleet...)
	return &units.Unit{Name: name, File: f, Hash: f.Hash(), DesiredState: state}
}

const (
	inactive = units.StateInactive
	loaded   = units.StateLoaded
	launched = units.StateLaunched
)

// machine makes an alive machine with metadata given as "key=value".
func machine(id string, md ...string) units.MachineState {
	m := units.MachineState{ID: id, Metadata: map[string]string{}, Alive: true}
	for _, kv := range md {
		k, v, _ := strings.Cut(kv, "=")
		m.Metadata[k] = v
	}
	return m
}

func dead(id string, md ...string) units.MachineState {
	m := machine(id, md...)
	m.Alive = false
	return m
}

func on(u *units.Unit, m string) units.Job { return units.Job{Unit: u, Machine: m} }

func free(u *units.Unit) units.Job { return units.Job{Unit: u} }

// summary is the compact form of a plan that tables compare: "unit→machine" writes and
// unschedulable unit names.
type summary struct {
	Unschedule    []string // "unit@machine"
	Schedule      []string // "unit@machine"
	Unschedulable []string
}

func summarize(p units.Plan) summary {
	var s summary
	for _, a := range p.Unschedule {
		s.Unschedule = append(s.Unschedule, a.Unit+"@"+a.Machine)
	}
	for _, a := range p.Schedule {
		s.Schedule = append(s.Schedule, a.Unit+"@"+a.Machine)
	}
	for _, u := range p.Unschedulable {
		s.Unschedulable = append(s.Unschedulable, u.Unit)
	}
	return s
}

func describe(in units.Input) string {
	var b strings.Builder
	b.WriteString("machines[")
	for i, m := range in.Machines {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(m.ID)
		if !m.Alive {
			b.WriteString("(dead)")
		}
	}
	b.WriteString("] units[")
	for i, j := range in.Units {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s:%s", j.Unit.Name, j.Unit.DesiredState)
		if j.Machine != "" {
			b.WriteString("@" + j.Machine)
		}
	}
	b.WriteString("]")
	return b.String()
}
