package unitfile

import (
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// nasty is an alphabet heavy in characters that matter to the parser, including Unicode
// whitespace.
var nasty = []rune("aZ0 \t=#;[]\\\"%@.é\r\u00a0\n")

func runesWithout(exclude string) *rapid.Generator[rune] {
	var rs []rune
	for _, r := range nasty {
		if !strings.ContainsRune(exclude, r) {
			rs = append(rs, r)
		}
	}
	return rapid.SampledFrom(rs)
}

// genSectionName draws a section name that survives serialization and that systemd
// accepts (no control characters, quotes or backslashes).
func genSectionName(t *rapid.T, label string) string {
	return rapid.StringOfN(runesWithout("]\n\r\t\"\\"), 0, 8, -1).Draw(t, label)
}

// genOptionName draws an option name that survives serialization: trimmed, without '=',
// a newline or a carriage return, and not starting with '[', '#' or ';'.
func genOptionName(t *rapid.T, label string) string {
	n := strings.TrimSpace(rapid.StringOfN(runesWithout("=\n\r"), 0, 8, -1).Draw(t, label))
	if n != "" && strings.ContainsRune("[#;", rune(n[0])) {
		n = "k" + n
	}
	return n
}

// genValue draws a value that survives serialization and that systemd reads as fleet
// does: continuation lines (joined by "\\\n") that are not blank, do not end in a
// backslash of their own (which would make the joining one escaped) and, after the first,
// do not start with '#' or ';'; trimmed; without carriage returns; ending in an escaped
// backslash only if last is set, and never in a lone one.
func genValue(t *rapid.T, label string, last bool) string {
	segs := rapid.SliceOfN(rapid.StringOfN(runesWithout("\n\r"), 0, 10, -1), 1, 3).Draw(t, label)
	for i := range segs {
		if i > 0 {
			if b := strings.TrimLeft(segs[i], " \t"); strings.TrimSpace(segs[i]) == "" || b != "" && (b[0] == '#' || b[0] == ';') {
				segs[i] = "x" + segs[i]
			}
		}
		if i < len(segs)-1 && strings.HasSuffix(segs[i], `\`) {
			segs[i] += "x"
		}
	}
	v := strings.TrimSpace(strings.Join(segs, "\\\n"))
	if run := len(v) - len(strings.TrimRight(v, `\`)); run%2 == 1 || run > 0 && !last {
		v += "x"
	}
	return v
}

// genCanonicalFile draws a canonical File that survives serialization.
func genCanonicalFile(t *rapid.T) *File {
	f := &File{}
	seen := map[string]bool{}
	n := rapid.IntRange(0, 4).Draw(t, "sections")
	for i := 0; i < n; i++ {
		name := genSectionName(t, "section")
		if seen[name] {
			continue
		}
		seen[name] = true
		s := Section{Name: name}
		k := rapid.IntRange(1, 4).Draw(t, "options")
		for j := 0; j < k; j++ {
			s.Options = append(s.Options, Option{Name: genOptionName(t, "name"), Value: genValue(t, "value", j == k-1)})
		}
		f.Sections = append(f.Sections, s)
	}
	return f
}

// TestPropRoundTrip: for generated canonical files, Validate accepts them,
// Parse(Serialize(f)) gives f back, and the hash is stable under re-serialization.
func TestPropRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genCanonicalFile(t)
		if err := f.Validate(); err != nil {
			t.Fatalf("(%q).Validate() = %v, want nil", Serialize(f), err)
		}
		text := Serialize(f)
		got, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q) error = %v", text, err)
		}
		if diff := cmp.Diff(f, got); diff != "" {
			t.Fatalf("Parse(%q) = %v, want %v; diff (-want +got):\n%s", text, got, f, diff)
		}
		if got.Hash() != f.Hash() {
			t.Fatalf("hash changed on re-serialization: %s → %s", f.Hash(), got.Hash())
		}
		if again := Serialize(got); again != text {
			t.Fatalf("Serialize not stable: %q → %q", text, again)
		}
	})
}

// render writes f as unit file text with noise that must not matter: a preamble, comments
// (some continued onto a swallowed line), blank lines, indentation, spaces around "=",
// trailing whitespace, empty sections, and sections split over repeated headers.
func render(t *rapid.T, f *File) string {
	var b strings.Builder
	ws := rapid.StringOfN(rapid.SampledFrom([]rune(" \t\u00a0")), 0, 3, -1)
	// noise writes ignorable lines; headers allows empty sections, which must not come
	// between a section's header and its options.
	noise := func(headers bool) {
		kinds := 3
		if headers {
			kinds = 4
		}
		for k := rapid.IntRange(0, 2).Draw(t, "noise"); k > 0; k-- {
			switch rapid.IntRange(0, kinds-1).Draw(t, "noiseKind") {
			case 0:
				b.WriteString(ws.Draw(t, "blank") + "\n")
			case 1:
				text := rapid.StringOfN(runesWithout("\n\\"), 0, 10, -1).Draw(t, "comment")
				b.WriteString(ws.Draw(t, "indent") + rapid.SampledFrom([]string{"#", ";"}).Draw(t, "c") + text + "\n")
			case 2:
				b.WriteString("# continued \\\n" + rapid.StringOfN(runesWithout("\n\\"), 0, 10, -1).Draw(t, "swallowed") + "\n")
			case 3:
				b.WriteString(ws.Draw(t, "indent") + "[" + genSectionName(t, "emptySection") + "]" + ws.Draw(t, "trail") + "\n")
			}
		}
	}
	// Preamble: text without "[" (or comment lines) is skipped.
	b.WriteString(rapid.StringOfN(runesWithout("[\\"), 0, 20, -1).Draw(t, "preamble") + "\n")
	// Split every section into chunks and interleave them, keeping each section's first
	// chunk in section order so that the first-option order is unchanged.
	type chunk struct {
		section string
		opts    []Option
	}
	var queues [][]chunk
	for _, s := range f.Sections {
		var q []chunk
		opts := s.Options
		for len(opts) > 0 {
			n := rapid.IntRange(1, len(opts)).Draw(t, "chunk")
			q = append(q, chunk{s.Name, opts[:n]})
			opts = opts[n:]
		}
		queues = append(queues, q)
	}
	started := 0
	for {
		var ready []int
		for i := 0; i < started; i++ {
			if len(queues[i]) > 0 {
				ready = append(ready, i)
			}
		}
		if started < len(queues) {
			ready = append(ready, started)
		}
		if len(ready) == 0 {
			break
		}
		i := rapid.SampledFrom(ready).Draw(t, "next")
		if i == started {
			started++
		}
		c := queues[i][0]
		queues[i] = queues[i][1:]
		noise(true)
		b.WriteString(ws.Draw(t, "indent") + "[" + c.section + "]" + ws.Draw(t, "trail") + "\n")
		for _, o := range c.opts {
			noise(false)
			line := ws.Draw(t, "indent") + o.Name + ws.Draw(t, "pre=") + "=" + ws.Draw(t, "post=") + o.Value
			trail := ws.Draw(t, "trail")
			if strings.HasSuffix(o.Value, `\`) && trail == "" {
				trail = " " // otherwise the backslash would continue onto the next line
			}
			b.WriteString(line + trail + "\n")
		}
	}
	noise(true)
	return b.String()
}

// TestPropNoiseDoesNotChangeFile: comments, whitespace and section layout change neither
// the parsed File nor its hash.
func TestPropNoiseDoesNotChangeFile(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genCanonicalFile(t)
		text := render(t, f)
		got, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q) error = %v", text, err)
		}
		if diff := cmp.Diff(f, got); diff != "" {
			t.Fatalf("Parse(%q) = %v, want %v; diff (-want +got):\n%s", text, got, f, diff)
		}
		if got.Hash() != f.Hash() {
			t.Fatalf("Parse(%q).Hash() = %s, want %s", text, got.Hash(), f.Hash())
		}
	})
}

// TestPropValidateIffRoundTrip: for arbitrary hand-built Files (duplicate and empty
// sections, any characters, occasional long lines), Validate accepts exactly the files
// that Parse(Serialize(f)) gives back in canonical form.
func TestPropValidateIffRoundTrip(t *testing.T) {
	str := func(label string) *rapid.Generator[string] {
		return rapid.Custom(func(t *rapid.T) string {
			s := rapid.StringOfN(rapid.SampledFrom(nasty), 0, 6, -1).Draw(t, label)
			if rapid.IntRange(0, 30).Draw(t, label+"Long") == 0 {
				s += strings.Repeat("L", LineMax-3+rapid.IntRange(0, 4).Draw(t, label+"Extra"))
			}
			return s
		})
	}
	rapid.Check(t, func(t *rapid.T) {
		f := &File{}
		for n := rapid.IntRange(0, 4).Draw(t, "sections"); n > 0; n-- {
			s := Section{Name: rapid.OneOf(str("section"), rapid.SampledFrom([]string{"A", "B"})).Draw(t, "sectionName")}
			for k := rapid.IntRange(0, 3).Draw(t, "options"); k > 0; k-- {
				s.Options = append(s.Options, Option{Name: str("name").Draw(t, "name"), Value: str("value").Draw(t, "value")})
			}
			f.Sections = append(f.Sections, s)
		}
		verr := f.Validate()
		got, perr := Parse(Serialize(f))
		roundTrips := perr == nil && cmp.Equal(f.canonical(), got)
		if (verr == nil) != roundTrips {
			t.Fatalf("Validate() = %v but round trip ok = %v (Parse error %v) for %q", verr, roundTrips, perr, Serialize(f))
		}
		if errors.Is(verr, ErrLineTooLong) && perr == nil {
			t.Fatalf("Validate reports a long line (%v) but Parse accepts %q", verr, Serialize(f))
		}
	})
}

// checkParse checks what must hold for any input text.
func checkParse(t interface{ Fatalf(string, ...any) }, text string) {
	f, err := Parse(text)
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("Parse(%q) error %v is %T, want *ParseError", text, err, err)
		}
		if lines := strings.Count(text, "\n") + 1; pe.Line < 1 || pe.Line > lines {
			t.Fatalf("Parse(%q) error line %d outside 1..%d", text, pe.Line, lines)
		}
		if f != nil {
			t.Fatalf("Parse(%q) returned a File with an error", text)
		}
		return
	}
	seen := map[string]bool{}
	for _, s := range f.Sections {
		if len(s.Options) == 0 || seen[s.Name] {
			t.Fatalf("Parse(%q) = %v: not canonical", text, f)
		}
		seen[s.Name] = true
		for _, o := range s.Options {
			if o.Name != strings.TrimSpace(o.Name) || o.Value != strings.TrimFunc(o.Value, unicode.IsSpace) {
				t.Fatalf("Parse(%q): untrimmed option %q=%q", text, o.Name, o.Value)
			}
		}
	}
	if f.Validate() != nil {
		return // e.g. a value ending in '\' followed by another option; see Serialize
	}
	text2 := Serialize(f)
	g, err := Parse(text2)
	if err != nil {
		t.Fatalf("Parse(Serialize(Parse(%q))) error = %v", text, err)
	}
	if diff := cmp.Diff(f, g); diff != "" {
		t.Fatalf("Parse(Serialize(Parse(%q))) differs (-first +second):\n%s", text, diff)
	}
	if f.Hash() != g.Hash() {
		t.Fatalf("hash of %q not stable under re-serialization", text)
	}
}

// TestPropParseArbitraryText: Parse never panics, errors carry a line number within the
// text, results are canonical, and re-serialization is stable.
func TestPropParseArbitraryText(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.StringOfN(rapid.SampledFrom([]rune("[]=#;\\ \t\n\rab\"")), 0, 120, -1).Draw(t, "text")
		if rapid.IntRange(0, 20).Draw(t, "long") == 0 {
			text += strings.Repeat("a", LineMax+1)
		}
		checkParse(t, text)
	})
}

// FuzzParse runs the same checks under `go test -fuzz=FuzzParse`.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "[Service]\nExecStart=/usr/bin/sleep infinity", "[S]\nA=a\\\nb\n\n[T]\nB=x\\",
		"junk [S]\nA=b", "# c \\\nswallowed\n[S]\n; x\nA = b \n", "[S] x", "[S]\nfoo",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) { checkParse(t, text) })
}

func TestPropConflictsSymmetricReplacesAntisymmetric(t *testing.T) {
	names := []string{"a.service", "b.service", "ab.service", "web@1.service", "web@2.service"}
	globs := []string{"a*", "*.service", "b?.service", "[ab].service", "web@*.service", "[", "ab.service"}
	rapid.Check(t, func(t *rapid.T) {
		gen := func(label string) *XFleet {
			return &XFleet{
				Name:      rapid.SampledFrom(names).Draw(t, label+"Name"),
				Conflicts: rapid.SliceOfN(rapid.SampledFrom(globs), 0, 2).Draw(t, label+"Conflicts"),
				Replaces:  rapid.SliceOfN(rapid.SampledFrom(globs), 0, 2).Draw(t, label+"Replaces"),
			}
		}
		a, b := gen("a"), gen("b")
		if Conflicts(a, b) != Conflicts(b, a) {
			t.Fatalf("Conflicts not symmetric for %+v, %+v", a, b)
		}
		if a.Name == b.Name && Conflicts(a, b) {
			t.Fatalf("a unit conflicts with itself: %+v", a)
		}
		if Replaces(a, b) && Replaces(b, a) {
			t.Fatalf("Replaces both ways for %+v, %+v", a, b)
		}
	})
}

func TestPropMetadataMatches(t *testing.T) {
	key := rapid.SampledFrom([]string{"region", "disk", "role"})
	val := rapid.SampledFrom([]string{"a", "b", "c"})
	rapid.Check(t, func(t *rapid.T) {
		machine := rapid.MapOf(key, val).Draw(t, "machine")
		// A requirement whose every key the machine has, each allowing the machine's value
		// among others, matches.
		req := Metadata{}
		for k, v := range machine {
			if rapid.Bool().Draw(t, "use") {
				req[k] = rapid.Permutation([]string{v, val.Draw(t, "other")}).Draw(t, "values")
			}
		}
		if !req.Matches(machine) {
			t.Fatalf("%v should match %v", req, machine)
		}
		// Adding a key the machine lacks, or a key whose values exclude the machine's, fails.
		k := key.Draw(t, "extra")
		allowed := val.Draw(t, "allowed")
		if v, ok := machine[k]; ok && v == allowed {
			return
		}
		req[k] = []string{allowed}
		if req.Matches(machine) {
			t.Fatalf("%v should not match %v", req, machine)
		}
	})
}

func TestPropSplitMultiValueQuoted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		items := rapid.SliceOfN(rapid.StringOfN(rapid.SampledFrom([]rune("ab= %@.\t")), 1, 6, -1), 1, 4).Draw(t, "items")
		v := `"` + strings.Join(items, `" "`) + `"`
		if got := SplitMultiValue(v); !cmp.Equal(got, items) {
			t.Fatalf("SplitMultiValue(%q) = %q, want %q", v, got, items)
		}
	})
}

func TestPropNames(t *testing.T) {
	stemRunes := rapid.SampledFrom([]rune("abZ09:_.-"))
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.StringOfN(stemRunes, 1, 10, -1).Draw(t, "prefix")
		instance := rapid.StringOfN(rapid.SampledFrom([]rune("abZ09:_.@-")), 1, 10, -1).Draw(t, "instance")
		typ := rapid.SampledFrom(TemplateUnitTypes()).Draw(t, "type")
		tmpl := prefix + "@." + typ
		if err := ValidateName(tmpl); err != nil || !IsTemplate(tmpl) || IsInstance(tmpl) {
			t.Fatalf("template %q: ValidateName = %v, IsTemplate = %v", tmpl, err, IsTemplate(tmpl))
		}
		inst, ok := Instantiate(tmpl, instance)
		if !ok {
			t.Fatalf("Instantiate(%q, %q) failed", tmpl, instance)
		}
		if err := ValidateName(inst); err != nil || !IsInstance(inst) || IsTemplate(inst) {
			t.Fatalf("instance %q: ValidateName = %v, IsInstance = %v", inst, err, IsInstance(inst))
		}
		if got, ok := TemplateOf(inst); !ok || got != tmpl {
			t.Fatalf("TemplateOf(%q) = %q, %v, want %q", inst, got, ok, tmpl)
		}
		ni := SplitName(inst)
		if ni.Prefix != prefix || ni.Instance != instance || ni.Suffix != typ || ni.Name+"."+ni.Suffix != inst {
			t.Fatalf("SplitName(%q) = %+v", inst, ni)
		}
		if got := ExpandSpecifiers("%n %N %p %i", inst); got != inst+" "+ni.Name+" "+prefix+" "+instance {
			t.Fatalf("ExpandSpecifiers for %q = %q", inst, got)
		}
	})
}
