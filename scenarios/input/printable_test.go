package input

import "testing"

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"PASS: 3 runs\n", "PASS: 3 runs\n"},
		{"col\tumn", "col\tumn"},
		{"\x1b[2J\x1b]0;pwned\x07FAIL", `\x1b[2J\x1b]0;pwned\aFAIL`},
		{"over\rwrite", `over\rwrite`},
		{"bad \xff byte", `bad \xff byte`},
		{"kept \uFFFD as written", "kept \uFFFD as written"},
		{"bidi \u202e trick", `bidi \u202e trick`},
		{"ünïcode ✓", "ünïcode ✓"},
	} {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
