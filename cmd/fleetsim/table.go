package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// defaultWidth is the width text output fits when stdout is not a terminal and COLUMNS is
// not set.
const defaultWidth = 120

// outputWidth is the width text output must fit: the terminal's, else $COLUMNS, else
// defaultWidth; 0 (no limit) with --wide.
func outputWidth(w io.Writer, wide bool) int {
	if wide {
		return 0
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if cols, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && cols > 0 {
		return cols
	}
	return defaultWidth
}

// column describes one column of a table: minimum is how narrow it may be cut (0: never).
type column struct {
	minimum int
}

// table prints rows as aligned columns, two spaces apart, after a two-space indent. When
// width > 0 and the rows are wider, the shrinkable columns are cut, left to right, down to
// their minimum, and cut cells end in "...".
func table(w io.Writer, width int, cols []column, rows [][]string) {
	const indent, gap = 2, 2
	widths := make([]int, len(cols))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if width > 0 {
		total := indent + gap*(len(cols)-1)
		for _, n := range widths {
			total += n
		}
		// The widest shrinkable column gives way first, a character at a time, so the
		// width left is shared: a long detail does not leave a subject at its minimum.
		for total > width {
			widest := -1
			for i, c := range cols {
				if c.minimum > 0 && widths[i] > c.minimum && (widest < 0 || widths[i] > widths[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			widths[widest]--
			total--
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		b.WriteString(strings.Repeat(" ", indent))
		for i, c := range r {
			c = truncate(c, widths[i])
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+gap))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// truncate cuts s to n runes, ending in "..." when it cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 3 {
		return string([]rune(s)[:n])
	}
	return string([]rune(s)[:n-3]) + "..."
}

// wrap breaks s into lines of at most width runes (0: no limit) at spaces, each line after
// the first indented by indent spaces (the first is indented by the caller). A word longer
// than a line is cut.
func wrap(s string, width, indent int) string {
	room := width - indent
	if width <= 0 || room < 20 || utf8.RuneCountInString(s) <= room {
		return s
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > room {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			r := []rune(word)
			lines, word = append(lines, string(r[:room])), string(r[room:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= room:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"+strings.Repeat(" ", indent))
}

// human rounds a duration as the report writes it (time.Duration.String) to the
// millisecond for people: 24m1.100000001s → 24m1.1s. JSON keeps the full precision.
func human(d string) string {
	v, err := time.ParseDuration(d)
	if err != nil {
		return d
	}
	return v.Round(time.Millisecond).String()
}
