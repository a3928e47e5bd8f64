package unitfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fuzz targets of this package. On a two-core machine run each with a bounded
// minimization, or the fuzzer spends its time minimizing every new input and makes no
// progress:
//
//	go test -run '^$' -fuzz '^FuzzValidateName$' -fuzztime 2m -fuzzminimizetime 1s -parallel 2 ./model/unit/
//	go test -run '^$' -fuzz '^FuzzParseXFleet$' -fuzztime 2m -fuzzminimizetime 1s -parallel 2 ./model/unit/
//	go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 2m -fuzzminimizetime 1s -parallel 2 ./model/unit/
//
// Without -fuzz, `go test` runs each target on its seed corpus.

// FuzzValidateName: ValidateName never panics, refuses with a *NameError, and a name it
// accepts has the documented shape; instances round-trip through their template.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{
		"", "a.service", "web@1.service", "web@.service", "@x.service", "a/b.service", "../x.service",
		"a\x00b.service", "web", "web.txt", "a.", ".service", "x@y@z.socket", "a.mount", strings.Repeat("a", 300) + ".service",
		"héllo.service", "a:b_c-d.e.target",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidateName(name)
		if err != nil {
			var ne *NameError
			if !errors.As(err, &ne) || ne.Name != name || ne.Reason == "" {
				t.Fatalf("ValidateName(%q) = %v (%T), want a *NameError naming it with a reason", name, err, err)
			}
			return
		}
		if len(name) == 0 || len(name) > NameMax || strings.ContainsAny(name, "/\x00\\ ") || name[0] == '@' {
			t.Fatalf("ValidateName accepted %q", name)
		}
		dot := strings.LastIndexByte(name, '.')
		if dot <= 0 || !isUnitType(name[dot+1:]) {
			t.Fatalf("ValidateName accepted %q without a known type", name)
		}
		n := SplitName(name)
		if n.IsInstance() {
			tmpl, ok := TemplateOf(name)
			if !ok || ValidateName(tmpl) != nil {
				t.Fatalf("instance %q: template %q (ok %v) is not a valid name", name, tmpl, ok)
			}
			back, ok := Instantiate(tmpl, n.Instance)
			if !ok || back != name {
				t.Fatalf("Instantiate(%q, %q) = %q, %v; want %q", tmpl, n.Instance, back, ok, name)
			}
		}
	})
}

// FuzzParseXFleet: for any unit file that parses and any unit name, ParseXFleet never
// panics, refuses with an *OptionError, is deterministic, and what it accepts passes
// Validate and never conflicts with itself.
func FuzzParseXFleet(f *testing.F) {
	for _, s := range [][2]string{
		{"[X-Fleet]\nMachineID=abc\n", "a.service"},
		{"[X-Fleet]\nGlobal=true\nMachineOf=b.service\n", "a.service"},
		{"[X-Fleet]\nConflicts=a[.service\n", "a.service"},
		{"[X-Fleet]\nConflicts=%p@*.service\nMachineMetadata=role=%p\n", "foo@1.service"},
		{"[X-Fleet]\nMachineMetadata=\"a=b\" \"c=d\"\nX-ConditionMachineMetadata=e=f\n", "a.service"},
		{"[X-Fleet]\nReplaces=b.service\nConflicts=c*\n", "a.service"},
		{"[X-Fleet]\nMachineOf=a.service\nConflicts=a*\n", "b.service"},
		{"[X-Fleet]\nGlobal=yes\nX-Conflicts=x\nUnknown=1\n", "a.service"},
		{"[X-Fleet]\nMachineOf=\nReplaces=\n", "a.service"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, name string) {
		file, err := Parse(text)
		if err != nil {
			return
		}
		x, err := ParseXFleet(file, name)
		again, err2 := ParseXFleet(file, name)
		if (err == nil) != (err2 == nil) || cmp.Diff(x, again) != "" {
			t.Fatalf("ParseXFleet(%q, %q) is not deterministic: %v / %v", text, name, err, err2)
		}
		if err != nil {
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Option == "" || oe.Reason == "" {
				t.Fatalf("ParseXFleet(%q, %q) = %v (%T), want an *OptionError", text, name, err, err)
			}
			return
		}
		if x.Name != name {
			t.Fatalf("ParseXFleet(%q, %q).Name = %q", text, name, x.Name)
		}
		if err := x.Validate(); err != nil {
			t.Fatalf("ParseXFleet(%q, %q) accepted options that Validate refuses: %v", text, name, err)
		}
		if Conflicts(x, x) {
			t.Fatalf("ParseXFleet(%q, %q): the unit conflicts with itself", text, name)
		}
	})
}
