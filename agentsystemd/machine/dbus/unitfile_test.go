package dbus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/agentsystemd"
	sdbus "github.com/fleetsim/fleetsim/agentsystemd/machine/dbus"
	"github.com/fleetsim/fleetsim/agentsystemd/machine/dbus/sdtest"
	"github.com/fleetsim/fleetsim/model/unitfile"
)

// read is what systemd parsed from a unit file, read back over D-Bus.
type read struct {
	LoadState, Description, User string
	ExecStart                    [][]string // argv of each ExecStart command
}

// joined is a value as systemd reads it: its lines joined, each trailing backslash replaced
// by a space.
func joined(v string) string {
	lines := strings.Split(v, "\n")
	for i := range len(lines) - 1 {
		lines[i] = strings.TrimSuffix(lines[i], `\`) + " "
	}
	return strings.TrimSpace(strings.Join(lines, ""))
}

// TestSystemdReadsWhatTheAPIShows writes unit files as the agent does (the canonical text of
// the options, through the driver) to a real systemd and reads back what systemd parsed:
// every file that model/unitfile accepts (the fleet API's and fleetctl's check) is read as
// its options show it, a continued value as its lines joined; the files it refuses are
// indeed read otherwise (issue 31: a continued line ending in an escaped backslash injects
// a directive, a comment line inside a continuation folds the next directive into the
// value, a carriage return or NUL starts a new line, a lone trailing backslash is dropped,
// a section name with a quote makes the unit fail to load).
func TestSystemdReadsWhatTheAPIShows(t *testing.T) {
	sb := sdtest.Start(t)
	ctx := context.Background()
	d, err := sdbus.Dial(ctx, sb.BusAddress, sb.UnitDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	conn, err := sdbus.Connect(ctx, sb.BusAddress)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)

	type opt = unitfile.UnitOption
	o := func(section, name, value string) opt { return opt{Section: section, Name: name, Value: value} }
	cases := []struct {
		unit string
		opts []opt
		argv [][]string // ExecStart as the API shows it, split into words by hand
		// reads is what systemd reads of a file model/unitfile refuses; nil for accepted
		// files, which systemd must read as the API shows them.
		reads *read
	}{
		{unit: "multiline.service", opts: []opt{
			o("Unit", "Description", "first line \\\n  second line"),
			o("Service", "User", "nobody"),
			o("Service", "ExecStart", "/bin/sh -c 'echo a; \\\n  echo b'"),
		}, argv: [][]string{{"/bin/sh", "-c", "echo a;    echo b"}}},
		{unit: "backslashes.service", opts: []opt{
			// an escaped backslash ending the last option of a section; a non-ASCII space
			// before '#' on a continued line (no comment to systemd); three backslashes
			// (an escaped one, then a continuation)
			o("Unit", "Description", "x \\\n\u00a0# y \\\\"),
			o("Service", "ExecStart", "/bin/echo x\\\\\\\ny"),
		}, argv: [][]string{{"/bin/echo", `x\`, "y"}}},
		{unit: "inj6.service", opts: []opt{
			o("Service", "User", "nobody"),
			o("Service", "ExecStart", "/bin/true \\\\\nUser=root"),
		}, argv: [][]string{{"/bin/true", `\`, "User=root"}},
			reads: &read{LoadState: "loaded", Description: "inj6.service", User: "root", ExecStart: [][]string{{"/bin/true", `\`}}}},
		{unit: "inj7.service", opts: []opt{
			o("Service", "ExecStart", "/bin/true \\\n# c"),
			o("Service", "User", "nobody"),
		}, argv: [][]string{{"/bin/true", "#", "c"}},
			reads: &read{LoadState: "loaded", Description: "inj7.service", ExecStart: [][]string{{"/bin/true", "User=nobody"}}}},
		{unit: "injcr.service", opts: []opt{
			o("Service", "ExecStart", "/bin/true"),
			o("Service", "User", "nobody\rUser=root"),
		}, argv: [][]string{{"/bin/true"}},
			reads: &read{LoadState: "loaded", Description: "injcr.service", User: "root", ExecStart: [][]string{{"/bin/true"}}}},
		{unit: "injnul.service", opts: []opt{
			o("Service", "ExecStart", "/bin/true"),
			o("Service", "User", "nobody\x00User=root"),
		}, argv: [][]string{{"/bin/true"}},
			reads: &read{LoadState: "loaded", Description: "injnul.service", User: "root", ExecStart: [][]string{{"/bin/true"}}}},
		{unit: "lone.service", opts: []opt{
			o("Unit", "Description", `ends in \`),
			o("Service", "ExecStart", "/bin/true"),
		}, argv: [][]string{{"/bin/true"}},
			reads: &read{LoadState: "loaded", Description: "ends in", ExecStart: [][]string{{"/bin/true"}}}},
		{unit: "section.service", opts: []opt{
			o("Service", "ExecStart", "/bin/true"),
			o(`X-"a"`, "A", "b"),
		}, argv: [][]string{{"/bin/true"}},
			reads: &read{LoadState: "error", Description: "section.service", ExecStart: [][]string{{"/bin/true"}}}},
	}
	for _, tc := range cases {
		f := unitfile.FromOptions(tc.opts)
		verr := f.Validate()
		_, perr := unitfile.Parse(unitfile.Serialize(f))
		if accepted := tc.reads == nil; (verr == nil) != accepted || (perr == nil) != accepted {
			t.Errorf("%s: Validate = %v, Parse(Serialize) = %v; want accepted = %v", tc.unit, verr, perr, accepted)
		}
		// Written as the agent writes it, whether or not the API would have taken it.
		if err := d.Run(agentsystemd.Task{Kind: agentsystemd.TaskLoad, Unit: tc.unit, File: f}); err != nil {
			t.Fatalf("load %s: %v", tc.unit, err)
		}
	}
	if err := d.Run(agentsystemd.Task{Kind: agentsystemd.TaskDaemonReload}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		// What the API shows: each option's value joined; systemd keeps the last User= and
		// Description= (the unit name when there is none).
		shows := read{LoadState: "loaded", Description: tc.unit, ExecStart: tc.argv}
		for _, o := range tc.opts {
			switch o.Name {
			case "Description":
				shows.Description = joined(o.Value)
			case "User":
				shows.User = joined(o.Value)
			}
		}
		got, err := systemdReads(ctx, conn, tc.unit)
		if err != nil {
			t.Fatalf("%s: %v", tc.unit, err)
		}
		if tc.reads == nil {
			if diff := cmp.Diff(shows, got); diff != "" {
				t.Errorf("%s: accepted, but systemd reads %q otherwise than the API shows it (-shows +systemd):\n%s", tc.unit, unitfile.Serialize(unitfile.FromOptions(tc.opts)), diff)
			}
			continue
		}
		if diff := cmp.Diff(*tc.reads, got); diff != "" {
			t.Errorf("%s: systemd reads %q (-want +got):\n%s", tc.unit, unitfile.Serialize(unitfile.FromOptions(tc.opts)), diff)
		}
		if cmp.Equal(shows, got) {
			t.Errorf("%s: refused, but systemd reads it as the API would show it", tc.unit)
		}
	}
}

// systemdReads reads back over D-Bus what systemd parsed of unit.
func systemdReads(ctx context.Context, conn *sddbus.Conn, unit string) (read, error) {
	var r read
	for _, p := range []struct {
		typ, name string
		into      *string
	}{{"", "LoadState", &r.LoadState}, {"", "Description", &r.Description}, {"Service", "User", &r.User}} {
		var prop *sddbus.Property
		var err error
		if p.typ == "" {
			prop, err = conn.GetUnitPropertyContext(ctx, unit, p.name)
		} else {
			prop, err = conn.GetUnitTypePropertyContext(ctx, unit, p.typ, p.name)
		}
		if err != nil {
			return r, fmt.Errorf("property %s: %w", p.name, err)
		}
		s, ok := prop.Value.Value().(string)
		if !ok {
			return r, fmt.Errorf("property %s is %T", p.name, prop.Value.Value())
		}
		*p.into = s
	}
	prop, err := conn.GetUnitTypePropertyContext(ctx, unit, "Service", "ExecStart")
	if err != nil {
		return r, fmt.Errorf("property ExecStart: %w", err)
	}
	cmds, ok := prop.Value.Value().([][]any)
	if !ok {
		return r, fmt.Errorf("property ExecStart is %T", prop.Value.Value())
	}
	for _, c := range cmds {
		if len(c) < 2 {
			return r, fmt.Errorf("ExecStart entry %v", c)
		}
		argv, ok := c[1].([]string)
		if !ok {
			return r, fmt.Errorf("ExecStart argv is %T", c[1])
		}
		r.ExecStart = append(r.ExecStart, argv)
	}
	return r, nil
}
