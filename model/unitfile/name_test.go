package unitfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateName(t *testing.T) {
	// 256 bytes exactly: 248 + ".service".
	max := strings.Repeat("a", NameMax-len(".service")) + ".service"
	tests := []struct {
		name       string
		wantReason string // substring of the reason; "" means valid
	}{
		{"foo.service", ""},
		{max, ""},
		{"a.b.c.socket", ""},
		{"A-Z_0:9.timer", ""},
		{"foo@.service", ""},
		{"foo@bar.service", ""},
		{"foo@bar@baz.path", ""},
		{"foo@1.2.target", ""},
		{"x.automount", ""}, {"x.busname", ""}, {"x.device", ""}, {"x.mount", ""}, {"x.path", ""},
		{"x.scope", ""}, {"x.slice", ""}, {"x.snapshot", ""}, {"x.socket", ""}, {"x.swap", ""},
		{"x.target", ""}, {"x.timer", ""},

		{"", "length 0"},
		{max[:len(max)-len(".service")] + "a.service", "length 257"},
		{"foo", `missing ".<type>"`},
		{"foo.", `must not end with "."`},
		{"foo.bar", `unit type "bar" is not one of automount, busname`},
		{"foo.Service", `unit type "Service"`},
		{"foo@.mount", `unit type "mount" cannot be used with "@"`},
		{"foo@bar.device", `unit type "device" cannot be used with "@"`},
		{"foo@bar.swap", `cannot be used with "@"`},
		{".service", `empty name before ".service"`},
		{"@.service", `must not start with "@"`},
		{"@foo.service", `must not start with "@"`},
		{"foo bar.service", `character ' ' at byte 3`},
		{"foo/bar.service", `character '/'`},
		{`foo\x2dbar.service`, `character '\\'`}, // documented regex; upstream code allowed it
		{"foo%i.service", `character '%'`},
		{"fóo.service", `is not allowed`},
	}
	for _, tc := range tests {
		err := ValidateName(tc.name)
		if tc.wantReason == "" {
			if err != nil {
				t.Errorf("ValidateName(%q) = %v, want nil", tc.name, err)
			}
			continue
		}
		var ne *NameError
		if !errors.As(err, &ne) || ne.Name != tc.name || !strings.Contains(ne.Reason, tc.wantReason) {
			t.Errorf("ValidateName(%q) = %v, want *NameError with reason containing %q", tc.name, err, tc.wantReason)
		}
	}
}

