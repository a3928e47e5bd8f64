package unitfile

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitMultiValue(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`"a=b" "c=d"`, []string{"a=b", "c=d"}},
		{`"region=us-east-1" "diskType=SSD"`, []string{"region=us-east-1", "diskType=SSD"}},
		{`"a b"`, []string{"a b"}},
		{`"a=b"   "c=d"`, []string{"a=b", "c=d"}},
		{`"a" b "c d"`, []string{"a", "b", "c d"}},
		{`"a""b"`, []string{"ab"}},
		{"\"a\"\t\"b\"", []string{"a\tb"}}, // only spaces separate
		{`""`, nil},
		{`" "`, []string{" "}},
		{`"`, nil},
		{`a "b c"`, []string{`a "b c"`}}, // does not start with a quote: one item
		{`"b c" a`, []string{`"b c" a`}}, // does not end with a quote: one item
		{"a b c", []string{"a b c"}},
		{"", []string{""}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, SplitMultiValue(tc.in)); diff != "" {
			t.Errorf("SplitMultiValue(%q) = %q, want %q", tc.in, SplitMultiValue(tc.in), tc.want)
		}
	}
}

func TestDeprecatedKey(t *testing.T) {
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"X-ConditionMachineID", "MachineID", true},
		{"X-ConditionMachineBootID", "MachineID", true},
		{"X-ConditionMachineOf", "MachineOf", true},
		{"X-ConditionMachineMetadata", "MachineMetadata", true},
		{"X-Conflicts", "Conflicts", true},
		{"MachineID", "", false},
		{"Global", "", false},
		{"X-Replaces", "", false},
	}
	for _, tc := range tests {
		got, ok := DeprecatedKey(tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("DeprecatedKey(%q) = %q, %v, want %q, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseXFleet(t *testing.T) {
	const u = "app.service"
	depr := func(key, repl string) string { return "[X-Fleet] " + key + " is deprecated, use " + repl }
	tests := []struct {
		name string
		unit string
		in   string // the [X-Fleet] section body, or a whole file if it starts with "["
		want *XFleet
	}{
		{"no X-Fleet section", u, "[Service]\nExecStart=/bin/true\n", &XFleet{Name: u}},
		{"empty X-Fleet section", u, "", &XFleet{Name: u}},
		{"MachineID", u, "MachineID=0123456789abcdef0123456789abcdef",
			&XFleet{Name: u, MachineID: "0123456789abcdef0123456789abcdef"}},
		{"MachineID short form kept verbatim", u, "MachineID=01234567", &XFleet{Name: u, MachineID: "01234567"}},
		{"MachineID first value wins", u, "MachineID=a\nMachineID=b", &XFleet{Name: u, MachineID: "a"}},
		{"MachineID first quoted item wins", u, `MachineID="a" "b"`, &XFleet{Name: u, MachineID: "a"}},
		{"MachineID beats X-ConditionMachineID beats BootID", u,
			"X-ConditionMachineBootID=c\nX-ConditionMachineID=b\nMachineID=a",
			&XFleet{Name: u, MachineID: "a", Warnings: []string{
				depr("X-ConditionMachineBootID", "MachineID") + " (a boot ID never matches a machine ID)",
				depr("X-ConditionMachineID", "MachineID")}}},
		{"X-ConditionMachineID beats BootID", u, "X-ConditionMachineBootID=c\nX-ConditionMachineID=b",
			&XFleet{Name: u, MachineID: "b", Warnings: []string{
				depr("X-ConditionMachineBootID", "MachineID") + " (a boot ID never matches a machine ID)",
				depr("X-ConditionMachineID", "MachineID")}}},
		{"quoted MachineID with no items is unset", u, `MachineID=""`, &XFleet{Name: u}},
		{"MachineMetadata quoted items (seed)", u, `MachineMetadata="region=us-east-1" "diskType=SSD"`,
			&XFleet{Name: u, MachineMetadata: Metadata{"region": {"us-east-1"}, "diskType": {"SSD"}}}},
		{"MachineMetadata across lines (seed)", u,
			"MachineMetadata=\"region=us-east-1\" \"job=foo\"\nMachineMetadata=\"region=us-west-1\" \"job=bar\"",
			&XFleet{Name: u, MachineMetadata: Metadata{"region": {"us-east-1", "us-west-1"}, "job": {"foo", "bar"}}}},
		{"MachineMetadata unquoted is one item", u, "MachineMetadata=region=us east",
			&XFleet{Name: u, MachineMetadata: Metadata{"region": {"us east"}}}},
		{"MachineMetadata duplicate value once", u, "MachineMetadata=a=1\nMachineMetadata=a=1",
			&XFleet{Name: u, MachineMetadata: Metadata{"a": {"1"}}}},
		{"MachineMetadata bad items dropped with warnings", u,
			`MachineMetadata="a=b=c" "=x" "y=" "noeq" "ok=1"`,
			&XFleet{Name: u, MachineMetadata: Metadata{"ok": {"1"}}, Warnings: []string{
				`[X-Fleet] MachineMetadata item "a=b=c" is ignored: want key=value`,
				`[X-Fleet] MachineMetadata item "=x" is ignored: want key=value`,
				`[X-Fleet] MachineMetadata item "y=" is ignored: want key=value`,
				`[X-Fleet] MachineMetadata item "noeq" is ignored: want key=value`,
			}}},
		{"X-ConditionMachineMetadata merged after MachineMetadata", u,
			"X-ConditionMachineMetadata=r=2\nMachineMetadata=r=1",
			&XFleet{Name: u, MachineMetadata: Metadata{"r": {"1", "2"}},
				Warnings: []string{depr("X-ConditionMachineMetadata", "MachineMetadata")}}},
		{"MachineOf not split on whitespace", u, "MachineOf=a.service b.service",
			&XFleet{Name: u, MachineOf: []string{"a.service b.service"}}},
		{"MachineOf quoted items, then X-ConditionMachineOf", u,
			"X-ConditionMachineOf=c.service\nMachineOf=\"a.service\" \"b.service\"",
			&XFleet{Name: u, MachineOf: []string{"a.service", "b.service", "c.service"},
				Warnings: []string{depr("X-ConditionMachineOf", "MachineOf")}}},
		{"Conflicts split on whitespace (issue #1245)", u, "Conflicts=a*.service  b*.service\tc.service",
			&XFleet{Name: u, Conflicts: []string{"a*.service", "b*.service", "c.service"}}},
		{"Conflicts then X-Conflicts", u, "X-Conflicts=old.service\nConflicts=\"new.service\" \"x.service\"\nConflicts=y.service",
			&XFleet{Name: u, Conflicts: []string{"new.service", "x.service", "y.service", "old.service"},
				Warnings: []string{depr("X-Conflicts", "Conflicts")}}},
		{"Replaces not split on whitespace", u, "Replaces=a.service b.service",
			&XFleet{Name: u, Replaces: []string{"a.service b.service"}}},
		{"Replaces several", u, "Replaces=a.service\nReplaces=b*",
			&XFleet{Name: u, Replaces: []string{"a.service", "b*"}}},
		{"Global true", u, "Global=true", &XFleet{Name: u, Global: true}},
		{"Global yes", u, "Global=yes", &XFleet{Name: u, Global: true}},
		{"Global 1", u, "Global=1", &XFleet{Name: u, Global: true}},
		{"Global on", u, "Global=on", &XFleet{Name: u, Global: true}},
		{"Global t", u, "Global=t", &XFleet{Name: u, Global: true}},
		{"Global case-insensitive", u, "Global=TRUE", &XFleet{Name: u, Global: true}},
		{"Global Yes", u, "Global=Yes", &XFleet{Name: u, Global: true}},
		{"Global false", u, "Global=false", &XFleet{Name: u}},
		{"Global other", u, "Global=y", &XFleet{Name: u}},
		{"Global empty", u, "Global=", &XFleet{Name: u}},
		{"Global last value wins", u, "Global=true\nGlobal=false", &XFleet{Name: u}},
		{"Global last value wins (true)", u, "Global=no\nGlobal=on", &XFleet{Name: u, Global: true}},
		{"Global last quoted item wins", u, `Global="false" "true"`, &XFleet{Name: u, Global: true}},
		{"Global quoted with no items keeps previous", u, "Global=true\nGlobal=\"\"", &XFleet{Name: u, Global: true}},
		{"Global with MachineMetadata and Conflicts is valid (seed)", u,
			"Global=true\nMachineMetadata=role=web\nConflicts=other*",
			&XFleet{Name: u, Global: true, MachineMetadata: Metadata{"role": {"web"}}, Conflicts: []string{"other*"}}},
		{"MachineID with Global=false is valid", u, "MachineID=m1\nGlobal=false", &XFleet{Name: u, MachineID: "m1"}},
		{"MachineID with MachineMetadata is valid", u, "MachineID=m1\nMachineMetadata=a=b",
			&XFleet{Name: u, MachineID: "m1", MachineMetadata: Metadata{"a": {"b"}}}},
		{"specifiers in X-Fleet values", "web@3.service",
			"MachineOf=db@%i.service\nConflicts=%p@*.service\nMachineMetadata=slot=%i\n",
			&XFleet{Name: "web@3.service", MachineOf: []string{"db@3.service"}, Conflicts: []string{"web@*.service"},
				MachineMetadata: Metadata{"slot": {"3"}}}},
		{"specifier %p on a plain unit (fleet: Dynamic requirements)", "foo.service", "MachineOf=%p.socket",
			&XFleet{Name: "foo.service", MachineOf: []string{"foo.socket"}}},
		{"specifiers %n %N", "a@b.service", "Replaces=%N.old\nMachineOf=x-%n",
			&XFleet{Name: "a@b.service", Replaces: []string{"a@b.old"}, MachineOf: []string{"x-a@b.service"}}},
		{"specifiers only in X-Fleet", "a@b.service", "[Service]\nExecStart=/bin/echo %i\n[X-Fleet]\nMachineOf=%i.service",
			&XFleet{Name: "a@b.service", MachineOf: []string{"b.service"}}},
		{"unknown keys warn", u, "Foo=bar\nmachineid=x\nConflicts=z",
			&XFleet{Name: u, Conflicts: []string{"z"}, Warnings: []string{
				`[X-Fleet] unknown option "Foo" is ignored`,
				`[X-Fleet] unknown option "machineid" is ignored`}}},
		{"repeated X-Fleet sections merge", u, "[X-Fleet]\nMachineOf=a.service\n[Service]\nA=b\n[X-Fleet]\nMachineOf=b.service",
			&XFleet{Name: u, MachineOf: []string{"a.service", "b.service"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.in
			if len(text) == 0 || text[0] != '[' {
				text = "[X-Fleet]\n" + text
			}
			f, err := Parse(text)
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", text, err)
			}
			got, err := ParseXFleet(f, tc.unit)
			if err != nil {
				t.Fatalf("ParseXFleet(%q, %q) error = %v, want %+v", text, tc.unit, err, tc.want)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseXFleet(%q, %q) = %+v, want %+v; diff (-want +got):\n%s", text, tc.unit, got, tc.want, diff)
			}
		})
	}
}

func TestParseXFleetErrors(t *testing.T) {
	tests := []struct {
		name string
		unit string
		in   string // [X-Fleet] body
		want *OptionError
	}{
		// Combination rules: fleet's API validation (api.ValidateOptions) and fleet's "fleet-specific Options".
		{"MachineID + MachineOf", "a.service", "MachineID=m\nMachineOf=b.service",
			&OptionError{"MachineID", "cannot be combined with MachineOf (MachineID already fixes the machine)"}},
		{"MachineID + Conflicts", "a.service", "MachineID=m\nConflicts=b*",
			&OptionError{"MachineID", "cannot be combined with Conflicts (MachineID already fixes the machine)"}},
		{"MachineID + Global", "a.service", "MachineID=m\nGlobal=true",
			&OptionError{"MachineID", "cannot be combined with Global (MachineID already fixes the machine)"}},
		{"MachineID + Replaces", "a.service", "MachineID=m\nReplaces=b.service",
			&OptionError{"MachineID", "cannot be combined with Replaces (MachineID already fixes the machine)"}},
		{"deprecated X-ConditionMachineID + X-Conflicts", "a.service", "X-ConditionMachineID=m\nX-Conflicts=b*",
			&OptionError{"MachineID", "cannot be combined with Conflicts (MachineID already fixes the machine)"}},
		{"Global + MachineOf", "a.service", "Global=true\nMachineOf=b.service",
			&OptionError{"Global", "cannot be combined with MachineOf (a global unit runs on every matching machine)"}},
		{"Global + X-ConditionMachineOf", "a.service", "Global=yes\nX-ConditionMachineOf=b.service",
			&OptionError{"Global", "cannot be combined with MachineOf (a global unit runs on every matching machine)"}},
		{"Global + Replaces", "a.service", "Global=1\nReplaces=b.service",
			&OptionError{"Global", "cannot be combined with Replaces (a global unit runs on every matching machine)"}},
		{"Conflicts + Replaces", "a.service", "Conflicts=c*\nReplaces=b.service",
			&OptionError{"Conflicts", "cannot be combined with Replaces (a replacing unit moves the other unit away instead)"}},
		{"MachineOf peer matched by own Conflicts", "a.service", "MachineOf=db.service\nConflicts=web* db*",
			&OptionError{"MachineOf", `peer "db.service" is matched by this unit's own Conflicts glob "db*"`}},
		{"MachineOf peer matched by own Replaces", "a.service", "MachineOf=db.service\nReplaces=d?.service",
			&OptionError{"MachineOf", `peer "db.service" is matched by this unit's own Replaces glob "d?.service"`}},
		{"MachineOf peer matched via specifiers", "web@1.service", "MachineOf=db@%i.service\nConflicts=*@1.service",
			&OptionError{"MachineOf", `peer "db@1.service" is matched by this unit's own Conflicts glob "*@1.service"`}},
		{"combination reported before peer checks", "a.service", "MachineID=m\nMachineOf=x\nConflicts=x",
			&OptionError{"MachineID", "cannot be combined with MachineOf (MachineID already fixes the machine)"}},

		// Stricter than upstream: empty names and malformed globs.
		{"empty MachineID", "a.service", "MachineID=", &OptionError{"MachineID", "empty value"}},
		{"empty X-ConditionMachineBootID", "a.service", "X-ConditionMachineBootID=",
			&OptionError{"X-ConditionMachineBootID", "empty value"}},
		{"empty MachineOf", "a.service", "MachineOf=", &OptionError{"MachineOf", "empty value"}},
		{"empty Replaces", "a.service", "Replaces=", &OptionError{"Replaces", "empty value"}},
		{"MachineOf expands to empty", "a.service", "MachineOf=%i",
			&OptionError{"MachineOf", `value "%i" expands to an empty name for this unit`}},
		{"malformed Conflicts glob", "a.service", "Conflicts=ok* [bad",
			&OptionError{"Conflicts", `malformed glob "[bad": syntax error in pattern`}},
		{"malformed X-Conflicts glob", "a.service", `X-Conflicts=a[`,
			&OptionError{"X-Conflicts", `malformed glob "a[": syntax error in pattern`}},
		{"malformed Replaces glob", "a.service", "Replaces=[x",
			&OptionError{"Replaces", `malformed glob "[x": syntax error in pattern`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := "[X-Fleet]\n" + tc.in
			f, err := Parse(text)
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", text, err)
			}
			got, err := ParseXFleet(f, tc.unit)
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("ParseXFleet(%q, %q) = %+v, %v, want error %v", text, tc.unit, got, err, tc.want)
			}
			if diff := cmp.Diff(tc.want, oe); diff != "" {
				t.Errorf("ParseXFleet(%q, %q) error = %v, want %v; diff (-want +got):\n%s", text, tc.unit, oe, tc.want, diff)
			}
		})
	}
}

