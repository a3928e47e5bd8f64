package unitfile

// What systemd reads: the agent writes a unit's canonical text ([Serialize]) for the real
// systemd, whose line rules differ from fleet's. The checks here find the names and values
// that systemd would read otherwise than fleet does, so [Parse] and [File.Validate] refuse
// them and what the API shows is what systemd runs.
//
// systemd's rules (systemd.syntax(7), "General syntax of systemd configuration files", and
// its configuration parser):
//
//   - a line ends at "\n", "\r" or a NUL byte;
//   - a line whose first character after spaces and tabs is '#' or ';' is a comment and is
//     skipped, also inside a continuation: the value then continues with the line after it;
//   - a line continues onto the next one only if it ends in an unescaped backslash (an odd
//     run of backslashes: "\\" is an escaped backslash and ends the line); the backslash is
//     replaced by a space and the next line appended;
//   - a section header must not hold control characters, quotes or backslashes, and a line
//     must be valid UTF-8, or the unit file fails to load.
//
// A continued value is read as its lines joined, each trailing backslash replaced by a
// space: "a \\\n  b" is read as "a    b". That is the same value, written on two lines.

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// systemdBlank is what systemd skips before a comment's '#' or ';' (its WHITESPACE; "\n"
// and "\r" never occur inside a line it reads).
const systemdBlank = " \t"

// lineBreakProblem reports a character of s that systemd reads as the end of a line, or an
// encoding systemd refuses; "" if there is none.
func lineBreakProblem(s string) string {
	switch {
	case strings.ContainsRune(s, '\r'):
		return `holds a carriage return ("\r"), which systemd reads as the end of a line`
	case strings.ContainsRune(s, 0):
		return "holds a NUL byte, which systemd reads as the end of a line"
	case !utf8.ValidString(s):
		return "is not valid UTF-8, which systemd refuses"
	}
	return ""
}

// nameProblem says why systemd would not read option name n as fleet does, or "".
func nameProblem(n string) string { return lineBreakProblem(n) }

// sectionProblem says why systemd would not read the header of section s as fleet does,
// or "": besides line breaks, systemd refuses a header with control characters, quotes or
// backslashes (the whole unit file then fails to load).
func sectionProblem(s string) string {
	if p := lineBreakProblem(s); p != "" {
		return p
	}
	for _, r := range s {
		switch {
		case r < ' ' || r == 0x7f:
			return fmt.Sprintf("holds the control character %q, which systemd refuses in a section header", r)
		case strings.ContainsRune(`"'\`, r):
			return fmt.Sprintf("holds %q, which systemd refuses in a section header", r)
		}
	}
	return ""
}

// valueProblem says why systemd would read value v (trimmed, its lines separated by "\n")
// otherwise than fleet does: the 0-based index of the offending line of v and the reason,
// or -1 and "". It does not repeat fleet's own rules ([File.Validate] checks those): a line
// followed by another must end in a backslash for fleet, and such a backslash is assumed.
func valueProblem(v string) (int, string) {
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		if p := lineBreakProblem(l); p != "" {
			return i, p
		}
		if i > 0 {
			if t := strings.TrimLeft(l, systemdBlank); t != "" && (t[0] == '#' || t[0] == ';') {
				return i, fmt.Sprintf("starts with %q: inside a continued value systemd skips it as a comment and continues the value with the line after it", t[0])
			}
		}
		run := len(l) - len(strings.TrimRight(l, `\`))
		last := i == len(lines)-1
		switch {
		case !last && run > 0 && run%2 == 0:
			return i, `ends in an escaped backslash ("\\"), where systemd ends the option: it would read the next line as a directive of its own`
		case last && run%2 == 1:
			return i, `ends in an unescaped backslash: systemd would take it for a line continuation, drop it and append the next line of the file to the value`
		}
	}
	return -1, ""
}
