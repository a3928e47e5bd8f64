package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHubRetriesUnreachableAPIServer: against an address where nothing listens, the hub
// writes one line per try with the wait before the next, then exits 1 with one line saying
// why, and no stack traces.
func TestHubRetriesUnreachableAPIServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	err = os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://`+addr+`"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	args := []string{"hub", "--kubeconfig", kubeconfig, "--leader-elect=false", "--api-server-wait", "4s",
		"--health-probe-bind-address", "0", "--metrics-bind-address", "0"}
	if code := execute(context.Background(), args, &out, &out); code != exitFailed {
		t.Fatalf("fleet %v = %d, want %d; output:\n%s", args, code, exitFailed, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 || len(lines) > 5 {
		t.Errorf("fleet hub wrote %d lines, want one per try (3) and the last: \n%s", len(lines), out.String())
	}
	for i, want := range []string{"(try 1)", "retrying in 1s", "(try 2)", "retrying in 2s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q (#%d):\n%s", want, i, out.String())
		}
	}
	if !strings.Contains(lines[len(lines)-1], "giving up") {
		t.Errorf("last line = %q, want it to say the hub gives up", lines[len(lines)-1])
	}
	if strings.Contains(out.String(), "goroutine ") {
		t.Errorf("output holds a stack trace:\n%s", out.String())
	}
}
