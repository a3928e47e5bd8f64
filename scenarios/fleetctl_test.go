package scenarios

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFleetctlValidation: every unit name and unit file that `fleetsim run` refuses on its
// own is refused by Parse (so by `fleetsim validate`), naming the line and the field.
func TestFleetctlValidation(t *testing.T) {
	const head = "name: t\nduration: 1h\nmembers:\n  - name: m1\n    kind: Machine\ntimeline:\n  - at: 1m\n    fleetctl:\n" // lines 1-8
	step := func(command, unit, file string) string {
		s := head + "      command: " + command + "\n      unit: " + unit + "\n" // lines 9-10
		if file != "" {
			s += "      file: " + file + "\n" // line 11
		}
		return s
	}
	// block holds a unit file as a literal block starting on line 12.
	block := func(lines ...string) string {
		var b strings.Builder
		b.WriteString("|\n")
		for _, l := range lines {
			b.WriteString("        " + l + "\n")
		}
		return b.String()
	}
	const good = `"[Service]\nExecStart=/bin/true\n"`
	for _, tc := range []struct {
		name, src string
		line      int
		field     string
		reason    string
	}{
		{"slash in name", step("start", "a/b.service", good), 10, "timeline[0].fleetctl.unit", `character '/'`},
		{"dot-dot in name", step("start", "../x.service", good), 10, "timeline[0].fleetctl.unit", `character '/'`},
		{"no suffix", step("start", "web", good), 10, "timeline[0].fleetctl.unit", `missing ".<type>" suffix`},
		{"unknown suffix", step("start", "web.txt", good), 10, "timeline[0].fleetctl.unit", `unit type "txt" is not one of`},
		{"huge name", step("start", strings.Repeat("a", 300)+".service", good), 10, "timeline[0].fleetctl.unit", "length 308 is outside 1..256 bytes"},
		{"NUL in name", step("start", `"a\0b.service"`, good), 10, "timeline[0].fleetctl.unit", `character '\x00'`},
		{"start a template", step("start", "web@.service", good), 10, "timeline[0].fleetctl.unit", "cannot start template web@.service"},
		{"load a template without file", step("load", "web@.service", ""), 10, "timeline[0].fleetctl.unit", "cannot load template"},
		{"line over the limit", step("submit", "a.service", `"[Service]\nExecStart=`+strings.Repeat("x", 3000)+`\n"`), 11, "timeline[0].fleetctl.file", "unit file line 2: line too long"},
		{"garbage after a section", step("submit", "a.service", block("[Service] junk", "ExecStart=/bin/true")), 12, "timeline[0].fleetctl.file", "unit file line 1: found garbage after section name"},
		{"unclosed section", step("submit", "a.service", block("[Unit]", "Description=x", "[Service", "ExecStart=/bin/true")), 14, "timeline[0].fleetctl.file", `unit file line 3: missing "]"`},
		{"option without =", step("submit", "a.service", block("[Service]", "ExecStart /bin/true", "")), 13, "timeline[0].fleetctl.file", "unit file line 2: unexpected newline"},
		{"Global with MachineOf", step("start", "a.service", block("[X-Fleet]", "Global=true", "MachineOf=b.service")), 11, "timeline[0].fleetctl.file", "Global"},
		{"malformed Conflicts glob", step("start", "a.service", block("[X-Fleet]", "Conflicts=a[.service")), 11, "timeline[0].fleetctl.file", "Conflicts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tc.src))
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Parse = %+v, %v; want an *Error at line %d, field %q\n%s", s, err, tc.line, tc.field, tc.src)
			}
			if perr.Line != tc.line || perr.Field != tc.field || !strings.Contains(perr.Reason, tc.reason) {
				t.Errorf("Parse = %v\nwant line %d, field %q, reason containing %q", err, tc.line, tc.field, tc.reason)
			}
		})
	}
	// Valid steps stay valid: a template may be submitted, an instance of a submitted
	// template started without a file, a started unit stopped.
	then := func(src, command, unit string) string {
		return src + "  - at: 2m\n    fleetctl: {command: " + command + ", unit: " + unit + "}\n"
	}
	for _, src := range []string{
		step("submit", "web@.service", good),
		then(step("submit", "web@.service", good), "start", "web@1.service"),
		then(step("start", "a.service", good), "stop", "a.service"),
		step("start", "a.service", block("[Service]", "ExecStart=/bin/true", "[X-Fleet]", "Conflicts=a*.service")),
	} {
		if _, err := Parse("t.yaml", []byte(src)); err != nil {
			t.Errorf("Parse(%q) = %v, want no error", src, err)
		}
	}
}

