// Command fleet runs fleetsim's production components. `fleet hub` is the hub controller
// manager for a Kubernetes API server that serves the KubeFleet CRDs of config/crd.
//
// Exit codes: 0 stopped cleanly (SIGTERM or SIGINT); 1 the manager failed while running;
// 2 bad flags or configuration (the message says which).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const (
	exitOK      = 0
	exitFailed  = 1
	exitInvalid = 2
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(execute(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line until ctx ends and returns the exit code; tests call it.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "fleet:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitInvalid // cobra's own errors: unknown flags, wrong argument counts
}