func TestOptionErrorMessage(t *testing.T) {
	err := (&XFleet{Name: "a.service", Global: true, Replaces: []string{"b.service"}}).Validate()
	const want = "[X-Fleet] Global: cannot be combined with Replaces (a global unit runs on every matching machine)"
	if err == nil || err.Error() != want {
		t.Errorf("Validate() = %v, want %q", err, want)
	}
}

func TestValidateHandBuilt(t *testing.T) {
	tests := []struct {
		x    XFleet
		want *OptionError
	}{
		{XFleet{Name: "a.service"}, nil},
		{XFleet{MachineOf: []string{""}}, &OptionError{"MachineOf", "empty value"}},
		{XFleet{Replaces: []string{""}}, &OptionError{"Replaces", "empty value"}},
		{XFleet{Conflicts: []string{"["}}, &OptionError{"Conflicts", `malformed glob "[": syntax error in pattern`}},
	}
	for _, tc := range tests {
		err := tc.x.Validate()
		var got *OptionError
		errors.As(err, &got)
		if diff := cmp.Diff(tc.want, got); diff != "" || (err == nil) != (tc.want == nil) {
			t.Errorf("(%+v).Validate() = %v, want %v", tc.x, err, tc.want)
		}
	}
}

// TestMetadataMatches uses the documentation's "Schedule unit to machine with specific metadata"
// examples.
func TestMetadataMatches(t *testing.T) {
	machines := map[string]map[string]string{
		"282f949f": {"diskType": "SSD", "region": "us-east-1"},
		"f139c5a6": {"region": "us-east-1"},
		"fd1d3e94": {"diskType": "SSD", "region": "us-west-1"},
		"none":     nil,
	}
	tests := []struct {
		name string
		req  Metadata
		want []string // machines that match, sorted
	}{
		{"nil matches all", nil, []string{"282f949f", "f139c5a6", "fd1d3e94", "none"}},
		{"empty matches all", Metadata{}, []string{"282f949f", "f139c5a6", "fd1d3e94", "none"}},
		{"region=us-east-1 AND diskType=SSD", Metadata{"region": {"us-east-1"}, "diskType": {"SSD"}}, []string{"282f949f"}},
		{"region=us-east-1 OR region=us-west-1", Metadata{"region": {"us-east-1", "us-west-1"}},
			[]string{"282f949f", "f139c5a6", "fd1d3e94"}},
		// The documentation's Global example lists app.service on 282f949f and fd1d3e94.
		{"diskType=SSD AND (region=us-east-1 OR region=us-west-1)",
			Metadata{"region": {"us-east-1", "us-west-1"}, "diskType": {"SSD"}}, []string{"282f949f", "fd1d3e94"}},
		{"case-sensitive values", Metadata{"diskType": {"ssd"}}, nil},
		{"missing key", Metadata{"zone": {"a"}}, nil},
	}
	for _, tc := range tests {
		var got []string
		for _, id := range []string{"282f949f", "f139c5a6", "fd1d3e94", "none"} {
			if tc.req.Matches(machines[id]) {
				got = append(got, id)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: %v matches %v, want %v", tc.name, tc.req, got, tc.want)
		}
	}
}

func TestConflicts(t *testing.T) {
	x := func(name string, conflicts ...string) *XFleet { return &XFleet{Name: name, Conflicts: conflicts} }
	tests := []struct {
		name string
		a, b *XFleet
		want bool
	}{
		{"a's glob matches b", x("web@1.service", "web@*.service"), x("web@2.service"), true},
		{"b's glob matches a (other direction)", x("db.service"), x("web.service", "db*"), true},
		{"no globs", x("a.service"), x("b.service"), false},
		{"glob does not match", x("a.service", "c*"), x("b.service", "d*"), false},
		{"self is skipped", x("web@1.service", "web@*.service"), x("web@1.service", "web@*.service"), false},
		{"exact name", x("a.service", "b.service"), x("b.service"), true},
		{"? and classes", x("a.service", "b[0-9].servic?"), x("b7.service"), true},
		{"* does not cross /", x("a.service", "*"), x("x/y"), false},
		{"malformed glob never matches", x("a.service", "["), x("[", "z"), false},
	}
	for _, tc := range tests {
		if got := Conflicts(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Conflicts(%v, %v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
		if got := Conflicts(tc.b, tc.a); got != tc.want {
			t.Errorf("%s: Conflicts(%v, %v) = %v, want %v (must be symmetric)", tc.name, tc.b, tc.a, got, tc.want)
		}
	}
	if x("a.service", "b*").ConflictsWith("a.service") {
		t.Errorf("ConflictsWith(own name) = true")
	}
}

func TestReplaces(t *testing.T) {
	r := func(name string, replaces ...string) *XFleet { return &XFleet{Name: name, Replaces: replaces} }
	tests := []struct {
		name string
		a, b *XFleet
		want bool
	}{
		{"a replaces b", r("new.service", "old.service"), r("old.service"), true},
		{"glob", r("new.service", "old*"), r("old-1.service"), true},
		{"not the other way", r("old.service"), r("new.service", "old.service"), false},
		{"circular pair ignored", r("a.service", "b.service"), r("b.service", "a.service"), false},
		{"no match", r("a.service", "c*"), r("b.service"), false},
		{"never itself", r("a.service", "a*"), r("a.service"), false},
	}
	for _, tc := range tests {
		if got := Replaces(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Replaces(%v, %v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
		if Replaces(tc.a, tc.b) && Replaces(tc.b, tc.a) {
			t.Errorf("%s: Replaces true in both directions", tc.name)
		}
	}
}

func TestMachineIDMatches(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	tests := []struct {
		want, id string
		match    bool
	}{
		{id, id, true},
		{"01234567", id, true}, // 8-character short ID (fleetctl accepts the short ID)
		{"0123456", id, false},
		{"012345678", id, false},
		{"", id, false},
		{"", "", false},
		{"abc", "abc", true},
		{"abc", "abcdefgh", false},
		{"abcdefgh", "abcdefgh", true},
		{"other", id, false},
	}
	for _, tc := range tests {
		if got := MachineIDMatches(tc.want, tc.id); got != tc.match {
			t.Errorf("MachineIDMatches(%q, %q) = %v, want %v", tc.want, tc.id, got, tc.match)
		}
	}
}
