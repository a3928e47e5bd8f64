package scenarios

import (
	"errors"
	"strings"
	"testing"
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
	// Valid steps stay valid: a template may be submitted, an instance started without a file.
	for _, src := range []string{
		step("submit", "web@.service", good),
		step("start", "web@1.service", ""),
		step("stop", "a.service", ""),
		step("start", "a.service", block("[Service]", "ExecStart=/bin/true", "[X-Fleet]", "Conflicts=a*.service")),
	} {
		if _, err := Parse("t.yaml", []byte(src)); err != nil {
			t.Errorf("Parse(%q) = %v, want no error", src, err)
		}
	}
}
