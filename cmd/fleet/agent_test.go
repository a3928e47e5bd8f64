package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMetadata(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		bad  bool
	}{
		{in: "", want: map[string]string{}},
		{in: "region=eu-west, disk=ssd", want: map[string]string{"region": "eu-west", "disk": "ssd"}},
		{in: "a.b_c-d=", want: map[string]string{"a.b_c-d": ""}},
		{in: "novalue", bad: true},
		{in: "bad key=v", bad: true},
		{in: "=v", bad: true},
	} {
		got, err := parseMetadata(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("parseMetadata(%q) error %v, want error %v", tc.in, err, tc.bad)
			continue
		}
		if diff := cmp.Diff(tc.want, got); !tc.bad && diff != "" {
			t.Errorf("parseMetadata(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestAgentRejectsBadFlags: bad flags exit 2 before anything connects.
func TestAgentRejectsBadFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "machine-id")
	for _, args := range [][]string{
		{"agent", "--log-format", "xml", "--machine-id", "m"},
		{"agent", "--metadata", "bad key=v", "--machine-id", "m"},
		{"agent", "--machine-id-file", missing},
		{"agent", "--machine-id", "a/b"},
		{"agent", "--machine-id", "m", "--interval", "0s"},
		{"agent", "--no-such-flag"},
	} {
		if code := execute(context.Background(), args, io.Discard, io.Discard); code != exitInvalid {
			t.Errorf("fleet %v: exit %d, want %d", args, code, exitInvalid)
		}
	}
}
