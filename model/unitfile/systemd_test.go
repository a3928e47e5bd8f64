package unitfile

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// systemdRead is a model, for tests, of how systemd's configuration parser reads unit file
// text (systemd.syntax(7) and the parser's behaviour; agentsystemd/machine/dbus
// TestSystemdReadsWhatTheAPIShows checks it against a real systemd): the assignments it
// hands to the directives' parsers, in order. ok is false when systemd refuses the file.
//
// Lines end at "\n", "\r" (with "\r\n" one end) or NUL. A line whose first character after
// blanks is '#' or ';' is skipped, also inside a continuation. A line ending in an odd run
// of backslashes continues: the last backslash becomes a space and the next line is
// appended. Then each assignment is stripped of blanks around its name and value; an
// assignment without a name or '=' is skipped, as is one before the first section.
func systemdRead(text string) (out []UnitOption, ok bool) {
	const ws = " \t\n\r"
	var lines []string
	for len(text) > 0 {
		i := strings.IndexAny(text, "\n\r\x00")
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i])
		if strings.HasPrefix(text[i:], "\r\n") {
			i++
		}
		text = text[i+1:]
	}
	section, inSection := "", false
	assign := func(l string) bool {
		l = strings.Trim(l, ws)
		switch {
		case l == "":
			return true
		case !utf8.ValidString(l):
			return false
		case l[0] == '[':
			if l[len(l)-1] != ']' || len(l) < 2 || strings.ContainsFunc(l[1:len(l)-1], func(r rune) bool { return r < ' ' || r == 0x7f || strings.ContainsRune(`"'\`, r) }) {
				return false
			}
			section, inSection = l[1:len(l)-1], true
			return true
		}
		eq := strings.IndexByte(l, '=')
		if !inSection || eq <= 0 {
			return true // skipped, with a warning
		}
		out = append(out, UnitOption{Section: section, Name: strings.Trim(l[:eq], ws), Value: strings.Trim(l[eq+1:], ws)})
		return true
	}
	var cont *string
	for _, raw := range lines {
		if t := strings.TrimLeft(raw, ws); t != "" && (t[0] == '#' || t[0] == ';') {
			continue
		}
		p := raw
		if cont != nil {
			p = *cont + raw
		}
		if run := len(p) - len(strings.TrimRight(p, `\`)); run%2 == 1 {
			p = p[:len(p)-1] + " "
			cont = &p
			continue
		}
		cont = nil
		if !assign(p) {
			return nil, false
		}
	}
	if cont != nil && !assign(*cont) {
		return nil, false
	}
	return out, true
}

// joined is a value as systemd reads it: its lines joined, each line's trailing backslash
// replaced by a space, stripped of blanks.
func joined(v string) string {
	lines := strings.Split(v, "\n")
	for i := range len(lines) - 1 {
		lines[i] = strings.TrimSuffix(lines[i], `\`) + " "
	}
	return strings.Trim(strings.Join(lines, ""), " \t\n\r")
}

// shown is what systemd should read for f: every option the API shows, in order, its
// value joined; an option without a name is skipped (systemd ignores "=value", as it
// ignores unknown names).
func shown(f *File) []UnitOption {
	var out []UnitOption
	for _, o := range f.canonical().Options() {
		if o.Name != "" {
			out = append(out, UnitOption{Section: o.Section, Name: o.Name, Value: joined(o.Value)})
		}
	}
	return out
}

// checkSystemdReadsShown fails unless systemd reads the serialization of f as f shows it.
func checkSystemdReadsShown(t interface{ Fatalf(string, ...any) }, f *File) {
	text := Serialize(f)
	got, ok := systemdRead(text)
	if !ok {
		t.Fatalf("Validate accepts %q but systemd refuses it", text)
	}
	if diff := cmp.Diff(shown(f), got); diff != "" {
		t.Fatalf("Validate accepts %q but systemd reads it otherwise (-shown +systemd):\n%s", text, diff)
	}
}

// TestPropSystemdReadsWhatValidateAccepts: for hand-built Files with any characters, and
// for generated files with continued values, every File that Validate accepts is read by
// systemd as its options show it. (Run with -rapid.checks=3000, it fails when any one rule
// of systemd.go is taken out.)
func TestPropSystemdReadsWhatValidateAccepts(t *testing.T) {
	// Strings of pieces that matter to either parser.
	pieces := rapid.OneOf(
		rapid.SampledFrom([]string{"a", " ", `\`, `\`, "\n", "\n", "#", ";", "User=root"}),
		rapid.SampledFrom([]string{"Z", "\t", "=", "[", "]", "\r", "\x00", `"`, "'", "é", "\u00a0", "\xff"}),
		rapid.SampledFrom([]string{"a", " ", `\`, `\`, "\n", "\n", "#", ";", "User=root"}),
	)
	str := func(most int) *rapid.Generator[string] {
		return rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(pieces, 0, most).Draw(t, "pieces"), "")
		})
	}
	// A value: lines of pieces, each ending in a run of backslashes.
	value := rapid.Custom(func(t *rapid.T) string {
		lines := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string {
			return str(4).Draw(t, "line") + strings.Repeat(`\`, rapid.IntRange(0, 3).Draw(t, "backslashes"))
		}), 1, 3).Draw(t, "lines")
		return strings.TrimSpace(strings.Join(lines, "\n"))
	})
	rapid.Check(t, func(t *rapid.T) {
		f := &File{}
		for n := rapid.IntRange(1, 2).Draw(t, "sections"); n > 0; n-- {
			s := Section{Name: rapid.OneOf(str(3), rapid.SampledFrom([]string{"Unit", "Service", `X-"a"`})).Draw(t, "section")}
			for k := rapid.IntRange(1, 2).Draw(t, "options"); k > 0; k-- {
				s.Options = append(s.Options, Option{
					Name:  rapid.OneOf(str(3), rapid.SampledFrom([]string{"User", "ExecStart"})).Draw(t, "name"),
					Value: value.Draw(t, "value"),
				})
			}
			f.Sections = append(f.Sections, s)
		}
		if f.Validate() == nil {
			checkSystemdReadsShown(t, f)
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		f := genCanonicalFile(t)
		if err := f.Validate(); err != nil {
			t.Fatalf("generated file %q: Validate() = %v", Serialize(f), err)
		}
		checkSystemdReadsShown(t, f)
	})
}

// TestSystemdReadsRefusedValuesOtherwise: each kind of value that Validate refuses for
// systemd's sake is read otherwise by systemd (the model), so the refusal is needed; the
// issue 31 cases are also shown on a real systemd in agentsystemd/machine/dbus.
func TestSystemdReadsRefusedValuesOtherwise(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *File
		want []UnitOption // what systemd reads; nil when it refuses the file
	}{
		{"issue 31: escaped backslash injects User=root",
			file(sec("Service", "User", "nobody", "ExecStart", "/bin/true \\\\\nUser=root")),
			[]UnitOption{{"Service", "User", "nobody"}, {"Service", "ExecStart", `/bin/true \\`}, {"Service", "User", "root"}}},
		{"issue 31: comment inside a continuation folds User=nobody into ExecStart",
			file(sec("Service", "ExecStart", "/bin/true \\\n# c", "User", "nobody")),
			[]UnitOption{{"Service", "ExecStart", "/bin/true  User=nobody"}}},
		{"carriage return starts a new line", file(sec("Service", "User", "nobody\rUser=root")),
			[]UnitOption{{"Service", "User", "nobody"}, {"Service", "User", "root"}}},
		{"NUL starts a new line", file(sec("Service", "User", "nobody\x00User=root")),
			[]UnitOption{{"Service", "User", "nobody"}, {"Service", "User", "root"}}},
		{"lone trailing backslash is dropped", file(sec("Unit", "Description", `ends in \`)),
			[]UnitOption{{"Unit", "Description", "ends in"}}},
		{"quote in a section name", file(sec(`X-"a"`, "A", "b")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.Validate() == nil {
				t.Fatalf("Validate accepts %q", Serialize(tc.in))
			}
			got, ok := systemdRead(Serialize(tc.in))
			if ok != (tc.want != nil) {
				t.Fatalf("systemd accepts %q: %v, want %v", Serialize(tc.in), ok, tc.want != nil)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("systemd reads %q (-want +got):\n%s", Serialize(tc.in), diff)
			}
			if ok && cmp.Equal(shown(tc.in), got) {
				t.Errorf("systemd reads %q as shown: the refusal is not needed", Serialize(tc.in))
			}
		})
	}
}

func TestJoined(t *testing.T) {
	for in, want := range map[string]string{
		"/bin/true":                         "/bin/true",
		"/bin/sh -c 'echo a; \\\n  echo b'": "/bin/sh -c 'echo a;    echo b'",
		"a\\\n\\\nb":                        "a  b",
		`x\\`:                               `x\\`,
	} {
		if got := joined(in); got != want {
			t.Errorf("joined(%q) = %q, want %q", in, got, want)
		}
	}
}