// TestFleetctlStateValidation: Parse follows the fleet registry's desired-state table
// through the timeline (in time order, with model/units' rules), so `fleetsim validate`
// refuses every fleetctl step `fleetsim run` would stop at because of the steps before it,
// naming the line and the key at fault and the step that left the unit as it is.
func TestFleetctlStateValidation(t *testing.T) {
	const head = "name: t\nduration: 1h\nmembers:\n  - name: m1\n    kind: Machine\ntimeline:\n" // lines 1-6
	const a, b = `"[Service]\nExecStart=/bin/true\n"`, `"[Service]\nExecStart=/bin/false\n"`
	// step is one step on two lines: `- at:` and the fleetctl mapping.
	step := func(at, command, unit, file string) string {
		s := "  - at: " + at + "\n    fleetctl: {command: " + command + ", unit: " + unit
		if file != "" {
			s += ", file: " + file
		}
		return s + "}\n"
	}
	for _, tc := range []struct {
		name  string
		steps string
		want  wantError
	}{
		{"stop of a unit never submitted", step("1m", "stop", "a.service", ""),
			wantError{8, "timeline[0].fleetctl.unit", "at 1m0s: cannot stop a.service (desired state none): unit does not exist; no earlier step submits it"}},
		{"destroy of a unit never submitted", step("1m", "submit", "b.service", a) + step("2m", "destroy", "a.service", ""),
			wantError{10, "timeline[1].fleetctl.unit", "cannot destroy a.service (desired state none): unit does not exist; no earlier step submits it"}},
		{"start without a file of a unit never submitted", step("1m", "start", "a.service", ""),
			wantError{8, "timeline[0].fleetctl.unit", "unit does not exist and no unit file was given; no earlier step submits it"}},
		{"an instance of a template never submitted", step("1m", "start", "web@1.service", ""),
			wantError{8, "timeline[0].fleetctl.unit", "cannot start web@1.service (desired state none)"}},
		{"stop after destroy", step("1m", "start", "a.service", a) + step("2m", "destroy", "a.service", "") + step("3m", "stop", "a.service", ""),
			wantError{12, "timeline[2].fleetctl.unit", "cannot stop a.service (desired state none): unit does not exist; timeline[1] (line 9, at 2m0s) destroyed it"}},
		{"another file under a name in use", step("1m", "submit", "a.service", a) + step("2m", "submit", "a.service", b),
			wantError{10, "timeline[1].fleetctl.file", "at 2m0s: unit a.service already exists with hash"}},
		{"another file, with start", step("1m", "start", "a.service", a) + step("2m", "start", "a.service", b),
			wantError{10, "timeline[1].fleetctl.file", "units are immutable, destroy it first; timeline[0] (line 7, at 1m0s) submitted it"}},
		{"stop of an inactive unit", step("1m", "submit", "a.service", a) + step("2m", "stop", "a.service", ""),
			wantError{10, "timeline[1].fleetctl.command", "cannot stop a.service (desired state inactive): stop is valid from launched only; timeline[0] (line 7, at 1m0s) left it inactive"}},
		{"load of a launched unit", step("1m", "start", "a.service", a) + step("2m", "load", "a.service", ""),
			wantError{10, "timeline[1].fleetctl.command", "cannot load a.service (desired state launched): load is valid from none or inactive only"}},
		{"time order, not file order", step("5m", "stop", "a.service", "") + step("1m", "submit", "a.service", a),
			wantError{8, "timeline[0].fleetctl.command", "at 5m0s: cannot stop a.service (desired state inactive)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, parseError(t, head+tc.steps, tc.want)); diff != "" {
				t.Errorf("Parse error (-want +got):\n%s", diff)
			}
		})
	}
	// Sequences the table allows stay valid: the same file again (a no-op), stop of a
	// loaded unit (already there), destroy then submit another file, every state in turn.
	for _, steps := range []string{
		step("1m", "submit", "a.service", a) + step("2m", "start", "a.service", a),
		step("1m", "load", "a.service", a) + step("2m", "stop", "a.service", ""),
		step("1m", "submit", "a.service", a) + step("2m", "destroy", "a.service", "") + step("3m", "start", "a.service", b),
		step("1m", "submit", "a.service", a) + step("2m", "load", "a.service", "") + step("3m", "start", "a.service", "") +
			step("4m", "stop", "a.service", "") + step("5m", "unload", "a.service", "") + step("6m", "destroy", "a.service", ""),
		step("1m", "submit", "web@.service", a) + step("2m", "start", "web@1.service", "") + step("3m", "destroy", "web@1.service", ""),
	} {
		if _, err := Parse("t.yaml", []byte(head+steps)); err != nil {
			t.Errorf("Parse = %v, want no error\n%s", err, head+steps)
		}
	}
}
