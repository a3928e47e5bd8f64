// Command kubectl-fleet is a kubectl plugin (`kubectl fleet ...`) for the operations a fleet's
// administrator runs against the hub: approve a stage of a staged update run, drain a member
// (taint it and evict every placement from it) and uncordon it, and ask why a placement did
// or did not pick a cluster.
//
// Exit codes: 0 done; 1 an operation failed (the message says which); 2 bad usage.
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

// usageError marks an error as the user's: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(execute(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "kubectl-fleet:", err)
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitInvalid
	}
	return exitFailed
}
