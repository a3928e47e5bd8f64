package unitfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHashGoldenVectors checks the unit hashes fleet computes for known unit files (the
// SHA1 of the canonical form that fleetctl prints and the registry is keyed by).
func TestHashGoldenVectors(t *testing.T) {
	tests := []struct {
		spec string // what the vector is
		in   string
		want string
	}{
		{"sleep infinity", "[Service]\nExecStart=/usr/bin/sleep infinity", "40ea6646945809f4b420a50475ee68503088f127"},
		{"sleep infinity with a leading newline", "\n[Service]\nExecStart=/usr/bin/sleep infinity", "40ea6646945809f4b420a50475ee68503088f127"},
		{"sleep 100", "[Service]\nExecStart=/bin/sleep 100\n", "1c6fb6f3684bafb0c173d8b8b957ceff031180c1"},
		{"empty file", "", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			f, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", tc.in, err)
			}
			if got := f.Hash().String(); got != tc.want {
				t.Errorf("Parse(%q).Hash() = %s, want %s (%s)", tc.in, got, tc.want, tc.spec)
			}
			// The short form (fleetctl list-unit-files) is the first 7 hex characters.
			if got := f.Hash().Short(); got != tc.want[:7] {
				t.Errorf("Parse(%q).Hash().Short() = %s, want %s (the first 7 characters)", tc.in, got, tc.want[:7])
			}
		})
	}
}

// TestHashIgnoresLayout: comments and whitespace differences do not change the hash (it is
// taken over the canonical form), and neither does spreading a section
// over repeated headers.
func TestHashIgnoresLayout(t *testing.T) {
	const want = "40ea6646945809f4b420a50475ee68503088f127"
	for _, in := range []string{
		"# a comment\n[Service]\n; another\nExecStart=/usr/bin/sleep infinity\n",
		"[Service]   \n   ExecStart   =   /usr/bin/sleep infinity   \n\n\n",
		"[Unit]\n[Service]\nExecStart=/usr/bin/sleep infinity\r\n",
		"preamble text\n[Service]\n\nExecStart=/usr/bin/sleep infinity",
	} {
		f, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q) error = %v", in, err)
		}
		if got := f.Hash().String(); got != want {
			t.Errorf("Parse(%q).Hash() = %s, want %s", in, got, want)
		}
	}
	a, _ := Parse("[A]\na=1\n[B]\nb=1\n[A]\nc=1\n")
	b, _ := Parse("[A]\na=1\nc=1\n\n[B]\nb=1\n")
	if a.Hash() != b.Hash() {
		t.Errorf("repeated sections: hash %s != %s", a.Hash(), b.Hash())
	}
	c, _ := Parse("[A]\nc=1\na=1\n\n[B]\nb=1\n")
	if a.Hash() == c.Hash() {
		t.Errorf("option order must change the hash")
	}
}

func TestSerialize(t *testing.T) {
	tests := []struct {
		name string
		in   *File
		want string
	}{
		{"nil", nil, ""},
		{"no sections", file(), ""},
		{"one section", file(sec("Service", "ExecStart", "/bin/true")), "[Service]\nExecStart=/bin/true\n"},
		{"blank line between sections",
			file(sec("Unit", "Description", "d", "After", "a"), sec("Service", "ExecStart", "x")),
			"[Unit]\nDescription=d\nAfter=a\n\n[Service]\nExecStart=x\n"},
		{"hand-built: same-named sections merged, empty skipped",
			file(sec("A", "a", "1"), sec("Empty"), sec("B", "b", "1"), sec("A", "c", "1")),
			"[A]\na=1\nc=1\n\n[B]\nb=1\n"},
		{"values verbatim, including continuations", file(sec("S", "A", "x \\\n y")), "[S]\nA=x \\\n y\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Serialize(tc.in); got != tc.want {
				t.Errorf("Serialize(%v) = %q, want %q", tc.in, got, tc.want)
			}
			if tc.in != nil && tc.in.String() != tc.want {
				t.Errorf("String() = %q, want %q", tc.in.String(), tc.want)
			}
		})
	}
}

