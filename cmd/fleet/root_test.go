package main

import (
	"context"
	"strings"
	"testing"
)

func TestHelpVersionAndCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"hub", "Exit codes:", "2  bad flags or configuration"}},
		{[]string{"hub", "--help"}, []string{"--kubeconfig", "--leader-elect", "--health-probe-bind-address", "--metrics-bind-address", "Examples:"}},
		{[]string{"version"}, []string{"fleet "}},
		{[]string{"completion", "bash"}, []string{"__start_fleet"}},
	} {
		var out syncBuffer
		if code := execute(context.Background(), tc.args, &out, &out); code != exitOK {
			t.Errorf("fleet %v = %d, want %d; output:\n%s", tc.args, code, exitOK, out.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("fleet %v output lacks %q:\n%s", tc.args, w, out.String())
			}
		}
	}
}
