package unitfile

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// LineMax is the longest physical line, in bytes and not counting its newline, that
// [Parse] accepts (systemd's LINE_MAX as used by fleet).
const LineMax = 2048

// ErrLineTooLong is matched (with errors.Is) by the [*ParseError] for a line longer than
// [LineMax] bytes.
var ErrLineTooLong = errors.New("line too long")

// The reasons fleet's unit-file parser gives, word for word.
const (
	reasonGarbage      = "found garbage after section name"
	reasonNewlineInOpt = "unexpected newline encountered while parsing option name"
)

// ParseError is a syntax error in unit file text. Line is 1-based and counts physical
// lines ("\n"-separated).
type ParseError struct {
	Line   int
	Reason string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// Is reports whether e is an instance of target; a too-long line matches [ErrLineTooLong].
func (e *ParseError) Is(target error) bool {
	return target == ErrLineTooLong && strings.HasPrefix(e.Reason, ErrLineTooLong.Error())
}

// Parse parses unit file text into a canonical [File].
//
// The rules (CoreOS fleet's unit files, "Parser"):
//
//   - Lines are separated by "\n". Whitespace means unicode.IsSpace, so a "\r" before the
//     newline is trailing whitespace.
//   - Any line longer than [LineMax] bytes is an error, wherever it is.
//   - A line whose first non-space character is '#' or ';' is a comment. There are no
//     inline comments. A comment line ending in '\' also swallows the next line (and so on,
//     while the swallowed lines end in '\').
//   - Before the first section, text is skipped up to the first '[' (outside comment
//     lines); it is never an error.
//   - A line whose first non-space character is '[' starts a section. The name is
//     everything up to the first ']' on the line, untrimmed. Non-space text after the ']'
//     is an error ("found garbage after section name"), as is a line without ']'.
//   - Any other non-blank line is an option. Its name is the text before the first '=',
//     trimmed; a line without '=' is an error ("unexpected newline encountered while
//     parsing option name", or "unexpected end of file ..." on a last line without
//     newline).
//   - If a physical line's last character is '\', the value continues on the next line: the
//     backslash is kept and a "\n" is inserted. A blank line ends the value. The value is
//     then trimmed.
//   - Duplicate options are kept in order. Repeated sections are merged, in the order of
//     their first option; sections without options are dropped (they do not exist in the
//     option list that fleet stores and hashes).
//
// Stricter than fleet: Parse refuses, with the line, names and values that systemd would
// read otherwise once the agent writes the file (systemd.go): a continued value line that
// ends in an escaped backslash ("\\") or starts with '#' or ';', a value ending in a lone
// backslash (before a blank line or the end of the text), a carriage return inside a name or
// value, a NUL byte, invalid UTF-8, and section names with control characters, quotes or
// backslashes.
func Parse(text string) (*File, error) {
	p := parser{lines: strings.Split(text, "\n")}
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.b.file(), nil
}

type parser struct {
	lines []string
	next  int // index of the next unread line
	b     builder
}

// read returns the next physical line and its 1-based number, enforcing the line limit.
func (p *parser) read() (string, int, error) {
	line := p.lines[p.next]
	p.next++
	if len(line) > LineMax {
		return "", p.next, &ParseError{Line: p.next, Reason: fmt.Sprintf("%s: %d bytes, limit %d", ErrLineTooLong, len(line), LineMax)}
	}
	return line, p.next, nil
}

func (p *parser) more() bool { return p.next < len(p.lines) }

func (p *parser) run() error {
	var section string
	inSection := false
	for p.more() {
		line, num, err := p.read()
		if err != nil {
			return err
		}
		rest := strings.TrimLeftFunc(line, unicode.IsSpace)
		if rest == "" {
			continue
		}
		if rest[0] == '#' || rest[0] == ';' {
			if err := p.continuation(line, nil); err != nil {
				return err
			}
			continue
		}
		if !inSection {
			i := strings.IndexByte(line, '[')
			if i < 0 {
				continue
			}
			rest = line[i:]
		}
		if rest[0] == '[' {
			name, err := sectionName(rest, num)
			if err != nil {
				return err
			}
			if p := sectionProblem(name); p != "" {
				return &ParseError{Line: num, Reason: fmt.Sprintf("section name %q %s", name, p)}
			}
			section, inSection = name, true
			continue
		}
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			reason := reasonNewlineInOpt
			if !p.more() {
				reason = "unexpected end of file encountered while parsing option name"
			}
			return &ParseError{Line: num, Reason: reason}
		}
		var value strings.Builder
		value.WriteString(rest[eq+1:])
		if err := p.continuation(line, &value); err != nil {
			return err
		}
		name, v := strings.TrimSpace(rest[:eq]), strings.TrimSpace(value.String())
		if r := nameProblem(name); r != "" {
			return &ParseError{Line: num, Reason: fmt.Sprintf("option name %q %s", name, r)}
		}
		if i, r := valueProblem(v); i >= 0 {
			// Trimming removes no line of a value: its first line holds "=", and
			// continuation stops at a blank line.
			return &ParseError{Line: num + i, Reason: fmt.Sprintf("value of %s %s", name, r)}
		}
		p.b.add(section, name, v)
	}
	return nil
}

// continuation follows trailing-backslash continuations after line. Continued lines are
// appended to value (after a "\n") unless value is nil. A blank line ends the run.
func (p *parser) continuation(line string, value *strings.Builder) error {
	for strings.HasSuffix(line, `\`) && p.more() {
		next, _, err := p.read()
		if err != nil {
			return err
		}
		if isBlank(next) {
			return nil
		}
		if value != nil {
			value.WriteByte('\n')
			value.WriteString(next)
		}
		line = next
	}
	return nil
}

// sectionName parses "[name]" at the start of rest, which is line num.
func sectionName(rest string, num int) (string, error) {
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return "", &ParseError{Line: num, Reason: `missing "]" after section name`}
	}
	if !isBlank(rest[end+1:]) {
		return "", &ParseError{Line: num, Reason: reasonGarbage}
	}
	return rest[1:end], nil
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
