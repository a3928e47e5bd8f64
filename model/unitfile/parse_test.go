package unitfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sec is shorthand for a Section in test tables: sec("S", "A", "1", "B", "2").
func sec(name string, kv ...string) Section {
	s := Section{Name: name}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Options = append(s.Options, Option{Name: kv[i], Value: kv[i+1]})
	}
	return s
}

func file(sections ...Section) *File { return &File{Sections: sections} }

func TestParse(t *testing.T) {
	long := strings.Repeat("x", LineMax-len("A="))
	tests := []struct {
		name string
		in   string
		want *File
	}{
		{"empty", "", file()},
		{"only blank lines", "\n \n\t\n", file()},
		{"spec hash vector 1", "[Service]\nExecStart=/usr/bin/sleep infinity",
			file(sec("Service", "ExecStart", "/usr/bin/sleep infinity"))},
		{"leading newline", "\n[Service]\nExecStart=/usr/bin/sleep infinity",
			file(sec("Service", "ExecStart", "/usr/bin/sleep infinity"))},
		{"two sections", "[Unit]\nDescription=x\n\n[Service]\nExecStart=/bin/true\n",
			file(sec("Unit", "Description", "x"), sec("Service", "ExecStart", "/bin/true"))},
		{"hash and semicolon comments, indented", "# top\n[S]\n  # c1\n; c2\n\t;c3\nA=1\n",
			file(sec("S", "A", "1"))},
		{"no inline comments", "[S]\nA=b # not a comment\nB=c ; neither\n",
			file(sec("S", "A", "b # not a comment", "B", "c ; neither"))},
		{"name and value trimmed", "[S]\n   A  =   b c  \t\n",
			file(sec("S", "A", "b c"))},
		{"empty value", "[S]\nA=\n", file(sec("S", "A", ""))},
		{"value keeps later =", "[S]\nA=b=c\n", file(sec("S", "A", "b=c"))},
		{"empty name", "[S]\n=v\n", file(sec("S", "", "v"))},
		{"duplicate keys kept in order", "[S]\nA=1\nB=x\nA=2\n",
			file(sec("S", "A", "1", "B", "x", "A", "2"))},
		{"repeated sections merge", "[A]\na=1\n[B]\nb=1\n[A]\nc=1\n",
			file(sec("A", "a", "1", "c", "1"), sec("B", "b", "1"))},
		{"empty section dropped", "[Unit]\n[Service]\nA=b\n",
			file(sec("Service", "A", "b"))},
		{"section order is first option order", "[A]\n[B]\nb=1\n[A]\na=1\n",
			file(sec("B", "b", "1"), sec("A", "a", "1"))},
		{"continuation keeps backslash and inserts newline", "[S]\nA=foo \\\n  bar\nB=c\n",
			file(sec("S", "A", "foo \\\n  bar", "B", "c"))},
		{"chained continuation", "[S]\nA=a\\\nb\\\nc\nB=d",
			file(sec("S", "A", "a\\\nb\\\nc", "B", "d"))},
		{"escaped backslash at end of file", "[S]\nA=foo\\\\", file(sec("S", "A", "foo\\\\"))},
		{"escaped backslash at end of section", "[S]\nA=foo\\\\\n\n[T]\nB=c\n", file(sec("S", "A", "foo\\\\"), sec("T", "B", "c"))},
		{"backslash not last character", "[S]\nA=foo\\ bar\nB=c\n",
			file(sec("S", "A", "foo\\ bar", "B", "c"))},
		{"continued line is taken verbatim", "[S]\nA=x\\\n[T]\nB=y\n",
			file(sec("S", "A", "x\\\n[T]", "B", "y"))},
		{"comment continuation swallows next line", "[S]\n# c \\\nA=b\nB=c\n",
			file(sec("S", "B", "c"))},
		{"comment continuation chains", "[S]\n; c \\\nA=b\\\nC=d\nB=c\n",
			file(sec("S", "B", "c"))},
		{"text before first section skipped", "A=b\nhello world\n\n[S]\nA=c\n",
			file(sec("S", "A", "c"))},
		{"text before first section skipped up to [", "junk [S]\nA=b\n",
			file(sec("S", "A", "b"))},
		{"comment line before first section skipped whole", "# see [x] below\n[S]\nA=b\n",
			file(sec("S", "A", "b"))},
		{"indented section header", "  [S]\nA=b\n", file(sec("S", "A", "b"))},
		{"whitespace after ]", "[S] \t\nA=b\n", file(sec("S", "A", "b"))},
		{"section name untrimmed", "[ X ]\nA=b\n", file(sec(" X ", "A", "b"))},
		{"empty section name", "[]\nA=b\n", file(sec("", "A", "b"))},
		{"[ inside section name", "[a[b]\nA=b\n", file(sec("a[b", "A", "b"))},
		{"CRLF line endings", "[S]\r\nA=b\r\n\r\n[T]\r\nB=c\r\n",
			file(sec("S", "A", "b"), sec("T", "B", "c"))},
		{"line of exactly LineMax bytes", "[S]\nA=" + long + "\n", file(sec("S", "A", long))},
		{"X-Fleet values are raw in the File", "[X-Fleet]\nMachineMetadata=\"a=b\" \"c=d\"\n",
			file(sec("X-Fleet", "MachineMetadata", `"a=b" "c=d"`))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q) error = %v, want %v", tc.in, err, tc.want)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) = %v, want %v; diff (-want +got):\n%s", tc.in, got, tc.want, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tooLong := strings.Repeat("y", LineMax+1)
	const (
		lone    = "ends in an unescaped backslash: systemd would take it for a line continuation, drop it and append the next line of the file to the value"
		escaped = `ends in an escaped backslash ("\\"), where systemd ends the option: it would read the next line as a directive of its own`
		comment = "inside a continued value systemd skips it as a comment and continues the value with the line after it"
	)
	tests := []struct {
		name        string
		in          string
		want        *ParseError
		lineTooLong bool
	}{
		{"garbage after section name (spec §4 Parser)", "[S] x\nA=b\n",
			&ParseError{Line: 1, Reason: "found garbage after section name"}, false},
		{"inline comment after section is garbage", "[S]\nA=b\n\n[T] # c\n",
			&ParseError{Line: 4, Reason: "found garbage after section name"}, false},
		{"second ]", "[S]]\n", &ParseError{Line: 1, Reason: "found garbage after section name"}, false},
		{"missing ]", "[S]\nA=b\n[T\nB=c\n", &ParseError{Line: 3, Reason: `missing "]" after section name`}, false},
		{"newline before = (spec §4 Parser)", "[S]\nA=b\nfoo\nC=d\n",
			&ParseError{Line: 3, Reason: "unexpected newline encountered while parsing option name"}, false},
		{"newline before = at last line with newline", "[S]\nfoo\n",
			&ParseError{Line: 2, Reason: "unexpected newline encountered while parsing option name"}, false},
		{"end of file before =", "[S]\nA=b\nfoo",
			&ParseError{Line: 3, Reason: "unexpected end of file encountered while parsing option name"}, false},
		{"line too long in option", "[S]\nA=b\nC=" + tooLong + "\n",
			&ParseError{Line: 3, Reason: "line too long: 2051 bytes, limit 2048"}, true},
		{"line too long in comment", "[S]\n#" + tooLong + "\n",
			&ParseError{Line: 2, Reason: "line too long: 2050 bytes, limit 2048"}, true},
		{"line too long before first section", tooLong + "\n[S]\nA=b\n",
			&ParseError{Line: 1, Reason: "line too long: 2049 bytes, limit 2048"}, true},
		{"line too long in continuation", "[S]\nA=x\\\n" + tooLong + "\n",
			&ParseError{Line: 3, Reason: "line too long: 2049 bytes, limit 2048"}, true},
		{"line too long in swallowed comment line", "[S]\n# x\\\n" + tooLong,
			&ParseError{Line: 3, Reason: "line too long: 2049 bytes, limit 2048"}, true},
		{"line too long blank line", "[S]\nA=b\n" + strings.Repeat(" ", LineMax+1) + "\n",
			&ParseError{Line: 3, Reason: "line too long: 2049 bytes, limit 2048"}, true},
		// What systemd would read otherwise (systemd.go): refused with the line.
		{"blank line ends continuation, leaving a lone backslash", "[S]\nA=foo \\\nbar \\\n\nB=c\n",
			&ParseError{Line: 3, Reason: "value of A " + lone}, false},
		{"whitespace-only line ends continuation, leaving a lone backslash", "[S]\nA=foo \\\n  \t\nB=c\n",
			&ParseError{Line: 2, Reason: "value of A " + lone}, false},
		{"continuation at end of file", "[S]\nA=foo\\", &ParseError{Line: 2, Reason: "value of A " + lone}, false},
		{"continuation at end of file with newline", "[S]\nA=foo\\\n", &ParseError{Line: 2, Reason: "value of A " + lone}, false},
		{"backslash before trailing space", "[S]\nA=foo\\ \nB=c\n", &ParseError{Line: 2, Reason: "value of A " + lone}, false},
		{"continued line ending in an escaped backslash (issue 31: User=root injected)",
			"[Service]\nUser=nobody\nExecStart=/bin/true \\\\\nUser=root\n",
			&ParseError{Line: 3, Reason: "value of ExecStart " + escaped}, false},
		{"comment line inside a continuation (issue 31: User=nobody folded into ExecStart)",
			"[Service]\nExecStart=/bin/true \\\n  # c\nUser=nobody\n",
			&ParseError{Line: 3, Reason: "value of ExecStart starts with '#': " + comment}, false},
		{"semicolon comment inside a longer continuation", "[S]\nA=a\\\nb\\\n;c\n",
			&ParseError{Line: 4, Reason: "value of A starts with ';': " + comment}, false},
		{"carriage return inside a value", "[S]\nUser=nobody\rUser=root\r\n",
			&ParseError{Line: 2, Reason: `value of User holds a carriage return ("\r"), which systemd reads as the end of a line`}, false},
		{"carriage return inside a name", "[S]\nA\rB=c\n",
			&ParseError{Line: 2, Reason: `option name "A\rB" holds a carriage return ("\r"), which systemd reads as the end of a line`}, false},
		{"NUL byte", "[S]\nA=b\x00c\n", &ParseError{Line: 2, Reason: "value of A holds a NUL byte, which systemd reads as the end of a line"}, false},
		{"invalid UTF-8", "[S]\nA=\xff\n", &ParseError{Line: 2, Reason: "value of A is not valid UTF-8, which systemd refuses"}, false},
		{"quote in a section name", "[S]\nA=b\n[X-\"q\"]\nB=c\n",
			&ParseError{Line: 3, Reason: `section name "X-\"q\"" holds '"', which systemd refuses in a section header`}, false},
		{"tab in a section name", "[A\tB]\n", &ParseError{Line: 1, Reason: `section name "A\tB" holds the control character '\t', which systemd refuses in a section header`}, false},
		{"first error by line wins", "[S]\nfoo\n" + tooLong + "\n",
			&ParseError{Line: 2, Reason: "unexpected newline encountered while parsing option name"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %v, %v, want error %v", tc.in, got, err, tc.want)
			}
			if diff := cmp.Diff(tc.want, pe); diff != "" {
				t.Errorf("Parse(%q) error = %v, want %v; diff (-want +got):\n%s", tc.in, pe, tc.want, diff)
			}
			if is := errors.Is(err, ErrLineTooLong); is != tc.lineTooLong {
				t.Errorf("errors.Is(Parse(%q) error, ErrLineTooLong) = %v, want %v", tc.in, is, tc.lineTooLong)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := Parse("[Unit]\nDescription=x\n\n[Service]\nExecStart=/bin/true\n\nbroken\n")
	const want = "line 7: unexpected newline encountered while parsing option name"
	if err == nil || err.Error() != want {
		t.Errorf("Parse error = %v, want %q", err, want)
	}
}

func TestFileAccessors(t *testing.T) {
	f, err := Parse("[Unit]\nDescription=first\nDescription=second\n[Service]\nExecStart=a\n[Unit]\nAfter=x\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Description(); got != "first" {
		t.Errorf("Description() = %q, want %q", got, "first")
	}
	if got, want := f.Values("Unit", "Description"), []string{"first", "second"}; !cmp.Equal(got, want) {
		t.Errorf("Values(Unit, Description) = %q, want %q", got, want)
	}
	if got := f.Values("Unit", "Nope"); got != nil {
		t.Errorf("Values(Unit, Nope) = %q, want nil", got)
	}
	wantOpts := []UnitOption{
		{"Unit", "Description", "first"}, {"Unit", "Description", "second"}, {"Unit", "After", "x"},
		{"Service", "ExecStart", "a"},
	}
	if diff := cmp.Diff(wantOpts, f.Options()); diff != "" {
		t.Errorf("Options() diff (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(f, FromOptions(f.Options())); diff != "" {
		t.Errorf("FromOptions(Options()) diff (-want +got):\n%s", diff)
	}
	// FromOptions groups interleaved sections in first-seen order, as Parse does.
	interleaved := []UnitOption{{"A", "a", "1"}, {"B", "b", "1"}, {"A", "c", "2"}}
	if diff := cmp.Diff(file(sec("A", "a", "1", "c", "2"), sec("B", "b", "1")), FromOptions(interleaved)); diff != "" {
		t.Errorf("FromOptions(%v) diff (-want +got):\n%s", interleaved, diff)
	}
	var nilFile *File
	if nilFile.Options() != nil || nilFile.Values("a", "b") != nil || nilFile.Description() != "" || Serialize(nilFile) != "" {
		t.Errorf("nil *File accessors should return zero values")
	}
}
