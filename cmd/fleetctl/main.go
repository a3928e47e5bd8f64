// Command fleetctl drives a fleetsim hub's units and machines through the fleet API v1, as
// CoreOS fleet's fleetctl does with its API driver.
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// execute runs fleetctl with args and returns its exit code: 0 success, 1 an operation
// failed, 2 bad usage.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "Error:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