func TestParseHash(t *testing.T) {
	const s = "40ea6646945809f4b420a50475ee68503088f127"
	h, err := ParseHash(strings.ToUpper(s))
	if err != nil || h.String() != s {
		t.Errorf("ParseHash(%q) = %v, %v, want %s", strings.ToUpper(s), h, err, s)
	}
	if h.IsZero() || !(Hash{}).IsZero() {
		t.Errorf("IsZero wrong")
	}
	for _, bad := range []string{"", "40ea66", s + "0", "zz" + s[2:]} {
		if _, err := ParseHash(bad); err == nil {
			t.Errorf("ParseHash(%q) error = nil, want error", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	tooLong := strings.Repeat("v", LineMax-1)
	tests := []struct {
		name        string
		in          *File
		wantErr     string // substring; "" means valid
		lineTooLong bool
	}{
		{"nil", nil, "", false},
		{"plain", file(sec("Unit", "Description", "x"), sec("Service", "ExecStart", "a \\\n  b")), "", false},
		{"escaped backslash ending the last option of a section", file(sec("A", "a", "x\\\\"), sec("B", "b", "y\\\\")), "", false},
		{"multi-line value", file(sec("Service", "ExecStart", "/bin/sh -c 'echo a; \\\n  echo b' \\\n\\\n  x"), sec("Unit", "Description", "a\\\\ \\\nb")), "", false},
		{"empty names and values", file(sec("", "", "")), "", false},
		{"line of exactly LineMax", file(sec("S", "A", strings.Repeat("v", LineMax-2))), "", false},
		{"line too long", file(sec("S", "A", tooLong)), "line too long", true},
		{"continuation line too long", file(sec("S", "A", "a\\\n"+strings.Repeat("v", LineMax+1))), "line too long", true},
		{"section header too long", file(sec(strings.Repeat("s", LineMax-1), "A", "b")), "line too long", true},
		{"] in section name", file(sec("a]b", "A", "b")), "must not contain", false},
		{"newline in section name", file(sec("a\nb", "A", "b")), "must not contain", false},
		{"= in option name", file(sec("S", "A=B", "c")), "must not contain", false},
		{"option name starting with #", file(sec("S", "#A", "c")), "must not start", false},
		{"option name starting with [", file(sec("S", "[A", "c")), "must not start", false},
		{"option name with spaces", file(sec("S", " A", "c")), "surrounding whitespace", false},
		{"value with spaces", file(sec("S", "A", "c ")), "surrounding whitespace", false},
		{"bare newline in value", file(sec("S", "A", "a\nb=c")), "without a trailing backslash", false},
		{"value ending in a continuation newline", file(sec("S", "A", "a\\\n")), "surrounding whitespace", false},
		{"escaped backslash before another option", file(sec("S", "A", "x\\\\", "B", "y")), "swallow", false},
		// What systemd would read otherwise (systemd.go); the error names the option.
		{"issue 31: a continued line ending in an escaped backslash injects User=root",
			file(sec("Service", "User", "nobody", "ExecStart", "/bin/true \\\\\nUser=root")),
			`section "Service": option "ExecStart": value line 1 ends in an escaped backslash ("\\"), where systemd ends the option`, false},
		{"issue 31: a comment line inside a continuation folds User=nobody into ExecStart",
			file(sec("Service", "ExecStart", "/bin/true \\\n# c", "User", "nobody")),
			`section "Service": option "ExecStart": value line 2 starts with '#': inside a continued value systemd skips it as a comment`, false},
		{"indented semicolon comment inside a continuation", file(sec("S", "A", "a \\\n \t; c")), `option "A": value line 2 starts with ';'`, false},
		{"lone backslash ending the last option", file(sec("S", "A", "x \\")), `option "A": value line 1 ends in an unescaped backslash`, false},
		{"lone backslash before another option", file(sec("S", "A", "x\\", "B", "y")), "unescaped backslash", false},
		{"three backslashes continue", file(sec("S", "A", "x\\\\\\\ny")), "", false},
		{"carriage return in a value", file(sec("Service", "User", "nobody\rUser=root")), `option "User": value line 1 holds a carriage return`, false},
		{"NUL in a value", file(sec("S", "A", "a\x00b")), "NUL byte", false},
		{"invalid UTF-8 in a value", file(sec("S", "A", "\xff")), "not valid UTF-8", false},
		{"carriage return in a name", file(sec("S", "A\rB", "c")), `option "A\rB": name holds a carriage return`, false},
		{"quote in a section name", file(sec("X-'a'", "A", "b")), `section "X-'a'": name holds '\''`, false},
		{"backslash in a section name", file(sec("X-a\\b", "A", "b")), "systemd refuses in a section header", false},
		{"control character in a section name", file(sec("X-\x7f", "A", "b")), "control character", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("(%v).Validate() = %v, want nil", tc.in, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("(%v).Validate() = %v, want error containing %q", tc.in, err, tc.wantErr)
			}
			if is := errors.Is(err, ErrLineTooLong); is != tc.lineTooLong {
				t.Errorf("errors.Is(%v, ErrLineTooLong) = %v, want %v", err, is, tc.lineTooLong)
			}
			// Whatever Validate rejects must indeed fail to round-trip.
			if g, perr := Parse(Serialize(tc.in)); perr == nil && cmp.Equal(g, tc.in.canonical()) {
				t.Errorf("Validate rejected %v, but it round-trips", tc.in)
			}
		})
	}
}
