package main

import (
	"strings"
	"testing"
)

// TestEndlessInputRefused: every command that reads a user's file reads it through the
// bounded reader, so /dev/zero (an input that never ends) is refused with exit 2 and a
// message naming it, instead of being read until memory runs out.
func TestEndlessInputRefused(t *testing.T) {
	const want = "/dev/zero: larger than 64 MiB, the most fleetsim reads from such a file"
	for _, args := range [][]string{
		{"run", "/dev/zero"},
		{"validate", "/dev/zero"},
		{"fuzz", "/dev/zero", "--runs", "1"},
		{"fuzz", "merge", "/dev/zero"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := run(t, args...)
			if code != exitInvalid || !strings.Contains(errOut, want) {
				t.Errorf("fleetsim %v = exit %d, want %d and %q\nstdout: %s\nstderr: %s", args, code, exitInvalid, want, out, errOut)
			}
		})
	}
}
