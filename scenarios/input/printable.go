package input

import (
	"strconv"
	"strings"
	"unicode"
)

// Printable returns s safe to print on a terminal: control characters (escape sequences,
// carriage returns, bells) and invalid UTF-8 are written as Go escapes (\x1b, \r), so text
// read from a file can never move the cursor, recolour or retitle a user's terminal.
// Newlines and tabs are kept.
func Printable(s string) string {
	if !needsQuoting(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == unicode.ReplacementChar && !validAt(s, i):
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsQuoting(s string) bool {
	for i, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.IsControl(r) || (r == unicode.ReplacementChar && !validAt(s, i)) || r == '\u2028' || r == '\u2029' || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return true
		}
	}
	return false
}

// validAt reports whether the U+FFFD at byte i of s is written out in s (not a bad byte).
func validAt(s string, i int) bool {
	return strings.HasPrefix(s[i:], "\uFFFD")
}
