package unitfile

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
)

// Serialize returns the canonical text of f, the form fleet hashes, stores and writes to
// disk (CoreOS fleet's unit files, "Canonical form and hash"): for each section, in order,
// "[Name]\n" followed by one "Name=Value\n" line per option, with one blank line between
// sections. Same-named sections are merged (in the order of their first option) and empty
// sections are skipped, so the result depends only on f's option list. Serialize(nil) and
// the serialization of a File without options are "".
//
// Serialize writes values verbatim. Not every File survives Parse(Serialize(f)) unchanged
// (for example a value holding a bare newline, or ending in '\' when another option
// follows); [File.Validate] reports those.
func Serialize(f *File) string {
	var sb strings.Builder
	for i, s := range f.canonical().Sections {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteByte('[')
		sb.WriteString(s.Name)
		sb.WriteString("]\n")
		for _, o := range s.Options {
			sb.WriteString(o.Name)
			sb.WriteByte('=')
			sb.WriteString(o.Value)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// Hash is the SHA1 identity of a unit file's contents.
type Hash [sha1.Size]byte

// Hash returns the SHA1 of [Serialize](f). Comments, whitespace, and how options were
// spread over repeated sections do not change it.
func (f *File) Hash() Hash {
	return sha1.Sum([]byte(Serialize(f)))
}

// String returns the 40 lowercase hex digits of h.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Short returns the first 7 hex digits of h, the short form fleetctl displays.
func (h Hash) Short() string { return h.String()[:7] }

// IsZero reports whether h is the zero value (no hash), which is not the hash of any file.
func (h Hash) IsZero() bool { return h == Hash{} }

// ParseHash parses 40 hex digits (either case) into a Hash.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*len(h) {
		return Hash{}, fmt.Errorf("unit hash %q: want %d hex digits, got %d characters", s, 2*len(h), len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, fmt.Errorf("unit hash %q: %v", s, err)
	}
	return h, nil
}

// Validate reports whether f survives serialization: it returns nil exactly when
// Parse(Serialize(f)) succeeds and gives back f (with same-named sections merged and empty
// sections dropped). This covers the line-length limit that fleet's API enforced by
// re-serializing and re-parsing, and also rejects names and values that would re-parse
// differently. A too-long line matches [ErrLineTooLong] with errors.Is.
//
// Since [Parse] refuses them, Validate also rejects what systemd would read otherwise
// than fleet when the agent writes Serialize(f) (see systemd.go): a value line ending in an
// escaped backslash (systemd ends the option there), a continued line starting with '#' or
// ';' (a comment to systemd, skipped), a value ending in a lone backslash, a carriage return
// or NUL byte, invalid UTF-8, and section names systemd refuses. Upstream fleet accepts them.
// The error names the section and option.
func (f *File) Validate() error {
	for _, s := range f.canonical().Sections {
		if i := strings.IndexAny(s.Name, "]\n"); i >= 0 {
			return fmt.Errorf("section %q: name must not contain %q", s.Name, s.Name[i])
		}
		if p := sectionProblem(s.Name); p != "" {
			return fmt.Errorf("section %q: name %s", s.Name, p)
		}
		if n := len(s.Name) + 2; n > LineMax {
			return fmt.Errorf("section %q: %w: header is %d bytes, limit %d", s.Name, ErrLineTooLong, n, LineMax)
		}
		for j, o := range s.Options {
			last := j == len(s.Options)-1
			if err := validateOption(o, last); err != nil {
				return fmt.Errorf("section %q: option %q: %w", s.Name, o.Name, err)
			}
		}
	}
	return nil
}

// validateOption checks that "Name=Value\n" re-parses as o. last tells whether o is the
// last line of its section (followed by a blank line or the end of the text).
func validateOption(o Option, last bool) error {
	switch {
	case o.Name != strings.TrimSpace(o.Name):
		return fmt.Errorf("name has surrounding whitespace")
	case strings.ContainsAny(o.Name, "=\n"):
		return fmt.Errorf("name must not contain %q or a newline", "=")
	case o.Name != "" && strings.ContainsRune("[#;", rune(o.Name[0])):
		return fmt.Errorf("name must not start with %q", o.Name[0])
	case o.Value != strings.TrimSpace(o.Value):
		return fmt.Errorf("value has surrounding whitespace")
	}
	if p := nameProblem(o.Name); p != "" {
		return fmt.Errorf("name %s", p)
	}
	// A continuation line cannot be blank here: every line but the last ends in '\', and
	// the last has no trailing whitespace.
	lines := strings.Split(o.Value, "\n")
	for i, l := range lines {
		n := len(l)
		if i == 0 {
			n += len(o.Name) + 1
		}
		if n > LineMax {
			return fmt.Errorf("%w: value line %d is %d bytes, limit %d", ErrLineTooLong, i+1, n, LineMax)
		}
		if i < len(lines)-1 && !strings.HasSuffix(l, `\`) {
			return fmt.Errorf("value line %d is followed by a newline without a trailing backslash", i+1)
		}
	}
	if i, p := valueProblem(o.Value); i >= 0 {
		return fmt.Errorf("value line %d %s", i+1, p)
	}
	if !last && strings.HasSuffix(o.Value, `\`) {
		return fmt.Errorf(`value ends in "\" and would swallow the next option`)
	}
	return nil
}