func TestUnitTypeLists(t *testing.T) {
	if got := len(UnitTypes()); got != 13 {
		t.Errorf("len(UnitTypes()) = %d, want 13", got)
	}
	for _, typ := range UnitTypes() {
		if !isUnitType(typ) {
			t.Errorf("isUnitType(%q) = false", typ)
		}
	}
	for _, typ := range TemplateUnitTypes() {
		if !isTemplateUnitType(typ) || !isUnitType(typ) {
			t.Errorf("template type %q not recognised", typ)
		}
	}
	// The lists are fresh copies: callers may not corrupt them.
	UnitTypes()[0] = "x"
	if UnitTypes()[0] != "automount" {
		t.Errorf("UnitTypes() shares storage")
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct {
		in         string
		want       NameInfo
		template   bool
		instance   bool
		templateOf string
	}{
		{"foo@bar.service",
			NameInfo{Full: "foo@bar.service", Name: "foo@bar", Prefix: "foo", Instance: "bar", Suffix: "service", HasAt: true},
			false, true, "foo@.service"},
		{"foo@.service",
			NameInfo{Full: "foo@.service", Name: "foo@", Prefix: "foo", Instance: "", Suffix: "service", HasAt: true},
			true, false, ""},
		{"foo.service",
			NameInfo{Full: "foo.service", Name: "foo", Prefix: "foo", Suffix: "service"},
			false, false, ""},
		{"a.b@c.d.socket", // Prefix up to the first "@", Instance up to the last "."
			NameInfo{Full: "a.b@c.d.socket", Name: "a.b@c.d", Prefix: "a.b", Instance: "c.d", Suffix: "socket", HasAt: true},
			false, true, "a.b@.socket"},
		{"x@y@z.timer",
			NameInfo{Full: "x@y@z.timer", Name: "x@y@z", Prefix: "x", Instance: "y@z", Suffix: "timer", HasAt: true},
			false, true, "x@.timer"},
		{"noext@inst",
			NameInfo{Full: "noext@inst", Name: "noext@inst", Prefix: "noext", Instance: "inst", HasAt: true},
			false, true, "noext@."},
		{"foo.bar@baz", // "@" after the last "." is part of the suffix
			NameInfo{Full: "foo.bar@baz", Name: "foo", Prefix: "foo", Suffix: "bar@baz"},
			false, false, ""},
		{"", NameInfo{}, false, false, ""},
	}
	for _, tc := range tests {
		got := SplitName(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("SplitName(%q) = %+v, want %+v; diff (-want +got):\n%s", tc.in, got, tc.want, diff)
		}
		if g := IsTemplate(tc.in); g != tc.template {
			t.Errorf("IsTemplate(%q) = %v, want %v", tc.in, g, tc.template)
		}
		if g := IsInstance(tc.in); g != tc.instance {
			t.Errorf("IsInstance(%q) = %v, want %v", tc.in, g, tc.instance)
		}
		gotT, ok := TemplateOf(tc.in)
		if gotT != tc.templateOf || ok != (tc.templateOf != "") {
			t.Errorf("TemplateOf(%q) = %q, %v, want %q", tc.in, gotT, ok, tc.templateOf)
		}
	}
	if got := SplitName("foo@.service").Template(); got != "foo@.service" {
		t.Errorf("template's Template() = %q, want itself", got)
	}
	if got := SplitName("foo.service").Template(); got != "" {
		t.Errorf("plain unit Template() = %q, want empty", got)
	}
}

func TestInstantiate(t *testing.T) {
	tests := []struct {
		template, instance, want string
		ok                       bool
	}{
		{"foo@.service", "bar", "foo@bar.service", true},
		{"web@.socket", "8080", "web@8080.socket", true},
		{"foo@.service", "", "", false},
		{"foo@x.service", "bar", "", false},
		{"foo.service", "bar", "", false},
		{"foo@", "bar", "", false},
	}
	for _, tc := range tests {
		got, ok := Instantiate(tc.template, tc.instance)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Instantiate(%q, %q) = %q, %v, want %q, %v", tc.template, tc.instance, got, ok, tc.want, tc.ok)
		}
		if ok {
			if tmpl, _ := TemplateOf(got); tmpl != tc.template {
				t.Errorf("TemplateOf(Instantiate(%q, %q)) = %q", tc.template, tc.instance, tmpl)
			}
		}
	}
}

func TestExpandSpecifiers(t *testing.T) {
	tests := []struct {
		in, unit, want string
	}{
		{"%n|%N|%p|%i", "foo@bar.service", "foo@bar.service|foo@bar|foo|bar"},
		{"%n|%N|%p|%i", "foo.service", "foo.service|foo|foo|"},
		{"%n|%N|%p|%i", "foo@.service", "foo@.service|foo@|foo|"},
		// KubeFleet documentation "Dynamic requirements": foo.service with MachineOf=%p.socket → foo.socket.
		{"%p.socket", "foo.service", "foo.socket"},
		{"%p.socket", "bar.service", "bar.socket"},
		{"db@%i.service", "web@3.service", "db@3.service"},
		{"%i%i", "a@b.service", "bb"},
		// No %% escape and no other specifiers.
		{"%%n", "a.service", "%a.service"},
		{"%m %H %u %", "a.service", "%m %H %u %"},
		{"no specifiers", "a.service", "no specifiers"},
		// Sequential replacement: a value produced by %n is scanned for %N, %p, %i.
		{"%n", "x%i@y.service", "xy@y.service"},
	}
	for _, tc := range tests {
		if got := ExpandSpecifiers(tc.in, tc.unit); got != tc.want {
			t.Errorf("ExpandSpecifiers(%q, %q) = %q, want %q", tc.in, tc.unit, got, tc.want)
		}
	}
}
